"""LLM cache, call log and embedding cache: their own file, held in memory, written behind by their
own writer thread (never by the caller's thread, never with a graph commit)."""

import sqlite3
import threading
import time

import numpy as np
import pytest

from scholargraph.models import DocStatus, Document, Section
from scholargraph.store.base import CachedResponse, CallRecord
from scholargraph.store.sqlite import DB_NAME, SQLiteStore, records
from scholargraph.store.sqlite.records import RECORDS_DB_NAME
from scholargraph.store.sqlite.schema import SCHEMA_V1, SCHEMA_VERSION


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(tmp_path / "ws")
    yield s
    s.close()


def _rows_on_disk(path, table: str) -> int:
    """What another process would see: a fresh connection to the file."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    finally:
        conn.close()


def _eventually(check, seconds: float = 10.0) -> bool:
    """Wait for something the writer thread does on its own."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return check()


def test_held_rows_are_seen_at_once_and_written_apart_from_graph_commits(store):
    records_db = store.workdir / RECORDS_DB_NAME
    store.cache_put("k", "m", "extract", CachedResponse("answer", 10, 2, False))
    store.log_call(CallRecord("extract", "m", 10, 2, False, False, 0.1, "d1"))
    store.embedding_put("model", {"h1": np.ones(4, dtype=np.float32)})
    assert store.cache_get("k").text == "answer"  # visible before any write
    assert store.embedding_get("model", ["h1", "h2"])["h1"].tolist() == [1.0] * 4
    store.add_pending(Document(id="d1", title="T", sections=[Section("body", "text")]), "full", "offline")
    assert _rows_on_disk(records_db, "llm_cache") == 0  # a graph commit does not carry them
    store.flush_records()
    assert [_rows_on_disk(records_db, t) for t in ("llm_cache", "llm_calls", "embedding_cache")] == [1, 1, 1]
    assert store.cache_get("k").text == "answer"  # now read from the database
    main = sqlite3.connect(store.path)
    assert not main.execute("SELECT name FROM sqlite_master WHERE name LIKE 'llm%'").fetchall()
    main.close()


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


def test_a_failed_graph_unit_of_work_does_not_touch_the_records(store):
    store.log_call(CallRecord("extract", "m", 7, 1, False, False, 0.1, "d1"))

    def boom() -> None:
        store.set_status("nothing", DocStatus.PENDING)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        store.write(boom)
    assert store.usage_by_purpose()["extract"].prompt_tokens == 7


def test_a_failed_write_puts_the_rows_back(store, monkeypatch):
    store.log_call(CallRecord("extract", "m", 3, 1, False, False, 0.1, None))
    original = store.records._write_held

    def broken() -> None:
        original()
        raise OSError("disk full")

    monkeypatch.setattr(store.records, "_write_held", broken)
    with pytest.raises(OSError):
        store.flush_records()
    monkeypatch.undo()
    store.log_call(CallRecord("extract", "m", 4, 1, False, False, 0.1, None))
    assert store.usage_by_purpose()["extract"].prompt_tokens == 7  # both calls, once each
    assert _rows_on_disk(store.workdir / RECORDS_DB_NAME, "llm_calls") == 2


def test_many_held_rows_are_written_by_the_records_writer(store, monkeypatch):
    monkeypatch.setattr(records, "FLUSH_ROWS", 3)
    callers = set()
    original = store.records._write_held
    monkeypatch.setattr(store.records, "_write_held", lambda: (callers.add(threading.current_thread().name), original()))
    for _ in range(3):
        store.log_call(CallRecord("answer", "m", 1, 1, False, False, 0.1, None))
    assert _eventually(lambda: _rows_on_disk(store.workdir / RECORDS_DB_NAME, "llm_calls") == 3)
    assert callers and all("records-writer" in name for name in callers)  # never the caller's thread


def test_old_held_rows_are_written_after_the_next_put(store, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(records.time, "monotonic", lambda: clock[0])
    store.log_call(CallRecord("answer", "m", 1, 1, False, False, 0.1, None))
    clock[0] += records.FLUSH_SECONDS + 0.1
    store.log_call(CallRecord("answer", "m", 1, 1, False, False, 0.1, None))
    monkeypatch.undo()
    assert _eventually(lambda: _rows_on_disk(store.workdir / RECORDS_DB_NAME, "llm_calls") == 2)


def test_rows_are_written_when_nothing_else_happens(store):
    store.log_call(CallRecord("answer", "m", 1, 1, False, False, 0.1, None))
    assert _eventually(lambda: _rows_on_disk(store.workdir / RECORDS_DB_NAME, "llm_calls") == 1,
                       seconds=records.FLUSH_SECONDS * 5)


def test_counting_calls_includes_held_ones(store):
    store.log_call(CallRecord("answer", "m", 1, 1, False, False, 0.1, None))
    assert store.count("llm_calls") == 1


def _v1_workspace(path) -> None:
    """A workspace as the code before schema v2 left it: cache tables inside scholargraph.sqlite."""
    path.mkdir()
    conn = sqlite3.connect(path / DB_NAME)
    conn.executescript(f"BEGIN;\n{SCHEMA_V1}\nPRAGMA user_version = 1;\nCOMMIT;")
    conn.execute("PRAGMA journal_mode=WAL")
    with conn:
        conn.execute("INSERT INTO llm_cache VALUES ('k', 'm', 'extract', 'cached answer', 11, 3, 0, 1.0)")
        conn.execute("INSERT INTO llm_calls(ts, purpose, model, document_id, prompt_tokens, completion_tokens) "
                     "VALUES (1.0, 'extract', 'm', 'd1', 11, 3)")
        conn.execute("INSERT INTO embedding_cache VALUES ('model', 'h', ?)", (np.ones(4, dtype=np.float32).tobytes(),))
        conn.execute("INSERT INTO documents(id, title, payload, status, created_at, updated_at) "
                     "VALUES ('big', 'B', ?, 'PENDING', 1, 1), ('small', 'S', ?, 'PENDING', 1, 1)", ("x" * 500, "x" * 5))
    conn.close()


def test_a_workspace_from_before_the_split_keeps_its_cache(tmp_path):
    path = tmp_path / "old"
    _v1_workspace(path)
    store = SQLiteStore(path)
    try:
        assert store.cache_get("k").text == "cached answer"
        assert store.usage_by_purpose()["extract"].prompt_tokens == 11
        assert store.embedding_get("model", ["h"])["h"].tolist() == [1.0] * 4
        assert store.pending_ids() == ["big", "small"]  # sizes measured by the migration
    finally:
        store.close()
    conn = sqlite3.connect(path / DB_NAME)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert not conn.execute("SELECT name FROM sqlite_master WHERE name = 'llm_cache'").fetchall()
    conn.close()
    again = SQLiteStore(path)  # opening again migrates nothing and loses nothing
    try:
        assert again.cache_get("k").text == "cached answer" and again.count("llm_calls") == 1
    finally:
        again.close()


def test_an_interrupted_migration_is_done_again_without_duplicates(tmp_path, monkeypatch):
    path = tmp_path / "old"
    _v1_workspace(path)
    from scholargraph.store.sqlite import schema

    monkeypatch.setattr(schema, "MIGRATIONS", [schema.SCHEMA_V1, "SELECT crash_here();"])  # copied, then the step fails
    with pytest.raises(Exception, match="crash_here|not a usable"):
        SQLiteStore(path)
    monkeypatch.undo()
    store = SQLiteStore(path)
    try:
        assert store.count("llm_calls") == 1 and store.count("llm_cache") == 1
    finally:
        store.close()


def test_a_store_nobody_closed_writes_its_held_rows_when_the_process_exits(tmp_path):
    import subprocess
    import sys

    script = ("import sys\nfrom scholargraph.store import open_store\nfrom scholargraph.store.base import CallRecord\n"
              "s = open_store(sys.argv[1])\ns.log_call(CallRecord('answer', 'm', 1, 1, False, False, 0.1, None))\n")
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "ws")], check=True, timeout=120)
    store = SQLiteStore(tmp_path / "ws")
    try:
        assert store.count("llm_calls") == 1
    finally:
        store.close()
