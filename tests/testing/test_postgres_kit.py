"""The throwaway PostgreSQL of ``scholargraph.testing``: a cluster kept by ``stop(keep=...)`` starts
again with its data (the scale benchmark re-measures queries on a kept knowledge base)."""

from __future__ import annotations

import psycopg

from scholargraph.testing.postgres import TempPostgres


def test_a_kept_cluster_starts_again_with_its_rows(tmp_path, pg_server):
    first = TempPostgres(pg_server.bin_dir, durable=True).start()
    kept = tmp_path / "kept"
    try:
        dsn = first.create_database("kept_db", extension=False)
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE TABLE t (x int)")
            conn.execute("INSERT INTO t VALUES (42)")
    finally:
        first.stop(keep=kept)
    assert (kept / "PG_VERSION").is_file()

    again = TempPostgres(pg_server.bin_dir, durable=True).start(existing=kept)
    try:
        with psycopg.connect(again.dsn("kept_db")) as conn:
            assert conn.execute("SELECT x FROM t").fetchall() == [(42,)]
    finally:
        again.stop()
    assert (kept / "PG_VERSION").is_file(), "stopping a reused cluster puts its files back"
