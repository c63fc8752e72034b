"""Two `scholargraph index` processes on one PostgreSQL database finish a corpus together: every
document processed once, no chunk missing, none duplicated (issue 12, item 3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import psycopg
import pytest

from scholargraph.testing.canned import default_rules
from scholargraph.testing.llm_script import Rule

WAIT = 400  # seconds: a process start can take minutes on a machine loaded by parallel test suites
TOPICS = ["graph retrieval", "contrastive learning", "protein folding", "entity resolution", "citation networks",
          "question answering"]


def write_corpus(folder, n: int) -> list[str]:
    folder.mkdir()
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        (folder / f"paper{i:02d}.md").write_text(
            f"# Study {i} of {topic}\n\n## Introduction\nWe study {topic} with Method{i} and Dataset{i % 5}. "
            f"Method{i} improves on BERT for {topic} (experiment {i}).\n")
    return [f"paper{i:02d}.md" for i in range(n)]


def index_process(corpus, workdir, dsn: str, server_url: str) -> subprocess.Popen:
    env = {**os.environ, "SCHOLARGRAPH_EMBEDDINGS__PROVIDER": "openai", "SCHOLARGRAPH_EMBEDDINGS__BASE_URL": server_url,
           "SCHOLARGRAPH_EMBEDDINGS__MODEL": "scripted-embed", "SCHOLARGRAPH_EMBEDDINGS__DIMENSION": "384",
           "SCHOLARGRAPH_MAX_PARALLEL_DOCUMENTS": "3",  # small claims: the work is shared, not grabbed at once
           "SCHOLARGRAPH_LLM__TIMEOUT": str(2 * WAIT)}  # a call held at the gate waits, it does not time out
    return subprocess.Popen(
        [sys.executable, "-m", "scholargraph.cli", "index", str(corpus), "-w", str(workdir), "--db", dsn, "--json",
         "--profile", "academic", "--llm-url", server_url, "--llm-model", "scripted-model", "--llm-concurrency", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def gated(rules: list[Rule], gate: threading.Event) -> list[Rule]:
    """The same replies, held until ``gate`` opens (both workers hold claims: neither can finish alone)."""
    def hold(respond):
        def reply(request):
            gate.wait(WAIT)
            return respond(request) if callable(respond) else respond
        return reply

    return [Rule(r.kind, r.pattern, hold(r.respond)) for r in rules]


def open_when_both_claimed(dsn: str, gate: threading.Event) -> None:
    """Open the gate once each worker holds a claim (whatever the machine's speed, both get work)."""
    deadline = time.monotonic() + WAIT
    with psycopg.connect(dsn, autocommit=True) as conn:
        while time.monotonic() < deadline and not gate.is_set():
            try:
                n = conn.execute("SELECT count(DISTINCT claimed_by) FROM documents").fetchone()[0]
            except psycopg.errors.UndefinedTable:  # the first worker has not made the schema yet
                n = 0
            if n == 2:
                break
            time.sleep(0.05)
    gate.set()


@pytest.mark.slow
@pytest.mark.timeout(2 * WAIT)
def test_two_index_processes_share_one_database(tmp_path, pg_dsn, llm_server):
    gate = threading.Event()
    server = llm_server(rules=gated(default_rules(), gate), latency=0.2)
    write_corpus(tmp_path / "papers", 24)
    dsn = pg_dsn()
    opener = threading.Thread(target=open_when_both_claimed, args=(dsn, gate), daemon=True)
    opener.start()
    procs = [index_process(tmp_path / "papers", tmp_path / f"worker{n}", dsn, server.base_url) for n in range(2)]
    deadline = time.monotonic() + WAIT + 240
    try:
        outputs = [p.communicate(timeout=max(1.0, deadline - time.monotonic())) for p in procs]
    finally:
        gate.set()
    for proc, (_out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err[-3000:]
    reports = [json.loads(out) for out, _ in outputs]
    done = [set(r["processed"]) for r in reports]
    assert all(done), f"each worker should process some documents: {[len(d) for d in done]}"
    assert not done[0] & done[1] and len(done[0] | done[1]) == 24

    with psycopg.connect(dsn) as conn:
        q = lambda sql: conn.execute(sql).fetchall()  # noqa: E731
        assert q("SELECT status, count(*) FROM documents GROUP BY status") == [("PROCESSED", 24)]
        per_doc = q("SELECT d.id, count(c.id) FROM documents d LEFT JOIN chunks c ON c.document_id = d.id GROUP BY d.id")
        assert all(n == 1 for _, n in per_doc)  # one short section each: one chunk, none missing
        chunks = q("SELECT count(*), count(DISTINCT id), count(DISTINCT (document_id, ordinal)) FROM chunks")[0]
        assert chunks == (24, 24, 24)
        # a document processed twice would have stated its entities twice
        records = q("SELECT count(*), count(DISTINCT (entity_id, chunk_id, name, role)) FROM entity_sources")[0]
        assert records[0] > 0 and records[0] == records[1]
        assert q("SELECT count(*) FROM vectors_chunk")[0][0] == 24
        assert q("SELECT count(*) FROM entities WHERE dirty")[0][0] == 0
