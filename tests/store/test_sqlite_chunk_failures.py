"""Schema v6 of the SQLite workspace: an older workspace's duplicated chunk-failure rows become
one record per chunk, with the attempts counted and the latest reason kept."""

from __future__ import annotations

import sqlite3

from scholargraph.store.sqlite import DB_NAME, SQLiteStore
from scholargraph.store.sqlite.schema import MIGRATIONS, SCHEMA_VERSION


def _v2_workspace(path):
    path.mkdir()
    conn = sqlite3.connect(path / DB_NAME)
    for version, step in enumerate(MIGRATIONS[:2], 1):
        conn.executescript(f"BEGIN;\n{step}\nPRAGMA user_version = {version};\nCOMMIT;")
    conn.execute("INSERT INTO documents(id, title, status, created_at, updated_at) VALUES ('d1', 'T', 'PROCESSED', 1, 1)")
    rows = [("c0", "d1", "academic", "prose", "Sure!", 1.0), ("c1", "d1", "academic", "prose", "Sure!", 1.0),
            ("c0", "d1", "academic", "prose again", "Sorry", 2.0), ("c0", "d1", "academic", "cut off", "{", 3.0)]
    conn.executemany("INSERT INTO extraction_failures(chunk_id, document_id, profile, reason, raw, created_at) "
                     "VALUES (?, ?, ?, ?, ?, ?)", rows)
    conn.commit()
    conn.close()


def test_a_v2_workspace_keeps_one_failure_record_per_chunk(tmp_path):
    path = tmp_path / "old"
    _v2_workspace(path)
    store = SQLiteStore(path)
    try:
        failures = store.chunk_failures()["d1"]
        assert [(f.chunk_id, f.reason, f.raw, f.attempts) for f in failures] == [
            ("c0", "cut off", "{", 3), ("c1", "prose", "Sure!", 1)]
        assert store.pending_maintenance("resolve") == []
        store.queue_maintenance("resolve", ["e1"])
    finally:
        store.close()
    conn = sqlite3.connect(path / DB_NAME)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert not conn.execute("SELECT name FROM sqlite_master WHERE name = 'extraction_failures'").fetchall()
    conn.close()
