"""Reciprocal-rank fusion and relevance-by-support ranking (pure functions)."""

import pytest

from scholargraph.query.rank import relevance_by_support, rrf


def _ids(ranked):
    return [i for i, _ in ranked]


def test_rrf_rewards_agreement_over_one_lists_top():
    dense = [("a", 0.9), ("b", 0.8), ("c", 0.7)]
    lexical = [("c", 12.0), ("b", 9.0), ("d", 3.0)]
    fused = rrf([dense, lexical], k=60)
    scores = dict(fused)
    assert scores["b"] == pytest.approx(2 / 62) and scores["c"] == pytest.approx(1 / 61 + 1 / 63)
    assert _ids(fused) == ["c", "b", "a", "d"]  # items in both lists first, then by best single rank


def test_rrf_weights_and_zero_weight():
    dense = [("a", 1.0), ("b", 0.5)]
    lexical = [("b", 3.0), ("z", 1.0)]
    assert _ids(rrf([dense, lexical], [1.0, 0.0])) == ["a", "b"]  # a zero-weight list adds nothing
    assert _ids(rrf([dense, lexical], [0.0, 1.0])) == ["b", "z"]
    assert _ids(rrf([dense, lexical], [1.0, 3.0]))[:2] == ["b", "z"]  # the heavier list leads
    with pytest.raises(ValueError):
        rrf([dense, lexical], [1.0])


def test_rrf_ties_are_deterministic_and_duplicates_count_once():
    one = [("x", 1.0), ("y", 0.5)]
    two = [("y", 1.0), ("x", 0.5)]
    assert _ids(rrf([one, two])) == ["x", "y"]  # equal scores: best rank (1) in the earlier list wins
    assert _ids(rrf([two, one])) == ["y", "x"]
    assert dict(rrf([[("a", 1.0), ("a", 0.5)]]))["a"] == pytest.approx(1 / 61)
    assert rrf([[], []]) == [] and len(rrf([one, two], limit=1)) == 1


def test_relevance_by_support_keeps_only_graph_units_and_weighs_both():
    support = {"u1": 5, "u2": 1, "u3": 1}
    dense = [("x", 0.99), ("u3", 0.9), ("u2", 0.1)]  # x is not a graph unit: never returned
    lexical = [("u3", 7.0)]
    ranked = relevance_by_support(support, dense, lexical)
    assert set(_ids(ranked)) == {"u1", "u2", "u3"}
    # u3 (weak support, but the question's best match both ways) overtakes u1 (strong support, and
    # no match with the question); u2 (supported, and similar to the question) also does
    assert _ids(ranked) == ["u3", "u2", "u1"]
    # support alone (relevance weighted 0) is the old frequency order
    assert _ids(relevance_by_support(support, dense, lexical, weights=(1.0, 0.0, 0.0))) == ["u1", "u2", "u3"]
    assert relevance_by_support({}, dense, lexical) == []


def test_graph_modes_fuse_their_units_with_the_lexical_passages_weighted_by_their_own_setting():
    from scholargraph.config import QuerySettings
    from scholargraph.query.passages import PassageLists, fuse_text_units

    graph = [("g", 1.0)]
    passages = PassageLists(dense=[("d", 0.9)], lexical=[("x", 7.0)])
    # defaults: the lexical list outweighs the graph's units and the dense list (HotpotQA: rare names)
    assert _ids(fuse_text_units(graph, passages, QuerySettings(), 10)) == ["x", "d", "g"]
    # graph_lexical_weight is the graph fusion's own: lexical_weight (naive's fusion) does not change it
    even = QuerySettings(graph_weight=1.0, graph_lexical_weight=1.0, lexical_weight=5.0)
    assert _ids(fuse_text_units(graph, passages, even, 10)) == ["g", "d", "x"]
    # an explicit graph weight (ppr's ppr_graph_weight) replaces query.graph_weight
    assert _ids(fuse_text_units(graph, passages, even, 10, graph_weight=3.0))[0] == "g"
    assert _ids(fuse_text_units(graph, passages, even, 10, graph_weight=0.5))[-1] == "g"
