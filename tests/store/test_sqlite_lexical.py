"""The SQLite store's FTS5 index: built for workspaces made before it existed, rebuilt when the
tokenisation changes."""

from __future__ import annotations

import sqlite3

from fixtures.schema_undo import UNDO_V5, UNDO_V6, UNDO_V8, UNDO_V9, UNDO_V10, UNDO_V11, UNDO_V12

from scholargraph.models import Chunk, Document, Section
from scholargraph.store.sqlite import SQLiteStore
from scholargraph.store.sqlite.lexical import META_KEY


def _fill(path) -> None:
    store = SQLiteStore(path)
    store.add_pending(Document(id="d", title="T", sections=[Section("b", "x")]), "full", "t")
    store.insert_chunks([Chunk("d-c0", "d", 0, "TNF-alpha and IL-6 in sepsis", 6)])
    store.close()


def test_a_workspace_from_before_full_text_search_is_indexed_on_open(tmp_path):
    path = tmp_path / "ws"
    _fill(path)
    conn = sqlite3.connect(path / "scholargraph.sqlite")  # back to schema v3: no FTS table, no trigger
    conn.executescript(UNDO_V12 + UNDO_V11 + UNDO_V10 + UNDO_V9 + UNDO_V8 + UNDO_V6 + UNDO_V5 + f"DROP TRIGGER chunks_drop_terms; DROP TABLE chunk_terms; DELETE FROM meta WHERE key = '{META_KEY}';"
                       "PRAGMA user_version = 3;")
    conn.close()
    store = SQLiteStore(path)
    try:
        assert [i for i, _ in store.lexical_search("IL-6 sepsis", 5)] == ["d-c0"]
        store.delete_chunks_of("d")  # and the trigger is back
        assert store.lexical_search("sepsis", 5) == []
    finally:
        store.close()


def test_a_change_of_tokenisation_rebuilds_the_index(tmp_path):
    path = tmp_path / "ws"
    _fill(path)
    conn = sqlite3.connect(path / "scholargraph.sqlite")
    conn.executescript(f"DELETE FROM chunk_terms; UPDATE meta SET value = 'old' WHERE key = '{META_KEY}';")
    conn.close()
    store = SQLiteStore(path)
    try:
        assert [i for i, _ in store.lexical_search("TNF-alpha", 5)] == ["d-c0"]
    finally:
        store.close()
