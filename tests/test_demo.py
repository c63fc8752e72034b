"""`make demo` on a fresh checkout: the bundled corpus, no ../shared, no LLM, cited answers,
then the next commands; and the corpus ships inside the wheel (a plain `pip install` has it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from scholargraph.demo import BUNDLED_QUESTIONS

REPO = Path(__file__).resolve().parents[1]
CORPUS_FILES = {"1471-2180-11-174.nxml", "1472-6831-8-11.nxml", "pntd.0002065.nxml", "pone.0046493.nxml",
                "futureinternet-06-00061.pdf", "medline-cc-by-sample.xml", "SOURCES.md"}


def _checkout(dest: Path) -> Path:
    """What a fresh clone of this working tree holds: tracked files and new files git does not ignore."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs git and a git checkout to copy from")
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True,
                            capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        src = REPO / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def _clean_env(checkout: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHOLARGRAPH_")}
    env["PYTHONPATH"] = str(checkout / "src")
    return env


def _stub_venv(checkout: Path) -> None:
    """The clone's `.venv` as `make install` leaves it, without the download: its `scholargraph` runs
    this interpreter on the clone's own `src/` (so the clone's code and corpus, not the installed ones)."""
    bin_dir = checkout / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").symlink_to(sys.executable)
    code = ("import sys, scholargraph; print('package:', scholargraph.__file__, flush=True); "
            "from scholargraph.cli import main; sys.exit(main(sys.argv[1:]))")
    script = bin_dir / "scholargraph"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "{code}" "$@"\n')
    script.chmod(0o755)
    (checkout / ".venv" / ".installed").touch()  # newer than pyproject.toml: make installs nothing


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_make_demo_runs_in_a_fresh_checkout_without_shared_data(tmp_path: Path) -> None:
    if shutil.which("make") is None:
        pytest.skip("needs make")
    checkout = _checkout(tmp_path / "clone")
    assert not (checkout.parent / "shared").exists() and not (checkout / ".venv").exists()
    _stub_venv(checkout)
    proc = subprocess.run(["make", "demo"], cwd=checkout, env=_clean_env(checkout), capture_output=True,
                          text=True, timeout=1100)
    out = proc.stdout
    assert proc.returncode == 0, (out[-2000:], proc.stderr[-3000:])
    assert "pip install" not in out  # the Makefile's demo target went straight to `scholargraph demo`
    assert f"package: {checkout / 'src'}" in out  # the checkout's code and corpus, not the installed ones
    assert "indexed 10 document(s)" in out and "failed 0" in out
    for question in BUNDLED_QUESTIONS:
        assert f"Q: {question}" in out
    assert out.count("Extractive answer") == len(BUNDLED_QUESTIONS)
    assert "Factors influencing lysis time stochasticity in bacteriophage λ" in out  # sources are listed ...
    assert "Analysis Matrix for Smart Cities · Pablo E. Branchi et al. (2014)" in out  # ... with title, authors, year
    assert "next, try" in out and 'scholargraph ask "your question" -w demo_workspace' in out
    assert (checkout / "demo_workspace").is_dir()


def test_the_bundled_corpus_is_listed_with_its_licences() -> None:
    corpus = REPO / "src" / "scholargraph" / "demo_corpus"
    assert {p.name for p in corpus.iterdir()} == CORPUS_FILES
    sources = (corpus / "SOURCES.md").read_text(encoding="utf-8")
    for name in CORPUS_FILES - {"SOURCES.md"}:
        assert f"`{name}`" in sources
    assert sources.count("CC BY") >= 6


@pytest.mark.slow
def test_the_wheel_carries_the_demo_corpus(tmp_path: Path) -> None:
    checkout = _checkout(tmp_path / "clone")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(tmp_path / "dist"), str(checkout)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    [wheel] = (tmp_path / "dist").glob("scholargraph-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"scholargraph/demo_corpus/{n}" for n in CORPUS_FILES} <= names


def test_next_steps_name_the_program_as_the_reader_runs_it(tmp_path, monkeypatch) -> None:
    """The demo's "next, try" commands work without an activated environment."""
    from scholargraph.config import program_name
    from scholargraph.demo import demo_corpus, next_steps

    venv_bin = tmp_path / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    script = venv_bin / "scholargraph"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # not activated
    assert program_name(str(script)) == ".venv/bin/scholargraph"
    monkeypatch.setenv("PATH", f"{venv_bin}:/usr/bin:/bin")  # activated
    assert program_name(str(script)) == "scholargraph"
    steps = next_steps("demo_workspace", demo_corpus(None, None), False, ".venv/bin/scholargraph")
    assert all(command.startswith(".venv/bin/scholargraph ") for command, _ in steps)
