import sqlite3

import numpy as np
import pytest

from scholargraph.errors import WorkspaceError
from scholargraph.graph.merge import plan_writes
from scholargraph.models import (
    Chunk,
    DocStatus,
    Document,
    EntityRecord,
    Extraction,
    KeywordRecord,
    RelationRecord,
    Section,
)
from scholargraph.store.base import CachedResponse, CallRecord
from scholargraph.store.schema import SCHEMA_VERSION
from scholargraph.store.sqlite import SQLiteStore


def key(name: str) -> str:
    return " ".join(name.lower().split())


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(tmp_path / "ws")
    s.set_meta("embedding_dim", "4")
    yield s
    s.close()


def _sql(path, sql: str, params=()) -> list[tuple]:
    """What another process sees: a fresh connection to the file."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def test_schema_is_versioned_and_wal(tmp_path, store):
    assert _sql(store.path, "PRAGMA user_version")[0][0] == SCHEMA_VERSION
    assert _sql(store.path, "PRAGMA journal_mode")[0][0] == "wal"


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "ws"
    SQLiteStore(path).close()
    conn = sqlite3.connect(path / "scholargraph.sqlite")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    conn.close()
    with pytest.raises(WorkspaceError, match="newer than this scholargraph"):
        SQLiteStore(path)


def test_not_a_database(tmp_path):
    path = tmp_path / "ws"
    path.mkdir()
    (path / "scholargraph.sqlite").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(WorkspaceError, match="not a usable scholargraph database"):
        SQLiteStore(path)


def test_rolled_back_unit_of_work_leaves_no_vectors_in_memory(store):
    index = store.vector_index("chunk")

    def crash() -> None:
        store.put_vectors("chunk", ["a"], np.ones((1, 4), dtype=np.float32))
        raise RuntimeError("crash")

    with pytest.raises(RuntimeError):
        store.write(crash)
    assert len(index) == 0 and _sql(store.path, "SELECT COUNT(*) FROM vectors")[0][0] == 0
    store.put_vectors("chunk", ["b"], np.ones((1, 4), dtype=np.float32))
    assert index.search(np.ones(4, dtype=np.float32), 5)[0][0] == "b"
    store.delete_vectors("chunk", ["b"])
    assert len(index) == 0


def test_index_is_rebuilt_from_table(tmp_path, store):
    store.put_vectors("entity", ["x", "y"], np.eye(4, dtype=np.float32)[:2])
    again = SQLiteStore(store.workdir)
    assert again.vector_index("entity").search(np.eye(4, dtype=np.float32)[1], 1)[0][0] == "y"
    again.close()


def test_document_lifecycle_and_resume(store):
    doc = Document(id="d1", title="T", sections=[Section("", "text")], authors=["A B"], year=2020)
    store.add_pending(doc, "full", "offline")
    assert store.get_document("d1").status == DocStatus.PENDING
    assert store.load_document("d1").authors == ["A B"]
    store.set_status("d1", DocStatus.PROCESSING)
    assert store.reset_stale_processing() == ["d1"]
    assert store.get_document("d1").status == DocStatus.PENDING
    store.set_status("d1", DocStatus.FAILED, "boom")
    row = store.get_document("d1")
    assert row.status == DocStatus.FAILED and row.error == "boom"


def test_llm_cache_and_usage(store):
    store.cache_put("k", "m", "extract", CachedResponse("hello", 10, 2, False))
    assert store.cache_get("k").text == "hello" and store.cache_get("missing") is None
    store.log_call(CallRecord("extract", "m", 10, 2, False, False, 0.1, "d1"))
    store.log_call(CallRecord("extract", "m", 10, 2, False, True, 0.0, "d1"))
    usage = store.usage_by_purpose()["extract"]
    assert (usage.calls, usage.cached_calls, usage.prompt_tokens) == (1, 1, 10)
    assert store.usage_by_document()["d1"]["extract"].completion_tokens == 2


def _extraction(chunk: str) -> Extraction:
    return Extraction(
        entities=[EntityRecord("Retrieval-Augmented Generation", "Method", "combines retrieval and generation", chunk, ["RAG"]),
                  EntityRecord("BERT", "Model", "an encoder", chunk)],
        relations=[RelationRecord("RAG", "BERT", "RAG can use BERT", chunk, ["uses"])],
        keywords=[KeywordRecord("retrieval", chunk)],
    )


def _commit(store, doc_id, extraction):
    store.insert_chunks([Chunk(f"{doc_id}-c", doc_id, 0, "t", 1)])
    known = store.entities_by_keys([key(e.name) for e in extraction.entities] + ["rag"])
    writes = plan_writes(doc_id, extraction, key, known)
    store.write(lambda: (store.write_entities(writes.entities), store.write_relations(writes.relations),
                         store.write_keywords(writes.keywords)))
    return writes


def test_delete_keeps_entities_supported_elsewhere(store):
    for d in ("d1", "d2"):
        store.add_pending(Document(id=d, title=d, sections=[]), "full", "x")
    _commit(store, "d1", _extraction("d1-c"))
    only_d2 = Extraction(entities=[EntityRecord("RAG", "Method", "used in paper two", "d2-c")])
    w2 = _commit(store, "d2", only_d2)
    rag_id = w2.entities[0].id
    assert store.count("entities") == 2  # "RAG" in d2 joined the entity defined in d1
    gone = store.delete_graph_of("d1")
    assert rag_id not in gone.entity and len(gone.entity) == 1  # BERT disappeared
    assert len(gone.relation) == 1 and store.count("relations") == 0
    assert store.dirty_ids("entities") == [rag_id]
    assert store.count("keywords") == 0


def test_pending_documents_come_largest_first(store):
    for doc_id, words in (("small", 5), ("large", 500), ("medium", 50)):
        store.add_pending(Document(id=doc_id, title=doc_id, sections=[Section("body", "word " * words)]), "full", "offline")
    store.set_status("medium", DocStatus.PROCESSED)
    assert store.pending_ids() == ["large", "small"]


def test_graph_version_sees_a_reused_rowid(store):
    """The last relation deleted and another inserted (by another connection): SQLite reuses the rowid,
    the id differs, and the version must still change."""
    for eid in ("a", "b", "c"):
        store.write_entities([EntityRecord(eid, "", "", "c1", id=eid, key=eid, document_id="d")])
    store.write_relations([RelationRecord("a", "b", "", "c1", id="r1", source_id="a", target_id="b", document_id="d")])
    before = store.graph_version()
    conn = sqlite3.connect(store.path)
    with conn:
        conn.execute("DELETE FROM relations WHERE id = 'r1'")
        conn.execute("INSERT INTO relations(id, source_id, target_id, updated_at) VALUES ('r2', 'a', 'c', 0)")
    conn.close()
    assert store.graph_version() != before and [e[0] for e in store.all_edges()] == ["r2"]
