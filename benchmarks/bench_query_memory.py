"""What each query mode loads into memory: the whole graph, or the part the question touches.

    .venv/bin/python -m benchmarks.bench_query_memory [--chunks 50000] [--queries 5] [--modes local,subgraph,...]

The workspace is the synthetic one of ``bench_query_latency`` (per 1k chunks: 800 entities, 2,400
relations with skewed degrees, 1,500 keywords). Each (mode, graph) pair runs in a fresh process:
it opens the workspace, answers one ``naive`` question (vector indexes and the query path loaded),
takes its RSS, loads the graph as a graph mode does (``graph_rss_mb``: what the whole graph takes, or
nothing for a graph above the limit), then answers ``--queries`` questions of the mode and reports
the peak RSS above the first point (graph, vector indexes the mode reads, its work), with what the
mode said it loaded (``graph_loaded``: relations and seconds of the whole
graph, or for a graph above ``query.max_graph_relations`` the nodes whose edges were read, the
nodes and edges held and the store queries, per question; ppr's ``passage_graph_loaded``). "whole"
runs with the default limit (the graph is loaded once and kept), "part" with
``max_graph_relations = 0`` (every question reads only its part). The summary mode is not measured:
above the limit it reads the stored community reports only (and refuses to compute them).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.bench_query_latency import VOCAB, BagOfWords, Chars, build
from benchmarks.common import machine, write_result
from scholargraph.config import QuerySettings, Settings
from scholargraph.query.engine import QueryEngine
from scholargraph.store import open_store

MODES = ("local", "subgraph", "global", "hybrid", "ppr")


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _questions(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [f"What links w{a} w{b} and w{c} w{d}?" for a, b, c, d in rng.integers(0, VOCAB, (n, 4))]


def _loaded(details: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key in ("graph_loaded", "passage_graph_loaded"):
        if key in details:
            out[key] = details[key]
    return out


def run_mode(path: str, mode: str, limit: int | None, queries: int, words: np.ndarray, out: Any) -> None:
    """In a fresh process: RSS after a naive question, then the peak over ``queries`` questions of ``mode``."""
    store = open_store(Path(path))
    query = QuerySettings(clue_threshold=0.5) if limit is None else QuerySettings(clue_threshold=0.5,
                                                                                  max_graph_relations=limit)
    engine = QueryEngine(store, Settings(workdir=Path(path), query=query), BagOfWords(words), Chars(), None)

    async def go() -> dict[str, Any]:
        await engine.retrieve(_questions(1, 99)[0], "naive")
        base = _status_kb("VmRSS")
        graph = engine.graphs.get(store, max_relations=engine.settings.query.max_graph_relations)
        graph_mb = round((_status_kb("VmRSS") - base) / 1024, 1)  # the whole graph, or an empty part
        loads, times = [], []
        for question in _questions(queries, 7):
            t = time.perf_counter()
            r = await engine.retrieve(question, mode)
            times.append(time.perf_counter() - t)
            loads.append(_loaded(r.details))
        del graph
        return {"rss_before_mb": round(base / 1024, 1), "graph_rss_mb": graph_mb,
                "rss_peak_above_mb": round((_status_kb("VmHWM") - base) / 1024, 1),
                "loaded": loads, "median_ms": round(1000 * sorted(times)[len(times) // 2], 1)}

    try:
        out.put(asyncio.run(go()))
    finally:
        store.close()


def measure(path: Path, mode: str, limit: int | None, queries: int, words: np.ndarray) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    proc = ctx.Process(target=run_mode, args=(str(path), mode, limit, queries, words, out))
    proc.start()
    result = out.get(timeout=3600)
    proc.join()
    return result


def summarise(result: dict[str, Any]) -> dict[str, Any]:
    """The loaded counts of the questions after the first (the first of "whole" loads the graph)."""
    first = result["loaded"][0] if result["loaded"] else {}
    rest = result["loaded"][1:] or result["loaded"]

    def biggest(key: str, field: str) -> int:
        return max((q.get(key, {}).get(field, 0) for q in rest), default=0)

    return {"graph_rss_mb": result["graph_rss_mb"], "rss_peak_above_mb": result["rss_peak_above_mb"],
            "median_ms": result["median_ms"], "first": first,
            "max_nodes_fetched": biggest("graph_loaded", "nodes_fetched"),
            "max_edges_held": biggest("graph_loaded", "edges"),
            "max_ppr_entities": biggest("passage_graph_loaded", "entities"),
            "max_ppr_nodes": biggest("passage_graph_loaded", "nodes")}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=5)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--json-out")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    words = rng.standard_normal((VOCAB, 384)).astype(np.float32)
    words /= np.linalg.norm(words, axis=1, keepdims=True)
    tmp = Path(tempfile.mkdtemp(prefix="sg-qmem-"))
    try:
        t = time.perf_counter()
        store = build(tmp / "ws", args.chunks, rng, words)
        counts = {name: store.count(name) for name in ("chunks", "entities", "relations")}
        store.close()
        build_s = time.perf_counter() - t
        modes = {}
        for mode in args.modes.split(","):
            modes[mode] = {"whole": summarise(measure(tmp / "ws", mode, None, args.queries, words)),
                           "part": summarise(measure(tmp / "ws", mode, 0, args.queries, words))}
            print(mode, modes[mode], flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result = {"benchmark": "query_memory", "machine": machine(), "workspace": counts, "build_s": round(build_s, 1),
              "queries_per_mode": args.queries, "default_max_graph_relations": QuerySettings().max_graph_relations,
              "modes": modes}
    write_result("query_memory", result, args.json_out)


if __name__ == "__main__":
    main()
