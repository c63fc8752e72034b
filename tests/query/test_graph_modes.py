"""The graph modes' reads: a question's relations are scored against the question from one batched
vector read (on PostgreSQL one ``get`` per relation was one round trip each: seconds per question
once seed entities had thousands of relations)."""

from __future__ import annotations

import numpy as np

from scholargraph.query.graph_modes import relevance


class _Index:
    def get(self, _id: str):  # pragma: no cover - what the old code did, once per relation
        raise AssertionError("one vector read per relation")

    def __len__(self) -> int:
        return 3


class _Store:
    def __init__(self, vectors: dict[str, np.ndarray]):
        self.vectors, self.reads = vectors, []

    def vector_index(self, namespace: str, dim: int | None = None) -> _Index:
        return _Index()

    def get_vectors(self, namespace: str, ids):
        self.reads.append((namespace, list(ids)))
        return {i: self.vectors[i] for i in ids if i in self.vectors}


def test_relations_are_scored_from_one_batched_read():
    store = _Store({"r1": np.array([1.0, 0.0], dtype=np.float32), "r2": np.array([0.0, 1.0], dtype=np.float32)})
    probes = np.array([[1.0, 0.0]], dtype=np.float32)
    scores = relevance(store, ["r1", "r2", "r3", "r1"], probes, 2)  # type: ignore[arg-type]
    assert scores == {"r1": 1.0, "r2": 0.0, "r3": 0.0}  # r3 has no vector: 0
    assert store.reads == [("relation", ["r1", "r2", "r3"])]
