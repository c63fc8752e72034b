"""Writing N vectors into an HNSW-indexed pgvector table, 256 per transaction, against writing them
without the index and building it once: what the end-of-run rebuild pays per vector either way.

    .venv/bin/python -m benchmarks.bench_hnsw_load --n 20000 --cluster DIR   # a cluster kept by bench_scale --keep-db
    .venv/bin/python -m benchmarks.bench_hnsw_load --n 20000                 # random 384-d vectors, a new cluster

With ``--cluster`` the vectors are the first N relation vectors of that knowledge base (real text
embeddings, as the rebuild writes); without, normally distributed ones (harder for HNSW).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from benchmarks.common import machine, write_result

BATCH = 256
INDEX = "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"  # the store's


def _vectors(conn, n: int, cluster: bool) -> list[tuple[str, str]]:
    if cluster:
        return conn.execute(f"SELECT id, embedding::text FROM vectors_relation ORDER BY id LIMIT {int(n)}").fetchall()
    rng = np.random.default_rng(28)
    return [(f"v{i}", "[" + ",".join(f"{x:.6f}" for x in row) + "]") for i, row in enumerate(rng.normal(size=(n, 384)))]


def _insert(conn, table: str, rows: list[tuple[str, str]]) -> float:
    started = time.perf_counter()
    with conn.cursor() as cur:
        for i in range(0, len(rows), BATCH):
            with conn.transaction():
                cur.executemany(f"INSERT INTO {table}(id, embedding) VALUES (%s, %s::vector)", rows[i:i + BATCH])
    return round(time.perf_counter() - started, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--cluster", type=Path, help="a PostgreSQL cluster kept by bench_scale --keep-db")
    parser.add_argument("--maintenance-work-mem", default="512MB")
    parser.add_argument("--json-out")
    args = parser.parse_args()

    import psycopg

    from scholargraph.testing.postgres import TempPostgres

    pg = TempPostgres(durable=True, settings={"shared_buffers": "512MB",
                                              "maintenance_work_mem": args.maintenance_work_mem}).start(existing=args.cluster)
    result: dict = {"benchmark": "hnsw_load", "machine": machine(), "args": {"n": args.n, "cluster": bool(args.cluster),
                                                                           "maintenance_work_mem": args.maintenance_work_mem}}
    try:
        dsn = pg.dsn("scale") if args.cluster else pg.create_database("hnsw_load")
        with psycopg.connect(dsn, autocommit=True) as conn:
            rows = _vectors(conn, args.n, bool(args.cluster))
            dim = rows[0][1].count(",") + 1
            for table in ("load_indexed", "load_plain"):
                conn.execute(f"DROP TABLE IF EXISTS {table}")
                conn.execute(f"CREATE TABLE {table}(id text PRIMARY KEY, embedding vector({dim}))")
            conn.execute(f"CREATE INDEX ON load_indexed {INDEX}")
            indexed = _insert(conn, "load_indexed", rows)
            plain = _insert(conn, "load_plain", rows)
            started = time.perf_counter()
            conn.execute(f"CREATE INDEX ON load_plain {INDEX}")
            build = round(time.perf_counter() - started, 1)
            for table in ("load_indexed", "load_plain"):
                conn.execute(f"DROP TABLE {table}")
        result.update({"vectors": len(rows), "dim": dim, "into_the_index_s": indexed, "without_index_s": plain,
                       "index_build_s": build, "ratio": round(indexed / max(plain + build, 1e-9), 1),
                       "load_avg_at_end": os.getloadavg()[0]})
    finally:
        pg.stop(keep=args.cluster)
    write_result("hnsw_load", result, args.json_out)


if __name__ == "__main__":
    main()
