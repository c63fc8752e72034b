"""SQLite: a workspace made before communities and citations (schema v2) is migrated to the current version."""

from __future__ import annotations

import sqlite3

from scholargraph.store import open_store
from scholargraph.store.sqlite.schema import MIGRATIONS, SCHEMA_VERSION


def test_v2_workspace_is_migrated(tmp_path):
    path = tmp_path / "old"
    path.mkdir()
    db = path / "scholargraph.sqlite"
    conn = sqlite3.connect(db)  # a v2 workspace, as that version made it (later steps add their own tables)
    for version, step in enumerate(MIGRATIONS[:2], 1):
        conn.executescript(f"BEGIN;\n{step}\nPRAGMA user_version = {version};\nCOMMIT;")
    conn.close()
    store = open_store(path)
    try:
        assert store.list_communities() == [] and store.references() == []
    finally:
        store.close()
    assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
