"""Whether the communities follow the graph (graph/community_update.py): decided from counts the
store gives, so an unchanged graph is not read whole on every run or worker batch, with the same
decisions as when the whole graph was read to decide."""

from __future__ import annotations

import asyncio
import json

import pytest
from planted_store import planted_store, write_graph

from scholargraph.config import CommunitySettings
from scholargraph.graph.community_update import change_share, drift_share, state, update_communities
from scholargraph.graph.edit import merge_entities


@pytest.fixture
def store(tmp_path):
    s = planted_store(tmp_path / "ws")
    yield s
    s.close()


def _run(store, **kw):
    return asyncio.run(update_communities(store, CommunitySettings(reports="extractive"), **kw))


def _share_read_whole(store) -> float:
    """The change as measured from the whole graph and every member (what was done on every run)."""
    edges, stored = store.all_edges(), store.list_communities(None, True)
    if not stored:
        return 1.0 if edges else 0.0
    nodes = {x for _, s, t, _ in edges for x in (s, t)}
    assigned = {m for c in stored if c.level == 0 for m in c.members}
    before = int(state(store).get("relations", 0))
    return max(len(nodes ^ assigned) / max(1, len(nodes)), abs(len(edges) - before) / max(1, before))


def _counting(monkeypatch, store, name: str) -> list[int]:
    calls: list[int] = []
    real = getattr(store, name)

    def counted(*args, **kw):
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(store, name, counted)
    return calls


def test_an_unchanged_graph_is_not_read_whole(store, monkeypatch):
    first = _run(store)
    edge_reads = _counting(monkeypatch, store, "all_edges")
    report_reads = _counting(monkeypatch, store, "community_reports")
    again = _run(store)
    assert first.computed and not again.computed and "kept" in again.reason
    assert again.reports_written == 0 and again.reports_kept == first.reports_written and again.levels == first.levels
    assert edge_reads == [] and report_reads == []  # neither the graph nor the reports were read


def test_missing_reports_of_kept_communities_are_still_written(store, monkeypatch):
    assert _run(store, reports=False).computed
    edge_reads = _counting(monkeypatch, store, "all_edges")
    run = _run(store)
    assert not run.computed and run.reports_written == len(store.community_reports()) > 0
    assert len(edge_reads) == 1  # read for the reports only


def test_the_change_is_measured_from_what_changed_since_not_the_whole_graph(store, monkeypatch):
    """A long-lived worker decides after every batch whether the communities follow: from the
    relations that arrived since the computation and the edits counted since, never from a pass
    over every entity and member (nor every edge)."""
    whole = _counting(monkeypatch, store, "community_drift")
    edges = _counting(monkeypatch, store, "all_edges")

    def share() -> float:
        before = len(edges)
        value = change_share(store)[0]
        assert len(edges) == before  # the graph is never read to decide
        return value

    assert share() == 1.0  # never computed
    _run(store)
    recorded = state(store)
    assert share() == 0.0
    write_graph(store, [(f"x{i}", f"new{i}", f"e0_0_{i:02d}", 1.0) for i in range(6)])  # 6 new entities
    assert share() == pytest.approx(max(6 / recorded["nodes"], 6 / recorded["relations"]))
    level0 = store.list_communities(0, members=True)[0].members
    moved = len(store.relations_touching([level0[1]]))
    merge_entities(store, level0[0], [level0[1]])  # an entity merged away, its relations re-pointed
    assert share() == pytest.approx(max(7 / recorded["nodes"], (6 + moved) / recorded["relations"]))
    assert whole == []
    assert _run(store, force=True).computed and share() == 0.0


def test_communities_recorded_before_arrival_numbers_are_measured_against_the_whole_graph(store):
    _run(store)
    old = {k: v for k, v in state(store).items() if k not in ("seq", "edits")}
    store.set_meta("communities", json.dumps(old))  # as an older version recorded them
    write_graph(store, [(f"x{i}", f"new{i}", f"e0_0_{i:02d}", 1.0) for i in range(6)])
    assert change_share(store)[0] == pytest.approx(_share_read_whole(store)) and _share_read_whole(store) > 0
    assert _run(store, force=True).computed and "seq" in state(store) and change_share(store)[0] == 0.0


def test_the_change_is_measured_as_from_the_whole_graph(store):
    def share() -> float:
        return drift_share(store.community_drift(), int(state(store).get("relations", 0)))

    assert share() == _share_read_whole(store) == 1.0  # never computed
    _run(store)
    assert share() == _share_read_whole(store) == 0.0
    write_graph(store, [(f"x{i}", f"new{i}", f"e0_0_{i:02d}", 1.0) for i in range(6)])  # new entities
    assert share() == pytest.approx(_share_read_whole(store)) and share() > 0
    level0 = store.list_communities(0, members=True)[0].members
    store.write(lambda: store.delete_relations(store.relations_touching(level0[:5])))  # members left unconnected
    assert share() == pytest.approx(_share_read_whole(store)) and share() > 0.05
    assert _run(store).computed  # more than communities.min_change: recomputed
    assert share() == _share_read_whole(store) == 0.0
