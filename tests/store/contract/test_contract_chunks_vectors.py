"""Chunks and vectors (ChunkStore, VectorStore): what naive retrieval, sources and re-embedding rely on."""

from __future__ import annotations

import numpy as np
import pytest
from contract_helpers import DIM, chunk, doc

from scholargraph.errors import WorkspaceError


def _vec(*values: float) -> np.ndarray:
    return np.asarray(values, dtype=np.float32)


def test_chunks_round_trip_with_their_place_in_the_paper(store):
    store.add_pending(doc("d1"), "full", "x")
    chunks = [chunk("d1", i, f"text number {i}") for i in (1, 0, 2)]
    store.insert_chunks(chunks, scope="intro")
    assert [c.ordinal for c in store.chunks_of("d1")] == [0, 1, 2]
    got = store.get_chunks(["d1-c2", "d1-c0", "nope"])
    assert sorted(got) == ["d1-c0", "d1-c2"] and got["d1-c2"] == chunks[2]
    assert store.get_document("d1").chunks == 3 and store.count("chunks") == 3
    assert sorted(store.iter_chunk_texts()) == [(f"d1-c{i}", f"text number {i}") for i in range(3)]
    store.insert_chunks([chunk("d1", 0, "replaced")])
    assert store.get_chunks(["d1-c0"])["d1-c0"].text == "replaced" and store.count("chunks") == 3


def test_deleting_a_documents_chunks_deletes_their_vectors(store):
    store.add_pending(doc("d1"), "full", "x")
    store.insert_chunks([chunk("d1", 0), chunk("d1", 1)])
    store.put_vectors("chunk", ["d1-c0", "d1-c1"], np.eye(DIM, dtype=np.float32)[:2])
    assert sorted(store.delete_chunks_of("d1")) == ["d1-c0", "d1-c1"]
    assert store.chunks_of("d1") == [] and len(store.vector_index("chunk")) == 0


def test_vector_search_and_updates(store):
    index = store.vector_index("entity")
    assert len(index) == 0 and index.search(_vec(1, 0, 0, 0), 3) == []
    store.put_vectors("entity", ["a", "b", "c"], np.asarray([[1, 0, 0, 0], [0, 1, 0, 0], [1, 1, 0, 0]], np.float32))
    hits = index.search(_vec(1, 0, 0, 0), 2)  # the loaded index follows later writes
    assert [h[0] for h in hits] == ["a", "c"] and hits[0][1] == pytest.approx(1.0)
    assert [h[0] for h in index.search(_vec(1, 0, 0, 0), 5, allowed={"b", "c"})] == ["c", "b"]
    assert [h[0] for h in index.above(_vec(0, 1, 0, 0), 0.5)] == ["b", "c"]
    assert [[h[0] for h in r] for r in index.search_many(np.eye(DIM, dtype=np.float32)[:2], 1)] == [["a"], ["b"]]
    store.put_vectors("entity", ["a"], np.asarray([[0, 0, 1, 0]], np.float32))  # replaced
    assert index.search(_vec(0, 0, 1, 0), 1)[0][0] == "a" and len(index) == 3
    store.delete_vectors("entity", ["b", "unknown"])
    assert "b" not in index and len(index) == 2
    assert sorted(store.get_vectors("entity", ["a", "b"])) == ["a"]
    assert sorted(i for i, _ in store.iter_vectors("entity")) == ["a", "c"]
    assert len(store.vector_index("chunk")) == 0  # namespaces are apart
    store.put_vectors("entity", [], np.zeros((0, DIM), np.float32))  # nothing to do
    store.delete_vectors("entity", [])


def test_vectors_outlive_the_store_object(open_workspace):
    first = open_workspace("ws")
    first.set_meta("embedding_dim", str(DIM))
    first.put_vectors("keyword", ["x", "y"], np.eye(DIM, dtype=np.float32)[:2])
    again = open_workspace("ws")
    assert again.vector_index("keyword").search(np.eye(DIM, dtype=np.float32)[1], 1)[0][0] == "y"
    assert again.get_vectors("keyword", ["x"])["x"] == pytest.approx(np.eye(DIM)[0])


def test_clearing_every_vector(store):
    store.put_vectors("chunk", ["c"], np.ones((1, DIM), np.float32))
    store.put_vectors("entity", ["e"], np.ones((1, DIM), np.float32))
    loaded = store.vector_index("chunk")
    assert len(loaded) == 1
    store.clear_vectors()
    assert len(loaded) == 0 and len(store.vector_index("chunk")) == 0 and len(store.vector_index("entity")) == 0
    assert list(store.iter_vectors("entity")) == []


def test_an_index_needs_a_dimension(open_workspace):
    fresh = open_workspace("nodim")
    with pytest.raises(WorkspaceError, match="no embedding dimension"):
        fresh.vector_index("chunk")
    assert len(fresh.vector_index("chunk", dim=DIM)) == 0


def test_another_store_objects_vector_writes_are_seen(open_workspace):
    """A long-lived reader (the HTTP server) and a writer (an `index` or `delete` in another process)."""
    reader, writer = open_workspace("shared"), open_workspace("shared")
    writer.set_meta("embedding_dim", str(DIM))
    loaded = reader.vector_index("chunk")
    assert len(loaded) == 0
    writer.put_vectors("chunk", ["x", "y"], np.eye(DIM, dtype=np.float32)[:2])
    assert reader.vector_index("chunk").search(_vec(0, 1, 0, 0), 1)[0][0] == "y"
    reader.put_vectors("chunk", ["z"], np.eye(DIM, dtype=np.float32)[2:3])  # its own write, after the other's
    writer.delete_vectors("chunk", ["x"])
    assert sorted(i for i, _ in reader.vector_index("chunk").search(_vec(1, 1, 1, 0), 5)) == ["y", "z"]
