"""Benchmark ExactVectorIndex single-query top-k search against a plain numpy brute force.

    .venv/bin/python -m benchmarks.bench_vector_search [--sizes 10000,100000,1000000] [--queries 200]
        [--json-out benchmarks/results/vector_search.json]

Data: clustered, L2-normalised random vectors (gaussian cluster centres, point = centre + noise; fixed
seed). Queries are drawn near random cluster centres. For every query the index search and the
baselines are timed back to back, so their ratio is meaningful on a noisy shared machine:

* ``baseline_argsort``: ``np.argsort(-(matrix @ q))[:k]`` -- the naive brute force;
* ``floor_matvec``: ``matrix @ q`` alone -- a lower bound for any exact numpy scan.

Recall@k of the index against the brute force is checked on a sample of queries (must be 1.0).
A JSON object is printed to stdout and written to ``--json-out``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import os
import platform
import sys
import time
from typing import Any

import numpy as np

from benchmarks.common import write_result
from scholargraph.store.vectors import ExactVectorIndex

DEFAULT_OUT = "benchmarks/results/vector_search.json"


def clustered(n: int, dim: int, centres: np.ndarray, noise: float, rng: np.random.Generator) -> np.ndarray:
    """``n`` normalised float32 points around ``centres``, generated in chunks to bound memory."""
    out = np.empty((n, dim), dtype=np.float32)
    step = 100_000
    for start in range(0, n, step):
        m = min(step, n - start)
        pts = centres[rng.integers(0, len(centres), size=m)]
        pts += noise * rng.standard_normal((m, dim), dtype=np.float32)
        pts /= np.linalg.norm(pts, axis=1, keepdims=True)
        out[start : start + m] = pts
    return out


def stats_ms(seconds: list[float]) -> dict[str, float]:
    a = np.asarray(seconds) * 1000.0
    return {
        "p50": round(float(np.percentile(a, 50)), 3),
        "p95": round(float(np.percentile(a, 95)), 3),
        "p99": round(float(np.percentile(a, 99)), 3),
        "mean": round(float(a.mean()), 3),
        "min": round(float(a.min()), 3),
    }


def bench_size(n: int, args: argparse.Namespace, centres: np.ndarray) -> dict[str, Any]:
    rng = np.random.default_rng(args.seed + n)
    t0 = time.perf_counter()
    data = clustered(n, args.dim, centres, args.noise, rng)
    gen_s = time.perf_counter() - t0
    ids = [f"chunk-{i}" for i in range(n)]

    index = ExactVectorIndex(args.dim)
    t0 = time.perf_counter()
    for start in range(0, n, args.batch):
        index.add(ids[start : start + args.batch], data[start : start + args.batch])
    build_s = time.perf_counter() - t0
    assert len(index) == n

    qc = centres[rng.integers(0, len(centres), size=args.queries)]
    queries = (qc + args.query_noise * rng.standard_normal(qc.shape, dtype=np.float32)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    k = args.k

    def baseline(q: np.ndarray) -> np.ndarray:
        return np.argsort(-(data @ q))[:k]

    for q in queries[:5]:  # warm-up (page in the matrices, BLAS thread pool)
        index.search(q, k)
        baseline(q)

    t_index: list[float] = []
    t_base: list[float] = []
    t_floor: list[float] = []
    for q in queries:
        t0 = time.perf_counter()
        index.search(q, k)
        t1 = time.perf_counter()
        baseline(q)
        t2 = time.perf_counter()
        data @ q
        t3 = time.perf_counter()
        t_index.append(t1 - t0)
        t_base.append(t2 - t1)
        t_floor.append(t3 - t2)

    hits = 0
    checked = min(args.recall_queries, len(queries))
    for q in queries[:checked]:
        want = {ids[i] for i in baseline(q)}
        hits += len(want & {i for i, _ in index.search(q, k)})
    recall = hits / (checked * k)

    t0 = time.perf_counter()
    index.search_many(queries, k)
    many_s = time.perf_counter() - t0

    s_index, s_base, s_floor = stats_ms(t_index), stats_ms(t_base), stats_ms(t_floor)
    result = {
        "n": n,
        "dim": args.dim,
        "k": k,
        "queries": len(queries),
        "generate_s": round(gen_s, 3),
        "build_s": round(build_s, 3),
        "build_vectors_per_s": round(n / build_s),
        "index_ms": s_index,
        "baseline_argsort_ms": s_base,
        "floor_matvec_ms": s_floor,
        "speedup_vs_baseline_p50": round(s_base["p50"] / s_index["p50"], 2),
        "overhead_vs_floor_p50": round(s_index["p50"] / s_floor["p50"], 2),
        "search_many_ms_per_query": round(many_s * 1000 / len(queries), 3),
        f"recall@{k}": recall,
        "recall_queries": checked,
    }
    print(
        f"n={n:>9,}  build {build_s:6.2f}s  index p50 {s_index['p50']:7.2f} p95 {s_index['p95']:7.2f} ms  "
        f"baseline p50 {s_base['p50']:7.2f} ms  matvec p50 {s_floor['p50']:7.2f} ms  recall {recall:.3f}",
        file=sys.stderr,
    )
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated index sizes")
    p.add_argument("--queries", type=int, default=200, help="single queries timed per size")
    p.add_argument("--json-out", default=DEFAULT_OUT, help="where to write the JSON result ('' to skip)")
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--clusters", type=int, default=1000)
    p.add_argument("--noise", type=float, default=0.05, help="per-dimension gaussian noise around a centre")
    p.add_argument("--query-noise", type=float, default=0.03)
    p.add_argument("--batch", type=int, default=10_000, help="ids per add() call while building")
    p.add_argument("--recall-queries", type=int, default=20)
    p.add_argument("--seed", type=int, default=1234)
    args = p.parse_args(argv)

    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    rng = np.random.default_rng(args.seed)
    centres = rng.standard_normal((args.clusters, args.dim), dtype=np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)

    results = []
    for n in sizes:
        results.append(bench_size(n, args, centres))
        gc.collect()

    report = {
        "benchmark": "vector_search",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "blas_threads_env": {
                v: os.environ[v]
                for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
                if v in os.environ
            },
        },
        "params": {
            "clusters": args.clusters,
            "noise": args.noise,
            "query_noise": args.query_noise,
            "seed": args.seed,
            "build_batch": args.batch,
        },
        "results": results,
    }
    write_result("vector_search", report, args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
