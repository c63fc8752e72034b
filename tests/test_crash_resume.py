"""kill -9 during indexing, then rerun: every document indexed once, no duplicated or missing chunks."""

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.slow

N_DOCS = 40


SENTENCES = [
    "Graph neural networks learn node embeddings from the citation graph.",
    "BERT encoders are fine-tuned on the SciERC dataset for entity recognition.",
    "Retrieval-augmented generation grounds large language models in retrieved passages.",
    "The knowledge graph links genes such as IL1B to endometriosis.",
    "Contrastive learning improves sentence embeddings on semantic similarity benchmarks.",
    "Subgraph retrieval follows shortest paths between matched entities.",
]


def write_corpus(folder):
    folder.mkdir()
    for i in range(N_DOCS):
        body = " ".join(SENTENCES[(i + j) % len(SENTENCES)] for j in range(90))
        (folder / f"p{i:02d}.txt").write_text(f"Paper number {i}\n\n{body}\n")


def index_cmd(corpus, workdir):
    return [sys.executable, "-m", "scholargraph.cli", "index", str(corpus), "-w", str(workdir), "--profile", "offline",
            "--json", "--chunk-size", "64", "--chunk-overlap", "8"]


def chunks(workdir):
    conn = sqlite3.connect(workdir / "scholargraph.sqlite")
    rows = conn.execute("SELECT document_id, ordinal, id FROM chunks ORDER BY document_id, ordinal").fetchall()
    statuses = dict(conn.execute("SELECT status, COUNT(*) FROM documents GROUP BY status").fetchall())
    vectors = conn.execute("SELECT COUNT(*) FROM vectors WHERE namespace = 'chunk'").fetchone()[0]
    conn.close()
    return rows, statuses, vectors


def processed_count(workdir):
    try:
        conn = sqlite3.connect(workdir / "scholargraph.sqlite", timeout=1)
        n = conn.execute("SELECT COUNT(*) FROM documents WHERE status = 'PROCESSED'").fetchone()[0]
        conn.close()
        return n
    except sqlite3.Error:
        return 0


def test_kill_9_then_rerun_finishes_cleanly(tmp_path):
    corpus = tmp_path / "corpus"
    write_corpus(corpus)
    env = {**os.environ, "SCHOLARGRAPH_MAX_PARALLEL_DOCUMENTS": "2"}
    victim = tmp_path / "victim"
    proc = subprocess.Popen(index_cmd(corpus, victim), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    while processed_count(victim) < 3 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert proc.poll() is None, "indexing finished before it could be killed; make the corpus bigger"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    _, statuses, _ = chunks(victim)
    assert statuses.get("PROCESSED", 0) < N_DOCS

    subprocess.run(index_cmd(corpus, victim), env=env, check=True, capture_output=True, timeout=600)
    clean = tmp_path / "clean"
    subprocess.run(index_cmd(corpus, clean), env=env, check=True, capture_output=True, timeout=600)

    got, got_status, got_vectors = chunks(victim)
    want, _, _ = chunks(clean)
    assert got_status == {"PROCESSED": N_DOCS}
    assert got == want  # same chunks, none duplicated or missing
    assert got_vectors == len(want)
