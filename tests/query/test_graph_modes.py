"""The graph modes' reads: a question's relations are scored against the question in one call where
the vectors are kept (on PostgreSQL one ``get`` per relation was one round trip each: seconds per
question once seed entities had thousands of relations; then one read shipped every vector); a hub
entity's sources are read only as far as the question can cite them; whether an index is empty is
asked without counting it."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from query_workspace import QUERY_DEFAULTS, BagOfWordsEmbedder, WordTokenizer

from scholargraph.config import QuerySettings, Settings
from scholargraph.models import Chunk, DocStatus, Document, EntityRecord, Section
from scholargraph.query.engine import QueryEngine
from scholargraph.query.graph_modes import (
    SOURCES_PER_ITEM,
    GraphParams,
    QueryVectors,
    match_nodes,
    rank_chunks,
    relevance,
)
from scholargraph.query.keywords import find_clues
from scholargraph.text.names import normalise_name


class _Index:
    """Relation vectors that are scored where they are kept: only the scores come back."""

    def __init__(self, vectors: dict[str, np.ndarray]):
        self.vectors, self.calls = vectors, []

    def get(self, _id: str):  # pragma: no cover - what the old code did, once per relation
        raise AssertionError("one vector read per relation")

    def similarities(self, ids, probes):
        self.calls.append(list(ids))
        return {i: float((self.vectors[i] @ probes.T).max()) for i in ids if i in self.vectors}

    def __len__(self) -> int:
        return 3


class _Store:
    def __init__(self, vectors: dict[str, np.ndarray]):
        self.index = _Index(vectors)

    def vector_index(self, namespace: str, dim: int | None = None) -> _Index:
        assert namespace == "relation"
        return self.index

    def get_vectors(self, namespace: str, ids):  # pragma: no cover - the vectors of every relation, shipped
        raise AssertionError("relation vectors read out of the store to be scored")


def test_relations_are_scored_in_the_store_in_one_call():
    """On PostgreSQL the vectors of a hub's thousands of relations stay in the database: one call
    returns one score per relation."""
    store = _Store({"r1": np.array([1.0, 0.0], dtype=np.float32), "r2": np.array([0.0, 1.0], dtype=np.float32)})
    probes = np.array([[1.0, 0.0]], dtype=np.float32)
    scores = relevance(store, ["r1", "r2", "r3", "r1"], probes, 2)  # type: ignore[arg-type]
    assert scores == {"r1": 1.0, "r2": 0.0, "r3": 0.0}  # r3 has no vector: 0
    assert store.index.calls == [["r1", "r2", "r3"]]


# -- a hub entity: stated in many chunks, a question reads the ones it can cite ------------------

HUB_CHUNKS = 150


class _CountingStore:
    """The workspace's store, recording the most source chunks one entity or relation came back with."""

    def __init__(self, store):
        self._store = store
        self.most = 0

    def __getattr__(self, name: str):
        return getattr(self._store, name)

    def _seen(self, items: dict) -> dict:
        self.most = max([self.most, *(len(x.chunk_ids) for x in items.values())])
        return items

    def get_entities(self, ids, sources=True):
        return self._seen(self._store.get_entities(ids, sources))

    def get_relations(self, ids, sources=True):
        return self._seen(self._store.get_relations(ids, sources))


def _add_hub(store) -> None:
    """``inflammation`` (entity C) stated in HUB_CHUNKS more chunks of a third paper about nothing the
    questions ask."""
    doc = Document(id="doc3", title="Cohort registry", sections=[Section("Results", "cohort")], year=2022)
    store.add_pending(doc, "full", "test")
    chunks = [Chunk(f"h{i:03d}", "doc3", i, f"Cohort {i} enrolled volunteers.", 4, section="Results", page_start=1,
                    page_end=1) for i in range(HUB_CHUNKS)]
    store.insert_chunks(chunks)
    store.put_vectors("chunk", [c.id for c in chunks], asyncio.run(BagOfWordsEmbedder().embed([c.text for c in chunks])))
    store.set_status("doc3", DocStatus.PROCESSED)
    store.write(lambda: store.write_entities([
        EntityRecord("inflammation", "Process", "inflammation response", c.id, id="C", key=normalise_name("inflammation"),
                     document_id="doc3") for c in chunks]))


@pytest.mark.parametrize("mode", ["local", "subgraph", "hybrid"])
def test_a_hub_entity_cites_a_retrieved_chunk_and_the_question_reads_few_of_its_sources(store, mode):
    _add_hub(store)
    assert len(store.get_entities(["C"])["C"].chunk_ids) == HUB_CHUNKS + 2  # an entity page still lists them all
    counting = _CountingStore(store)
    settings = Settings(workdir=store.workdir, query=QuerySettings(**{**QUERY_DEFAULTS, "fusion_depth": 5}))
    engine = QueryEngine(counting, settings, BagOfWordsEmbedder(), WordTokenizer(), None)  # type: ignore[arg-type]
    r = asyncio.run(engine.retrieve("What links aspirin and inflammation?", mode))
    texts = {s.chunk_id for s in r.sources if s.kind == "chunk"}
    graph = [s for s in r.sources if s.kind != "chunk"]
    assert graph and all(s.chunk_id and s.title and s.page_start for s in graph)  # each cites a paper's page
    hub = [s for s in graph if s.text.startswith("inflammation (")]
    # of its 152 chunks, the hub cites one the question retrieved from the paper about it
    assert hub and hub[0].chunk_id in texts & {"c2", "c3"} and hub[0].title == "Aspirin pharmacology"
    # the question's passages (at most 2 x 5 here) and SOURCES_PER_ITEM more, not the hub's 152
    assert 0 < counting.most <= 2 * 5 + SOURCES_PER_ITEM


# -- whether an index is empty: asked on every question, answered without counting it ---------------


class _NoCountIndex:
    """A vector index that knows whether it is empty without counting (on PostgreSQL ``len`` is a
    count(*) that reads every row of the table)."""

    def __init__(self, hits: list[tuple[str, float]]):
        self.hits = hits

    def __len__(self) -> int:  # pragma: no cover - what the old code asked on every question
        raise AssertionError("a count of every vector on a question's path")

    def __bool__(self) -> bool:
        return bool(self.hits)

    def search(self, query, k, allowed=None):
        return [h for h in self.hits if allowed is None or h[0] in allowed][:k]

    def search_many(self, queries, k):
        return [self.hits[:k] for _ in queries]

    def above(self, query, threshold, limit=None):
        return [h for h in self.hits if h[1] >= threshold][:limit]


class _NoCountStore:
    def __init__(self, hits):
        self.index = _NoCountIndex(hits)

    def vector_index(self, namespace: str, dim: int | None = None) -> _NoCountIndex:
        return self.index

    def entities_by_keys(self, keys):
        return {}

    def lexical_search(self, text, k, chunk_ids=None):
        return []

    def keywords_text(self, ids):
        return {i: i for i in ids}


def test_a_question_asks_whether_the_indexes_are_empty_without_counting_them():
    hits = [("x1", 0.9), ("x2", 0.8)]
    q = np.array([1.0, 0.0], dtype=np.float32)
    vecs = QueryVectors(q, ["term"], q[None, :], [], np.zeros((0, 2), np.float32), "a question")
    store = _NoCountStore(hits)
    assert list(match_nodes(store, vecs, GraphParams(), 2)) == ["x1", "x2"]  # type: ignore[arg-type]
    assert [c for c, _ in rank_chunks(store, {"x1": 1.0, "x2": 1.0}, vecs, 2, 5)] == ["x1", "x2"]  # type: ignore[arg-type]
    assert [c.text for c in find_clues(store, q, 0.5, 5, 2)] == ["x1", "x2"]  # type: ignore[arg-type]
    empty = _NoCountStore([])
    assert match_nodes(empty, vecs, GraphParams(), 2) == {}  # type: ignore[arg-type]
    assert find_clues(empty, q, 0.5, 5, 2) == []  # type: ignore[arg-type]
