"""LLM cache, call log and embedding cache: held in memory, written with the next commit."""

import numpy as np
import pytest

from scholargraph.models import DocStatus, Document, Section
from scholargraph.store import records
from scholargraph.store.base import CachedResponse, CallRecord
from scholargraph.store.sqlite import SQLiteStore


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(tmp_path / "ws")
    yield s
    s.close()


def _rows_on_disk(path, table: str) -> int:
    """What another process would see: a fresh connection to the file."""
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    finally:
        conn.close()


def test_held_rows_are_seen_at_once_and_written_by_the_next_commit(store):
    store.cache_put("k", "m", "extract", CachedResponse("answer", 10, 2, False))
    store.log_call(CallRecord("extract", "m", 10, 2, False, False, 0.1, "d1"))
    store.embedding_put("model", {"h1": np.ones(4, dtype=np.float32)})
    assert store.cache_get("k").text == "answer"  # visible before any write
    assert store.embedding_get("model", ["h1", "h2"])["h1"].tolist() == [1.0] * 4
    assert _rows_on_disk(store.path, "llm_cache") == 0
    store.add_pending(Document(id="d1", title="T", sections=[Section("body", "text")]), "full", "offline")
    assert _rows_on_disk(store.path, "llm_cache") == 1  # rode along with the document's commit
    assert _rows_on_disk(store.path, "llm_calls") == 1
    assert _rows_on_disk(store.path, "embedding_cache") == 1
    assert store.cache_get("k").text == "answer"  # now read from the database


def test_close_writes_what_is_held(tmp_path):
    store = SQLiteStore(tmp_path / "ws")
    store.cache_put("k", "m", "answer", CachedResponse("kept", 5, 1, True))
    store.close()
    again = SQLiteStore(tmp_path / "ws")
    try:
        hit = again.cache_get("k")
        assert (hit.text, hit.prompt_tokens, hit.estimated) == ("kept", 5, True)
    finally:
        again.close()


def test_a_rolled_back_transaction_keeps_the_held_rows(store):
    store.log_call(CallRecord("extract", "m", 7, 1, False, False, 0.1, "d1"))
    with pytest.raises(RuntimeError), store.transaction():
        store.set_status("nothing", DocStatus.PENDING)
        raise RuntimeError("boom")
    assert store.usage_by_purpose()["extract"].prompt_tokens == 7  # written later, not lost


def test_a_failed_commit_puts_the_rows_back(store, monkeypatch):
    store.log_call(CallRecord("extract", "m", 3, 1, False, False, 0.1, None))

    def broken(conn):
        raise OSError("disk full")

    monkeypatch.setattr(store, "_write_held", lambda conn: (SQLiteStore._write_held(store, conn), broken(conn)))
    with pytest.raises(OSError), store.transaction():
        pass
    monkeypatch.undo()
    store.log_call(CallRecord("extract", "m", 4, 1, False, False, 0.1, None))
    assert store.usage_by_purpose()["extract"].prompt_tokens == 7  # both calls, once each
    assert _rows_on_disk(store.path, "llm_calls") == 2


def test_many_held_rows_are_written_without_a_commit(store, monkeypatch):
    monkeypatch.setattr(records, "FLUSH_ROWS", 3)
    for _ in range(3):
        store.log_call(CallRecord("answer", "m", 1, 1, False, False, 0.1, None))
    assert _rows_on_disk(store.path, "llm_calls") == 3


def test_old_held_rows_are_written_by_the_next_put(store, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(records.time, "monotonic", lambda: clock[0])
    store.log_call(CallRecord("answer", "m", 1, 1, False, False, 0.1, None))
    assert _rows_on_disk(store.path, "llm_calls") == 0
    clock[0] += records.FLUSH_SECONDS + 0.1
    store.log_call(CallRecord("answer", "m", 1, 1, False, False, 0.1, None))
    assert _rows_on_disk(store.path, "llm_calls") == 2


def test_counting_calls_includes_held_ones(store):
    store.log_call(CallRecord("answer", "m", 1, 1, False, False, 0.1, None))
    assert store.count("llm_calls") == 1

