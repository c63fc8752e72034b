"""SQLite: a workspace made before communities and citations (schema v2) is migrated to v3."""

from __future__ import annotations

import sqlite3

from scholargraph.store import open_store


def test_v2_workspace_is_migrated(tmp_path):
    store = open_store(tmp_path / "old")
    store.close()
    db = tmp_path / "old" / "scholargraph.sqlite"
    conn = sqlite3.connect(db)
    conn.executescript("DROP TABLE community_members; DROP TABLE communities; DROP TABLE community_reports; "
                       "DROP TABLE paper_references; DROP TABLE stub_papers; PRAGMA user_version = 2;")
    conn.close()
    store = open_store(tmp_path / "old")
    try:
        assert store.list_communities() == [] and store.references() == []
    finally:
        store.close()
    assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0] == 3
