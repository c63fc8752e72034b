"""Indexing throughput: embedding speed, framework overhead and LLM concurrency.

    .venv/bin/python -m benchmarks.bench_indexing [--papers 500] [--biored 400] [--limits 8,32,128] [--latency 0.5]
        [--repeats 3]

1. Embedding throughput of the default local model on CPU: real 1200-token chunks (ASKG papers)
   and short entity-like texts, chunks/s and texts/s.
2. Framework time per paper with a zero-latency scripted LLM (academic profile, gleaning 1),
   embedding excluded (the scripted server's /embeddings is used, so embedding costs ~0).
The scripted server runs in a child process, like a real LLM server (it must not share the
indexing process's interpreter lock).
3. LLM concurrency with 500 ms scripted latency and limits 8/32/128 on >= 50 papers (default:
   28 full papers + 500 PubMedQA + 400 BioRED abstracts): the time-weighted mean number of
   requests in flight between the first request's start and the last one's end (the server adds
   up each request's time in flight), as % of the limit, and calls/s (the pipeline must overlap
   documents, not only chunks of one document). The timeline (mean in flight in 20 slices of
   the run) shows the ramp-up and the drain at the end: each chunk needs two calls in a row
   (extraction, then gleaning), so the last second of any run cannot keep every slot busy.
   ``steady_pct_of_limit`` is the mean over the middle 18 slices. Each limit runs ``--repeats``
   times (the machine is shared and noisy); the median run is reported, every run's % is kept.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import shutil
import signal
import tempfile
import time
from pathlib import Path

import httpx

from benchmarks.common import machine, require_dev, write_result
from benchmarks.eval_offline_ner import load_biored
from scholargraph import KnowledgeBase
from scholargraph.config import EmbeddingSettings
from scholargraph.ingest.chunking import chunk_document
from scholargraph.ingest.registry import load_file
from scholargraph.ingest.tokenizer import load_tokenizer
from scholargraph.llm.embeddings import LocalEmbedder
from scholargraph.testing.llm_server import ScriptedLLMServer
from tests.support.canned import default_rules


def corpus(dev: Path, n_abstracts: int, n_biored: int = 0) -> list[dict]:
    """Full papers (ASKG, fastbm CSV rows, JATS) plus PubMedQA and BioRED abstracts, as insertable texts."""
    docs = []
    for path in sorted((dev / "askg" / "papers").glob("*.json")) + sorted((dev / "pdfs" / "jats").glob("*.nxml")) + [
            dev / "fastbm" / "demo1.csv", dev / "fastbm" / "demo2.csv"]:
        for d in load_file(path):
            docs.append({"id": d.id, "title": d.title, "text": d.full_text})
    items = json.loads((dev / "pubmedqa" / "pqal_dev.json").read_text())
    for pmid, item in list(items.items())[:n_abstracts]:
        docs.append({"id": f"pmid:{pmid}", "title": item["QUESTION"], "text": "\n\n".join(item["CONTEXTS"])})
    for gold in load_biored(dev / "biored" / "Train.PubTator")[:n_biored]:
        docs.append({"id": f"biored:{gold.doc_id}", "text": gold.text})
    return docs


def bench_embedding(dev: Path) -> dict:
    tok = load_tokenizer()
    chunks = []
    for path in sorted((dev / "askg" / "papers").glob("*.json")):
        chunks += [c.text for c in chunk_document(load_file(path)[0], tok, 1200, 100)]
    embedder = LocalEmbedder(EmbeddingSettings())
    asyncio.run(embedder._embed_uncached(["warm up"]))
    t0 = time.perf_counter()
    asyncio.run(embedder._embed_uncached(chunks))
    chunk_s = time.perf_counter() - t0
    short = [f"entity number {i}: a method for graph retrieval of type Method" for i in range(400)]
    t0 = time.perf_counter()
    asyncio.run(embedder._embed_uncached(short))
    short_s = time.perf_counter() - t0
    mean_tokens = sum(tok.count(c) for c in chunks) / len(chunks)
    return {"chunks": len(chunks), "mean_chunk_tokens": round(mean_tokens), "chunks_per_s": round(len(chunks) / chunk_s, 2),
            "short_texts": len(short), "short_texts_per_s": round(len(short) / short_s, 1)}


class RemoteServer:
    """The scripted server in a child process (fork), as a real LLM server would be: it does not
    share the indexing process's interpreter (and GIL). Stats come from its GET /_stats."""

    def __init__(self, **kwargs):
        ctx = multiprocessing.get_context("fork")
        parent, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child, kwargs), daemon=True)
        self._proc.start()
        self.base_url = parent.recv()

    def stats(self) -> dict:
        return httpx.get(f"{self.base_url}/_stats", timeout=30).json()

    def reset(self) -> None:
        httpx.get(f"{self.base_url}/_reset", timeout=30)

    def __enter__(self) -> RemoteServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self._proc.terminate()
        self._proc.join(5)


def _serve(conn, kwargs) -> None:
    server = ScriptedLLMServer(rules=default_rules(), **kwargs).start()
    conn.send(server.base_url)
    signal.pause()


def run_index(docs: list[dict], server: RemoteServer, limit: int, embed_local: bool, chunk_size: int,
              communities: bool = False) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="sg-bench-"))
    embeddings = {} if embed_local else {"provider": "openai", "base_url": server.base_url, "model": "scripted-embed",
                                         "dimension": 384, "batch_size": 256}
    try:
        kb = KnowledgeBase(workdir, llm={"base_url": server.base_url, "model": "scripted-model", "max_concurrency": limit},
                           extraction={"profile": "academic"}, embeddings=embeddings, progress=False,
                           chunking={"size": chunk_size, "overlap": min(100, chunk_size // 10)},
                           # the end-of-run community reports are a phase of their own (level by level);
                           # left out unless asked, so the figure is the extraction pipeline's
                           communities={"auto_update": communities})
        server.reset()
        t0 = time.perf_counter()
        report = kb.insert(texts=docs)
        wall = time.perf_counter() - t0
        stats = server.stats()
        calls = stats["calls"]
        kb.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    assert report.ok, report.failed[:3]
    return {"papers": len(report.added), "chunks": report.chunks, "llm_calls": calls, "wall_s": round(wall, 2),
            "papers_per_s": round(len(report.added) / wall, 2),
            "peak_concurrency": stats["peak_concurrency"], "mean_concurrency": round(stats["mean_concurrency"], 1),
            "llm_active_s": round(stats["active_seconds"], 2),
            "calls_per_s": round(calls / max(stats["active_seconds"], 1e-9), 1),
            "concurrency_timeline": stats["concurrency_timeline"]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--papers", type=int, default=500, help="PubMedQA abstracts added to the 28 full papers")
    parser.add_argument("--biored", type=int, default=400, help="BioRED (train) abstracts added as well")
    parser.add_argument("--limits", default="8,32,128")
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--skip-embedding", action="store_true")
    parser.add_argument("--chunk-size", type=int, default=300,
                        help="smaller chunks = more calls per paper, so ramp-up/down is a small part of the run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per limit; the median run is reported")
    parser.add_argument("--communities", action="store_true",
                        help="also recompute communities and write their reports at the end of each run")
    parser.add_argument("--json-out")
    args = parser.parse_args()
    dev = require_dev()
    docs = corpus(dev, args.papers, args.biored)
    result: dict = {"benchmark": "indexing", "machine": machine(), "papers": len(docs), "chunk_size": args.chunk_size,
                    "latency_s": args.latency}
    if not args.skip_embedding:
        result["embedding"] = bench_embedding(dev)
    with RemoteServer() as server:
        zero = run_index(docs, server, 64, embed_local=False, chunk_size=args.chunk_size, communities=args.communities)
        # embeddings come from the scripted server (deterministic, ~free): what remains is the framework
        zero["framework_ms_per_paper"] = round(1000 * zero["wall_s"] / zero["papers"], 2)
        result["zero_latency"] = zero
    result["concurrency"] = {}
    for limit in (int(x) for x in args.limits.split(",")):
        runs = [concurrency_run(docs, limit, args) for _ in range(args.repeats)]
        # the median run by % of limit is the headline; every run is kept (the machine is shared)
        row = dict(sorted(runs, key=lambda r: r["mean_concurrency_pct_of_limit"])[len(runs) // 2])
        row["runs_pct_of_limit"] = [r["mean_concurrency_pct_of_limit"] for r in runs]
        result["concurrency"][str(limit)] = row
    write_result("indexing", result, args.json_out)


def concurrency_run(docs: list[dict], limit: int, args: argparse.Namespace) -> dict:
    with RemoteServer(latency=args.latency) as server:
        row = run_index(docs, server, limit, embed_local=False, chunk_size=args.chunk_size, communities=args.communities)
    row["mean_concurrency_pct_of_limit"] = round(100 * row["mean_concurrency"] / limit, 1)
    middle = row["concurrency_timeline"][1:-1]
    row["steady_pct_of_limit"] = round(100 * sum(middle) / max(len(middle), 1) / limit, 1)
    row["ideal_calls_per_s"] = round(limit / args.latency, 1)
    return row


if __name__ == "__main__":
    main()
