"""Hierarchical Leiden communities (graph/communities.py) on a planted partition."""

from __future__ import annotations

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
