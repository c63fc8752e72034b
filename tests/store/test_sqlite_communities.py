"""SQLite's own `PRAGMA integrity_check` is clean on a workspace with communities:
SQLite 3.40 reported "NULL value in community_members.community_id" on every such workspace (a
WITHOUT ROWID table whose first column is not part of its primary key), which reads as corruption.
Schema v7 orders the table's columns key first; an older workspace is migrated with its members."""

from __future__ import annotations

import sqlite3

from scholargraph.models import Community
from scholargraph.store.sqlite import DB_NAME, SQLiteStore
from scholargraph.store.sqlite.schema import MIGRATIONS


def _integrity(path) -> list[str]:
    conn = sqlite3.connect(path / DB_NAME)
    try:
        return [r[0] for r in conn.execute("PRAGMA integrity_check")]
    finally:
        conn.close()


COMMUNITIES = [Community("0-aaa", 0, "aaa", ["e1", "e2"]), Community("0-bbb", 0, "bbb", ["e3"]),
               Community("1-ccc", 1, "ccc", ["e1", "e2", "e3"])]


def test_integrity_check_is_clean_on_a_workspace_with_communities(tmp_path):
    store = SQLiteStore(tmp_path / "ws")
    try:
        store.replace_communities(COMMUNITIES)
    finally:
        store.close()
    assert _integrity(tmp_path / "ws") == ["ok"]


def test_a_v6_workspace_keeps_its_communities_and_passes_the_check(tmp_path):
    path = tmp_path / "old"
    path.mkdir()
    conn = sqlite3.connect(path / DB_NAME)
    for version, step in enumerate(MIGRATIONS[:6], 1):
        conn.executescript(f"BEGIN;\n{step}\nPRAGMA user_version = {version};\nCOMMIT;")
    conn.executemany("INSERT INTO communities(id, level, signature, size) VALUES (?, ?, ?, ?)",
                     [(c.id, c.level, c.signature, len(c.members)) for c in COMMUNITIES])
    conn.executemany("INSERT INTO community_members(community_id, level, entity_id) VALUES (?, ?, ?)",
                     [(c.id, c.level, m) for c in COMMUNITIES for m in c.members])
    conn.commit()
    conn.close()

    store = SQLiteStore(path)
    try:
        got = {c.id: sorted(c.members) for c in store.list_communities(None, True)}
        assert store.communities_of(["e1", "e3"], 1) == {"e1": "1-ccc", "e3": "1-ccc"}
    finally:
        store.close()
    assert got == {c.id: c.members for c in COMMUNITIES}
    assert _integrity(path) == ["ok"]
