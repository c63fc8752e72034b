"""The rebuild of dirty entities and relations (graph/refresh): a pass goes on until nothing is
dirty, even when another worker's edits made a whole batch stale, and still ends when some rows
cannot be rebuilt."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from planted_store import planted_store

from scholargraph.graph import refresh
from scholargraph.graph.refresh import GraphRefresher
from scholargraph.llm.embeddings import Embedder


class _FlatEmbedder(Embedder):
    name, dim = "flat", 4

    def __init__(self) -> None:
        super().__init__(None)

    async def _embed_uncached(self, texts):
        return np.ones((len(texts), 4), dtype=np.float32) / 2


@pytest.fixture
def dirty_store(tmp_path, monkeypatch):
    store = planted_store(tmp_path / "ws")
    store.mark_all_dirty()
    monkeypatch.setattr(refresh, "BATCH", 8)
    yield store
    store.close()


def _refresh(store) -> tuple[int, int]:
    return asyncio.run(GraphRefresher(store, _FlatEmbedder(), lambda t: len(t.split()), 600).refresh())


def test_a_batch_made_stale_by_another_worker_is_claimed_again(dirty_store, monkeypatch):
    """The first batch's rows all changed version meanwhile (another worker merged into them): the
    pass used to stop there, leaving the rest of the rebuild to another worker or the next run."""
    total = len(dirty_store.dirty_ids("entities"))
    real, calls = dirty_store.update_entity, []

    def stale_at_first(entity, version):
        calls.append(entity.id)
        return len(calls) > 8 and real(entity, version)

    monkeypatch.setattr(dirty_store, "update_entity", stale_at_first)
    entities, relations = _refresh(dirty_store)
    assert entities == total > 8
    assert relations > 0
    assert dirty_store.dirty_ids("entities") == [] and dirty_store.dirty_ids("relations") == []


def test_rows_no_rebuild_can_land_end_the_pass(dirty_store, monkeypatch):
    stuck = dirty_store.dirty_ids("entities")[0]
    real = dirty_store.update_entity
    monkeypatch.setattr(dirty_store, "update_entity", lambda e, v: e.id != stuck and real(e, v))
    entities, _ = _refresh(dirty_store)
    assert dirty_store.dirty_ids("entities") == [stuck]  # left for the next pass, not retried for ever
    assert entities > 0 and dirty_store.dirty_ids("relations") == []


def test_a_rebuild_tells_the_store_where_it_starts_and_ends(dirty_store, monkeypatch):
    """So that PostgreSQL can set a vector index aside for a large rebuild and build it once at the end."""
    calls = []
    real_claim = dirty_store.claim_dirty
    monkeypatch.setattr(dirty_store, "begin_vector_rebuild", lambda: calls.append("begin"))
    monkeypatch.setattr(dirty_store, "end_vector_rebuild", lambda: calls.append("end"))
    monkeypatch.setattr(dirty_store, "claim_dirty", lambda kind, n: calls.append(kind) or real_claim(kind, n))
    _refresh(dirty_store)
    assert calls[0] == "begin" and calls[-1] == "end" and "relations" in calls


def test_a_claim_that_came_back_empty_while_rows_are_dirty_is_tried_again(dirty_store, monkeypatch):
    """Two workers claiming at the same moment: the second finds the first's candidates taken and
    gets nothing back although most rows are still dirty. It used to take that for the end of the
    rebuild (and build the vector index with 181,000 relations still to write)."""
    monkeypatch.setattr(refresh, "CLAIM_RETRY_S", 0.0)
    real_claim, lost = dirty_store.claim_dirty, []

    def lose_the_first_race(kind, n):
        if kind == "relations" and not lost:
            lost.append(kind)
            return []
        return real_claim(kind, n)

    monkeypatch.setattr(dirty_store, "claim_dirty", lose_the_first_race)
    _refresh(dirty_store)
    assert lost and dirty_store.dirty_ids("relations") == []
