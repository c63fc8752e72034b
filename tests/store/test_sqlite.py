"""What is particular to the SQLite backend (the contract every backend meets is tests/store/contract/)."""

import sqlite3

import numpy as np
import pytest

from scholargraph.errors import WorkspaceError
from scholargraph.models import EntityRecord, RelationRecord
from scholargraph.store.sqlite import SQLiteStore
from scholargraph.store.sqlite.schema import MIGRATIONS, SCHEMA_VERSION


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


def test_listing_documents_does_not_read_their_text(store):
    """Listing a workspace's documents (status, the end-of-run citation step) reads their rows, not
    every parsed document at once: 100 papers of 100 KB each are not held together in memory."""
    import tracemalloc

    from scholargraph.models import DocStatus, Document, Section

    for i in range(100):
        store.add_pending(Document(f"d{i}", f"Paper {i}", [Section("Body", f"word{i} " * 15_000)]), "full", "test")
    store.set_status("d0", DocStatus.PROCESSED)
    tracemalloc.start()
    try:
        rows = store.list_documents()
        processed = store.list_documents(DocStatus.PROCESSED)
        by_id = store.documents_by_id([f"d{i}" for i in range(100)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(rows) == len(by_id) == 100 and [r.id for r in processed] == ["d0"]
    assert peak < 2_000_000  # the texts alone are 10 MB


def test_a_v9_workspace_starts_its_graph_size_from_the_relations_it_holds(tmp_path):
    """Upgrading keeps the graph's size right: the questions' size check reads the kept count."""
    path = tmp_path / "old"
    path.mkdir()
    conn = sqlite3.connect(path / "scholargraph.sqlite")
    for version, step in enumerate(MIGRATIONS[:9], 1):
        conn.executescript(f"BEGIN;\n{step}\nPRAGMA user_version = {version};\nCOMMIT;")
    conn.executemany("INSERT INTO entities(id, name, type, updated_at) VALUES (?, ?, '', 0)", [("a", "a"), ("b", "b")])
    conn.executemany("INSERT INTO relations(id, source_id, target_id, updated_at) VALUES (?, ?, ?, 0)",
                     [("r1", "a", "b"), ("r2", "b", "a")])
    conn.commit()
    conn.close()
    store = SQLiteStore(path)
    try:
        before = store.graph_version()
        assert store.versioned_rows("relations") == 2 and store.versioned_rows("chunks") == 0
        store.write_relations([RelationRecord("a", "b", "", "c1", id="r3", source_id="a", target_id="b", document_id="d")])
        assert store.versioned_rows("relations") == 3 and store.graph_version() != before
    finally:
        store.close()


def test_finding_a_names_entity_does_not_read_every_record_of_a_hub_name(store):
    """Each document's commit looks up the entities its names stand for; counting every source
    record of a key made that grow with the papers naming it (a hub gene: one record per paper)."""
    from scholargraph.models import Document, Section

    store.add_pending(Document("d1", "T", [Section("body", "x")]), "full", "t")
    records = [EntityRecord("KCN1", "Gene", f"record {n}", "c1", id="gene-kcn1", key="kcn1", document_id="d1")
               for n in range(3000)]
    records += [EntityRecord("rare", "Gene", f"record {n}", "c1", id="gene-rare", key="rare", document_id="d1")
                for n in range(3)]
    store.write(lambda: store.write_entities(records))
    assert store.entities_by_keys(["kcn1", "rare"]) == {"kcn1": "gene-kcn1", "rare": "gene-rare"}

    def steps(key: str) -> int:
        count = [0]

        def tick() -> int:
            count[0] += 1
            return 0

        reader = store._readers.get()  # this thread's read connection: the lookup's statements run there
        reader.set_progress_handler(tick, 1)
        try:
            store.entities_by_keys([key])
        finally:
            reader.set_progress_handler(None, 1)
        return count[0]

    assert steps("kcn1") < 2 * steps("rare")
