"""Several processes, one workspace (real subprocesses of the CLI against a scripted LLM server):
a second `index` waits for the first (or stops at once with --no-wait), `status` and `ask` work
while a workspace is being indexed, and a killed indexer leaves nothing locked."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support.canned import default_rules

from scholargraph.errors import WorkspaceBusyError
from scholargraph.testing.llm_server import Rule

pytestmark = pytest.mark.slow
PAPERS = 8

SENTENCES = [
    "Retrieval-Augmented Generation (RAG) grounds Large Language Models in retrieved evidence.",
    "GraphRAG builds a Knowledge Graph over the corpus and summarises its communities.",
    "BERT encoders embed entity descriptions for the SciERC benchmark.",
    "LightRAG retrieves one-hop neighbours of the matched entities.",
]


def corpus(folder: Path, n: int, first: int = 0) -> Path:
    folder.mkdir()
    for i in range(first, first + n):
        body = " ".join(SENTENCES[(i + j) % len(SENTENCES)] for j in range(12))
        (folder / f"paper{i:03d}.txt").write_text(f"Paper number {i}\n\n{body}\n")
    return folder


def cli(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "scholargraph.cli", *map(str, args)]


def environment(server) -> dict[str, str]:
    return {**os.environ, "SCHOLARGRAPH_LLM__BASE_URL": server.base_url, "SCHOLARGRAPH_LLM__MODEL": "scripted-model",
            "SCHOLARGRAPH_LLM__MAX_CONCURRENCY": "2", "SCHOLARGRAPH_MAX_PARALLEL_DOCUMENTS": "2",
            "SCHOLARGRAPH_EMBEDDINGS__PROVIDER": "openai", "SCHOLARGRAPH_EMBEDDINGS__BASE_URL": server.base_url,
            "SCHOLARGRAPH_EMBEDDINGS__MODEL": "scripted-embed", "SCHOLARGRAPH_EMBEDDINGS__DIMENSION": "384"}


def start_index(folder: Path, workdir: Path, env: dict[str, str], *flags: str) -> subprocess.Popen:
    return subprocess.Popen(cli("index", folder, "-w", workdir, "--profile", "academic", "--json", *flags), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_until(condition, proc: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert proc.poll() is None, f"the indexer ended early: {proc.communicate()}"
        assert time.monotonic() < deadline, "timed out waiting for the indexer"
        time.sleep(0.1)


def statuses(workdir: Path, env: dict[str, str]) -> dict[str, str]:
    out = subprocess.run(cli("status", "-w", workdir, "--json"), env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return {row["source_path"].rsplit("/", 1)[-1]: row["status"] for row in json.loads(out.stdout)["documents"]}


def indexing(workdir: Path) -> bool:
    lock = workdir / "index.lock"
    return lock.exists() and lock.read_text().startswith("process")


class Gate:
    """Holds extraction calls after the first ``free`` ones until opened, so an indexing run lasts exactly
    as long as a test needs it to (no race against the machine's speed)."""

    def __init__(self, free: int):
        self.free = free
        self.calls = 0
        self.lock = threading.Lock()
        self.opened = threading.Event()

    def rules(self) -> list[Rule]:
        return [Rule(r.kind, r.pattern, self._held(r.respond)) if r.kind in ("extract", "glean") else r
                for r in default_rules()]

    def _held(self, respond):
        def reply(request):
            with self.lock:
                self.calls += 1
                held = self.calls > self.free
            if held:
                self.opened.wait(240)
            return respond(request) if callable(respond) else respond

        return reply


def read_until(stream, text: str) -> str:
    seen = ""
    while text not in seen:
        line = stream.readline()
        assert line, f"stream ended without {text!r}: {seen!r}"
        seen += line
    return seen


@pytest.fixture
def gate():
    held = Gate(free=4)  # two papers (extraction + gleaning each), then a run holds until the test opens it
    yield held
    held.opened.set()  # whatever happened, no server thread stays held


def test_a_second_index_waits_and_others_read_meanwhile(llm_server, tmp_path, gate):
    env = environment(llm_server(rules=gate.rules()))
    workdir = tmp_path / "ws"
    first = start_index(corpus(tmp_path / "a", PAPERS), workdir, env)
    wait_until(lambda: indexing(workdir) and "PROCESSED" in statuses(workdir, env).values(), first)
    second = start_index(corpus(tmp_path / "b", 3, first=100), workdir, env)
    waiting = read_until(second.stderr, "waiting for it to finish")
    # while the first indexes (and the second waits): status and ask work, from other processes
    during = statuses(workdir, env)
    answer = subprocess.run(cli("ask", "What does GraphRAG build?", "-w", workdir, "--json"), env=env,
                            capture_output=True, text=True, timeout=120)
    assert first.poll() is None and second.poll() is None
    gate.opened.set()
    assert f"process {first.pid}" in waiting
    assert "PROCESSED" in during.values() and len(during) == PAPERS  # the second has registered nothing yet
    assert answer.returncode == 0, answer.stderr
    assert json.loads(answer.stdout)["sources"]
    out_first, _ = first.communicate(timeout=300)
    out_second, err_second = second.communicate(timeout=300)
    assert first.returncode == 0 and second.returncode == 0, err_second
    assert len(json.loads(out_first)["processed"]) == PAPERS and len(json.loads(out_second)["processed"]) == 3
    final = statuses(workdir, env)
    assert len(final) == PAPERS + 3 and set(final.values()) == {"PROCESSED"}


def test_no_wait_refuses_and_a_killed_indexer_leaves_nothing_locked(llm_server, tmp_path, gate):
    env = environment(llm_server(rules=gate.rules()))
    workdir = tmp_path / "ws"
    papers = corpus(tmp_path / "a", PAPERS)
    first = start_index(papers, workdir, env)
    wait_until(lambda: indexing(workdir), first)
    refused = subprocess.run(cli("index", corpus(tmp_path / "b", 2, first=100), "-w", workdir, "--json", "--no-wait"),
                             env=env, capture_output=True, text=True, timeout=120)
    assert refused.returncode == WorkspaceBusyError.exit_code
    error = json.loads(refused.stdout)
    assert error["type"] == "WorkspaceBusyError" and f"process {first.pid}" in error["error"]
    wait_until(lambda: "PROCESSED" in statuses(workdir, env).values(), first)
    first.send_signal(signal.SIGKILL)  # mid-run: its other papers are held at the gate
    first.wait()
    gate.opened.set()
    after_kill = statuses(workdir, env)
    assert set(after_kill.values()) > {"PROCESSED"}  # some done, some left PROCESSING/PENDING
    assert not any(name.startswith("paper1") for name in after_kill)  # the refused run registered nothing
    rerun = start_index(papers, workdir, env, "--no-wait")  # the dead process's lock is gone
    out, err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, err
    assert set(statuses(workdir, env).values()) == {"PROCESSED"} and len(statuses(workdir, env)) == PAPERS
