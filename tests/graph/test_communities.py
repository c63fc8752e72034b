"""Hierarchical Leiden communities (graph/communities.py) on a planted partition."""

from __future__ import annotations

import pytest
from planted import GROUPS, SUBGROUPS, group_of, planted_edges

from scholargraph.graph.communities import HierarchyParams, detect_hierarchy, memberships


def _partition(communities) -> set[frozenset]:
    return {frozenset(c.members) for c in communities}


def test_planted_two_levels_are_recovered():
    h = detect_hierarchy(planted_edges())
    assert h.levels == [0, 1]
    groups = {frozenset(group_of(m)[0] for m in c.members) for c in h.at(0)}
    assert len(h.at(0)) == GROUPS and all(len(g) == 1 for g in groups)  # one planted group each
    subgroups = [{group_of(m) for m in c.members} for c in h.at(1)]
    assert len(subgroups) == GROUPS * SUBGROUPS and all(len(s) == 1 for s in subgroups)
    level0 = {c.id: c for c in h.at(0)}
    for child in h.at(1):  # each subgroup hangs under its own group
        assert set(child.members) <= set(level0[child.parent_id].members)
    assert h.modularity[0] > 0.6 and h.modularity[1] > 0.5


def test_same_graph_and_seed_give_the_same_communities():
    edges = planted_edges(seed=3, p_group=0.1)
    a = detect_hierarchy(edges, HierarchyParams(seed=7))
    b = detect_hierarchy(list(reversed(edges)), HierarchyParams(seed=7))  # order of the edges does not matter
    assert [(c.id, c.parent_id, c.members) for c in a.communities] == [(c.id, c.parent_id, c.members) for c in b.communities]


def test_unchanged_communities_keep_their_id_when_the_graph_grows_elsewhere():
    edges = planted_edges()
    before = detect_hierarchy(edges)
    # a new entity joins subgroup (0, 0): that group changes, the others keep id and signature
    extra = [(f"x{i}", "new_entity", f"e0_0_{i:02d}", 1.0) for i in range(6)]
    after = detect_hierarchy(edges + extra, previous=memberships(before.communities))
    kept = {c.id for c in before.communities} & {c.id for c in after.communities}
    changed = [c for c in after.communities if c.id not in kept]
    assert changed and all("new_entity" in c.members for c in changed)
    assert len(kept) == len(before.communities) - len(changed)


def test_max_levels_and_unsplittable_communities():
    h = detect_hierarchy(planted_edges(), HierarchyParams(max_levels=1))
    assert h.levels == [0]
    # a triangle and a separate pair: two communities at level 0, nothing to split further
    h = detect_hierarchy([("r1", "a", "b", 1.0), ("r2", "b", "c", 1.0), ("r3", "a", "c", 1.0), ("r4", "x", "y", 2.0)])
    assert _partition(h.communities) == {frozenset("abc"), frozenset("xy")}
    assert [c.relations for c in h.communities] == [3, 1] and h.communities[1].weight == 2.0


def test_empty_graph_and_self_loops():
    assert detect_hierarchy([]).communities == []
    h = detect_hierarchy([("r1", "a", "a", 1.0)])
    assert h.communities == [] and h.nodes == 0


def _skewed_graph(entities: int, edges: int, seed: int = 1) -> list[tuple[str, str, str, float]]:
    """Planted groups of 100 with degree-skewed endpoints (the shape of benchmarks/bench_communities)."""
    import random

    rng = random.Random(seed)
    found: set[tuple[int, int]] = set()
    while len(found) < edges:
        a = min(int(rng.paretovariate(1.2)) - 1, entities - 1) if rng.random() < 0.3 else rng.randrange(entities)
        b = min((a // 100) * 100 + rng.randrange(100) if rng.random() < 0.8 else rng.randrange(entities), entities - 1)
        if a != b:
            found.add((min(a, b), max(a, b)))
    return [(f"r{i}", f"e{a:06d}", f"e{b:06d}", 1.0 + (i % 5)) for i, (a, b) in enumerate(sorted(found))]


@pytest.mark.timeout(120)
def test_an_update_ends_and_keeps_most_communities_on_a_skewed_graph():
    """igraph's own "until stable" Leiden cycled for ever on one community of this graph during an
    update; and with one generator for the whole run, 20 new relations re-drew every later split."""
    edges = _skewed_graph(5000, 24000)
    before = detect_hierarchy(edges)
    grown = edges + [(f"x{i}", f"new{i % 5}", f"e{(i * 7919) % 5000:06d}", 1.0) for i in range(20)]
    after = detect_hierarchy(grown, previous=memberships(before.communities))
    kept = {c.id for c in before.communities} & {c.id for c in after.communities}
    assert len(kept) >= 0.85 * len(before.communities)


def test_louvain_can_be_chosen_as_seed_001_used_it():
    """communities.algorithm = "louvain" (seed 001 §III.C): the same planted structure, the same
    communities on every run."""
    h = detect_hierarchy(planted_edges(), HierarchyParams(algorithm="louvain"))
    groups = [{group_of(m)[0] for m in c.members} for c in h.at(0)]
    assert all(len(g) == 1 for g in groups) and len({min(g) for g in groups}) == GROUPS
    assert _partition(h.communities) == _partition(detect_hierarchy(planted_edges(),
                                                                    HierarchyParams(algorithm="louvain")).communities)
