"""Tests that need ../shared/data/dev: skipped on a developer machine without it, failed in CI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from support.dev_data import dev_data_dir

TESTS = Path(__file__).resolve().parents[1]
CONFTEST = TESTS / "conftest.py"

USES_DEV = '''
import pytest

@pytest.mark.shared
def test_marked():
    pass

def test_fixture(dev):
    assert dev.exists()
'''


def _run_suite(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess:
    project = tmp_path / "clone"
    (project / "tests").mkdir(parents=True)
    shutil.copy(CONFTEST, project / "tests" / "conftest.py")
    (project / "tests" / "support").mkdir()
    for helper in ("__init__.py", "dev_data.py"):
        shutil.copy(TESTS / "support" / helper, project / "tests" / "support" / helper)
    (project / "tests" / "test_uses_dev.py").write_text(USES_DEV)
    (project / "pytest.ini").write_text("[pytest]\nmarkers =\n    shared: needs ../shared/data/dev\n")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "tests"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=120)


def test_in_ci_a_missing_dev_folder_fails_the_tests_that_need_it(tmp_path: Path) -> None:
    proc = _run_suite(tmp_path, ci="true")
    assert proc.returncode == 1, proc.stdout
    assert "2 errors" in proc.stdout and "../shared/data/dev" in proc.stdout


def test_outside_ci_a_missing_dev_folder_skips_with_the_reason(tmp_path: Path) -> None:
    proc = _run_suite(tmp_path, ci=None)
    assert proc.returncode == 0, proc.stdout
    assert "2 skipped" in proc.stdout and "../shared/data/dev" in proc.stdout


def test_ci_false_is_not_ci(tmp_path: Path) -> None:
    assert _run_suite(tmp_path, ci="false").returncode == 0


def test_a_worktree_finds_the_data_beside_its_main_checkout(tmp_path: Path) -> None:
    main = tmp_path / "main"
    (main / ".git" / "worktrees" / "feature").mkdir(parents=True)
    (tmp_path / "shared" / "data" / "dev").mkdir(parents=True)
    worktree = tmp_path / "wt" / "feature"
    worktree.mkdir(parents=True)
    (worktree / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'feature'}\n")
    assert dev_data_dir(worktree) == tmp_path / "shared" / "data" / "dev"
    assert dev_data_dir(main) == tmp_path / "shared" / "data" / "dev"


def test_a_clone_alone_has_no_dev_data(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    (clone / ".git").mkdir(parents=True)
    found = dev_data_dir(clone)
    assert found == tmp_path / "shared" / "data" / "dev" and not found.exists()
