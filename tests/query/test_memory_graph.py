"""The in-memory graph: bounded shortest paths, and the cache keyed by the graph version."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from scholargraph.graph.memory import FETCH_BATCH, GraphCache, MemoryGraph, PartialGraph, load_graph
from scholargraph.models import EntityRecord, RelationRecord


def chain(*nodes: str) -> list[tuple[str, str, str, float]]:
    return [(f"r{a}{b}", a, b, 1.0) for a, b in zip(nodes, nodes[1:], strict=False)]


def test_shortest_path_and_bounds():
    g = MemoryGraph(chain("A", "B", "C", "D", "E", "F") + [("rAX", "A", "X", 1.0), ("rXC", "X", "C", 1.0)])
    path = g.shortest_path("A", "C")
    assert path in (["A", "B", "C"], ["A", "X", "C"])
    assert len(g.shortest_path("A", "F", max_length=5)) == 6
    assert g.shortest_path("A", "F", max_length=4) is None  # 5 edges away
    assert g.shortest_path("A", "nowhere") is None
    assert g.shortest_path("A", "A") == ["A"]
    nodes, edges, paths = g.union_of_shortest_paths(["A", "C", "E"], max_length=4)
    assert {"A", "C", "E", "D"} <= nodes and ("C", "D") in edges and len(paths) == 3


def test_shortest_paths_match_networkx_on_random_graphs():
    rng = random.Random(7)
    for _ in range(20):
        n = rng.randrange(5, 60)
        edges = [(f"r{i}", f"n{rng.randrange(n)}", f"n{rng.randrange(n)}", 1.0) for i in range(rng.randrange(n, 3 * n))]
        g = MemoryGraph(edges)
        ref = nx.Graph((s, t) for _, s, t, _ in edges)
        for _ in range(20):
            a, b = f"n{rng.randrange(n)}", f"n{rng.randrange(n)}"
            got = g.shortest_path(a, b, max_length=10)
            try:
                want = nx.shortest_path_length(ref, a, b)
            except (nx.NetworkXNoPath, nx.NodeNotFound):
                want = None
            if want is None:
                assert got is None
            else:
                assert got is not None and len(got) - 1 == want and got[0] == a and got[-1] == b
                assert all(ref.has_edge(u, v) for u, v in zip(got, got[1:], strict=False))


def test_visit_budget_gives_up_on_huge_neighbourhoods():
    hub = [(f"r{i}", "H", f"leaf{i}", 1.0) for i in range(5000)]
    g = MemoryGraph(hub + chain("A", "H") + chain("B", "leaf4999"))
    assert g.shortest_path("A", "B", max_length=4) == ["A", "H", "leaf4999", "B"]
    assert g.shortest_path("A", "B", max_length=4, max_visits=100) is None


def test_parallel_relations_share_one_edge():
    g = MemoryGraph([("r1", "A", "B", 1.0), ("r2", "B", "A", 3.0), ("r3", "A", "C", 1.0)])
    assert sorted(g.edge_rids("A", "B")) == ["r1", "r2"]
    data = g.graph.adj["A"]["B"]
    assert data["rid"] == "r2" and data["weight"] == 4.0
    assert g.degree("A") == 2 and g.edge_count == 3
    assert sorted(n for n, _ in g.incident("A")) == ["B", "C"]


def test_graph_is_cached_until_relations_change(store):
    cache = GraphCache()
    first = cache.get(store)
    assert cache.get(store) is first and cache.current is first
    assert first.graph.number_of_edges() == 8

    def add_zinc() -> None:
        store.write_entities([EntityRecord("zinc", "Element", "zinc", "c1", id="Z", key="zinc", document_id="doc1")])
        store.write_relations([RelationRecord("aspirin", "zinc", "aspirin zinc", "c1", id="r_az", source_id="A",
                                              target_id="Z", document_id="doc1")])

    store.write(add_zinc)
    second = cache.get(store)
    assert second is not first and second.shortest_path("Z", "C") == ["Z", "A", "B", "C"]
    store.delete_graph_of("doc2")
    third = cache.get(store)
    assert third is not second and "G" not in third and third.version == store.graph_version()
    assert load_graph(store).edge_count == third.edge_count  # the uncached loader reads the same graph


@pytest.mark.slow
def test_loads_a_240k_edge_graph():
    rng = random.Random(0)
    n = 80_000
    edges = [(f"r{j}", f"e{int(n * rng.random() ** 2)}", f"e{rng.randrange(n)}", 1.0) for j in range(240_000)]
    g = MemoryGraph(edges)  # load time is measured by benchmarks/bench_query_latency.py, not asserted here
    assert g.edge_count == 240_000


# -- a graph too large to hold whole (query.max_graph_relations) -------------------------------


def test_above_the_limit_the_cache_holds_nothing_and_each_query_reads_only_its_part(store):
    cache = GraphCache()
    part = cache.get(store, max_relations=store.count("relations") - 1)
    assert isinstance(part, PartialGraph) and cache.current is None
    assert part.edge_count == 0, "nothing is read before the query looks"
    assert part.degree("A") == load_graph(store).degree("A")
    assert part.fetched == {"A"} and 0 < part.edge_count < load_graph(store).edge_count
    assert cache.get(store, max_relations=store.count("relations")) is not part, "at the limit: the whole graph"
    assert cache.current is not None and not cache.current.partial


def test_a_partial_graph_finds_the_same_path_lengths_as_the_whole_graph(store):
    whole = load_graph(store)
    nodes = sorted(whole.graph.nodes)
    for a in nodes:
        for b in nodes:
            want, got = whole.shortest_path(a, b), PartialGraph(store).shortest_path(a, b)
            assert (want is None) == (got is None) and (want is None or len(want) == len(got))
    part = PartialGraph(store)
    found, _, paths = part.union_of_shortest_paths(["A", "C"])
    assert paths and found == set(whole.union_of_shortest_paths(["A", "C"])[0])
    assert part.fetched < set(nodes), "a path between two entities reads their neighbourhood, not the graph"


class _EdgeStore:
    """The store's edge reads over a fixed edge list, recording the nodes whose edges were read."""

    def __init__(self, edges: list[tuple[str, str, str, float]]):
        self.edges, self.read = edges, []

    def edges_touching(self, ids):
        self.read += list(ids)
        wanted = set(ids)
        return [e for e in self.edges if e[1] in wanted or e[2] in wanted]

    def degrees(self, ids):
        whole = MemoryGraph(self.edges)
        return {i: whole.degree(i) for i in ids}


def _two_hubs(n: int = 600) -> list[tuple[str, str, str, float]]:
    """H and Z, each with n neighbours; one neighbour of each are joined (L0 -- M0)."""
    return ([(f"rh{i}", "H", f"L{i}", 1.0) for i in range(n)] + [(f"rz{i}", "Z", f"M{i}", 1.0) for i in range(n)]
            + [("rlm", "L0", "M0", 1.0)])


def test_a_partial_graph_reads_a_hubs_neighbours_edges_only_as_far_as_the_search_goes():
    store = _EdgeStore(_two_hubs())
    part = PartialGraph(store)  # type: ignore[arg-type]
    assert part.shortest_path("H", "Z") == ["H", "L0", "M0", "Z"] == MemoryGraph(store.edges).shortest_path("H", "Z")
    # H, Z, then the first slice of H's 600 neighbours, where the search met Z's side
    assert len(store.read) <= 2 + FETCH_BATCH < 600


def test_a_partial_graph_counts_degrees_in_the_store_without_reading_the_edges():
    store = _EdgeStore(_two_hubs())
    part = PartialGraph(store)  # type: ignore[arg-type]
    part.fetch(["L0"])
    assert part.degrees(["H", "L0", "M5", "nowhere"]) == {"H": 600, "L0": 2, "M5": 1, "nowhere": 0}
    assert store.read == ["L0"]  # the hub's 600 edges were not read for its degree
