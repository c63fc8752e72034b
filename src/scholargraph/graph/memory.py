"""The knowledge graph in memory, for path finding and neighbourhoods at query time.

An undirected :class:`networkx.Graph` over entity ids; each edge carries ``rid`` (the relation
id; when several relations join the same pair, the heaviest), ``rids`` (all of them),
``weight`` (their summed weight) and ``max_weight``. Direction is kept in the store; paths
ignore it (thesis 000 §3.3.2 builds subgraphs from shortest paths between matched nodes,
whatever their direction).

Loading reads ``store.all_edges()`` once; a :class:`GraphCache` (one per knowledge base) keeps
the graph under the store's cheap ``graph_version()`` token, so repeated queries reuse it and a
new or deleted relation triggers a reload. Weights in memory are a snapshot: rankings that need
current weights read them from the store.

Path search is hand-written on purpose: networkx's shortest-path functions have no bound on the
nodes they visit, and one hub entity (a "method" linked to half the graph) would make a query
explore everything; ``_bfs`` gives up after ``max_visits``. The graph itself is built and read
through networkx's public API only.
"""

from __future__ import annotations

import gc
import threading
import time
from collections import deque
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..store.base import Counts, GraphSearch, GraphStore

if TYPE_CHECKING:
    import networkx as nx  # imported when a graph is built: commands that build none never load it

FREEZE_ABOVE_EDGES = 20_000
FETCH_BATCH = 256  # frontier nodes whose edges a partial graph reads in one store query


class MemoryGraph:
    def __init__(self, edges: Iterable[tuple[str, str, str, float]], version: tuple = ()):
        started = time.perf_counter()
        gc_was_enabled = gc.isenabled()
        gc.disable()  # hundreds of thousands of new dicts: the cyclic GC would rescan them again and again
        try:
            self.graph, self.edge_count = _build(edges)
        finally:
            if gc_was_enabled:
                gc.enable()
        self.version = version
        self.load_seconds = time.perf_counter() - started
        # structures query modes derive from this graph version (e.g. the ppr mode's matrix), so they
        # live and die with it; keys are the modes' own
        self.derived: dict[str, object] = {}

    # -- basic access --------------------------------------------------------------------

    def __contains__(self, node: object) -> bool:
        return node in self.graph

    def fetch(self, nodes: Iterable[str]) -> None:
        """Make sure every edge at ``nodes`` is held (the whole graph is: nothing to do)."""

    @property
    def partial(self) -> bool:
        """Whether this is only the part of the graph that queries touched (:class:`PartialGraph`)."""
        return False

    def adjacency(self, node: str) -> dict | None:
        """networkx's adjacency of ``node`` (neighbour -> edge data), or None when it has no edge."""
        self.fetch((node,))
        return self.graph.adj.get(node)

    def degree(self, node: str) -> int:
        self.fetch((node,))
        return self.graph.degree(node) if node in self.graph else 0

    def degrees(self, nodes: Iterable[str]) -> dict[str, int]:
        """The degree of each of ``nodes`` (0 for a node without edges)."""
        return {n: self.degree(n) for n in dict.fromkeys(nodes)}

    def neighbours(self, node: str) -> list[str]:
        self.fetch((node,))
        return list(self.graph.adj[node]) if node in self.graph else []

    def edge_rids(self, a: str, b: str) -> list[str]:
        self.fetch((a,))
        data = self.graph.adj.get(a, {}).get(b)
        return list(data["rids"]) if data else []

    def incident(self, node: str) -> list[tuple[str, list[str]]]:
        """(neighbour, relation ids) for every edge at ``node``."""
        self.fetch((node,))
        if node not in self.graph:
            return []
        return [(n, d["rids"]) for n, d in self.graph.adj[node].items()]

    # -- paths ---------------------------------------------------------------------------

    def shortest_path(self, source: str, target: str, max_length: int = 4, max_visits: int = 20000) -> list[str] | None:
        """One shortest path (node list) of at most ``max_length`` edges, or None.

        Bidirectional BFS that always grows the smaller frontier and gives up after visiting
        ``max_visits`` nodes, so hubs cannot make one query slow. Neighbours are visited in
        adjacency order (the store's order), so the result is deterministic for a given store.
        """
        return self._bfs(source, target, max_length, max_visits)[0]

    def _bfs(self, source: str, target: str, max_length: int, max_visits: int) -> tuple[list[str] | None, int]:
        self.fetch((source, target))
        adj = self.graph.adj
        if source not in adj or target not in adj:
            return None, 0
        if source == target:
            return [source], 1
        pred: dict[str, str | None] = {source: None}
        succ: dict[str, str | None] = {target: None}
        front_s, front_t = [source], [target]
        length = 0
        visits = 2
        while front_s and front_t and length < max_length:
            if len(front_s) <= len(front_t):
                front, seen, other, forward = front_s, pred, succ, True
            else:
                front, seen, other, forward = front_t, succ, pred, False
            nxt: list[str] = []
            meet = None
            for start in range(0, len(front), FETCH_BATCH):
                # a partial graph reads the frontier's edges a slice at a time, so that a search that
                # stops (met, or out of visits) has not read the edges of the rest of a hub's neighbours
                part = front[start : start + FETCH_BATCH]
                self.fetch(part)
                for u in part:
                    for v in adj[u]:
                        if v in seen:
                            continue
                        seen[v] = u
                        visits += 1
                        if v in other:
                            meet = v
                            break
                        nxt.append(v)
                    if meet is not None or visits > max_visits:
                        break
                if meet is not None or visits > max_visits:
                    break
            length += 1
            if meet is not None:
                return _join(meet, pred, succ), visits
            if visits > max_visits:
                return None, visits
            if forward:
                front_s = nxt
            else:
                front_t = nxt
        return None, visits

    def union_of_shortest_paths(self, nodes: Sequence[str], max_length: int = 4, max_pairs: int = 66,
                                max_visits: int = 20000, total_visits: int = 100_000,
                                ) -> tuple[set[str], set[tuple[str, str]], list[list[str]]]:
        """Nodes, edges (sorted pairs) and the paths joining every pair of ``nodes`` (pairs of the
        best-ranked nodes first, at most ``max_pairs`` pairs, each path at most ``max_length`` edges).
        ``max_visits`` bounds one pair's search and ``total_visits`` all of them together."""
        keep_nodes: set[str] = set()
        keep_edges: set[tuple[str, str]] = set()
        paths: list[list[str]] = []
        wanted = list(dict.fromkeys(nodes))
        self.fetch(wanted)
        present = [n for n in wanted if n in self.graph]
        pairs = [(a, b) for j, b in enumerate(present) for a in present[:j]][:max_pairs]
        budget = total_visits
        for a, b in pairs:
            if budget <= 0:
                break
            path, used = self._bfs(a, b, max_length, min(max_visits, budget))
            budget -= used
            if not path or len(path) < 2:
                continue
            paths.append(path)
            keep_nodes.update(path)
            keep_edges.update(_key(u, v) for u, v in zip(path, path[1:], strict=False))
        return keep_nodes, keep_edges, paths


class PartialGraph(MemoryGraph):
    """The part of a store's graph that one query touches, read from the store as the query walks it:
    the edges at a node are read (all of them, in the store's order) the first time the node is
    looked at, a BFS frontier's in one query per level. For graphs too large to hold whole
    (``query.max_graph_relations``); ``nodes_fetched``/``edge_count`` say what was read."""

    def __init__(self, store: GraphStore, version: tuple = ()):
        super().__init__((), version)
        self.load_seconds = 0.0  # time spent reading edges from the store (not networkx's import)
        self.store = store
        self.fetched: set[str] = set()
        self.seen_rids: set[str] = set()
        self.store_queries = 0

    @property
    def partial(self) -> bool:
        return True

    def __contains__(self, node: object) -> bool:
        if isinstance(node, str):
            self.fetch((node,))
        return node in self.graph

    def fetch(self, nodes: Iterable[str]) -> None:
        todo = [n for n in dict.fromkeys(nodes) if n not in self.fetched]
        if not todo:
            return
        started = time.perf_counter()
        self.fetched.update(todo)
        self.store_queries += 1
        fresh = [e for e in self.store.edges_touching(todo) if e[0] not in self.seen_rids]
        self.seen_rids.update(e[0] for e in fresh)
        self.edge_count += _add_edges(self.graph, fresh)
        self.load_seconds += time.perf_counter() - started

    def degrees(self, nodes: Iterable[str]) -> dict[str, int]:
        """Degrees of the nodes whose edges were read from the graph held, the others' counted in the
        store: a hub's neighbours are ranked without reading every edge of each of them."""
        wanted = list(dict.fromkeys(nodes))
        unread = [n for n in wanted if n not in self.fetched]
        counted = self.store.degrees(unread) if unread else {}
        if unread:
            self.store_queries += 1
        return {n: counted[n] if n in counted else (self.graph.degree(n) if n in self.graph else 0) for n in wanted}

    def loaded(self) -> dict[str, int | float]:
        """What this query read: nodes whose edges were read, nodes and edges held, store queries."""
        return {"partial": True, "nodes_fetched": len(self.fetched), "nodes": self.graph.number_of_nodes(),
                "edges": self.edge_count, "store_queries": self.store_queries, "seconds": round(self.load_seconds, 4)}


def _build(edges: Iterable[tuple[str, str, str, float]]) -> tuple[nx.Graph, int]:
    """An undirected graph with one edge per entity pair: ``rid`` (the heaviest relation), ``rids``
    (all of them, in store order), ``weight`` (summed) and ``max_weight``. Nodes and neighbours
    keep the store's order, so traversals are deterministic for a given store."""
    import networkx as nx

    g = nx.Graph()
    return g, _add_edges(g, edges)


def _add_edges(g: nx.Graph, edges: Iterable[tuple[str, str, str, float]]) -> int:
    edge_data = g.get_edge_data  # the edge's attribute dict itself: updating it updates the graph
    add_edge = g.add_edge
    count = 0
    for rid, s, t, w in edges:
        count += 1
        w = float(w or 0.0)
        data = edge_data(s, t)
        if data is None:
            add_edge(s, t, rid=rid, rids=[rid], weight=w, max_weight=w)
        else:
            data["rids"].append(rid)
            data["weight"] += w
            if w > data["max_weight"]:
                data["rid"], data["max_weight"] = rid, w
    return count


def _key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def _join(meet: str, pred: dict, succ: dict) -> list[str]:
    left: deque[str] = deque()
    node: str | None = meet
    while node is not None:
        left.appendleft(node)
        node = pred.get(node)
    node = succ.get(meet)
    while node is not None:
        left.append(node)
        node = succ.get(node)
    return list(left)


def load_graph(store: GraphStore, version: tuple | None = None) -> MemoryGraph:
    """The store's graph, read now (``version``: the graph version read before it; read first when not
    given, so a commit landing between the two reads makes the version stale, never the graph)."""
    if version is None:
        version = store.graph_version()
    gc_was_enabled = gc.isenabled()
    gc.disable()  # all_edges builds one tuple per relation
    try:
        edges = store.all_edges()
    finally:
        if gc_was_enabled:
            gc.enable()
    return MemoryGraph(edges, version)


class GraphCache:
    """The in-memory graph of one store, reloaded when the store's graph version changes."""

    def __init__(self) -> None:
        self._graph: MemoryGraph | None = None
        self._lock = threading.Lock()
        self._size: tuple[tuple, int] | None = None  # (graph version, relations) of the last size check

    @property
    def current(self) -> MemoryGraph | None:
        """The graph held now (possibly stale), without touching the store."""
        return self._graph

    def get(self, store: GraphSearch, force: bool = False, max_relations: int | None = None) -> MemoryGraph:
        """The whole graph, loaded once per version; a graph of more than ``max_relations`` relations is
        never loaded: each call gets a fresh :class:`PartialGraph` that reads what its query touches."""
        version = store.graph_version()
        cached = self._graph
        if not force and cached is not None and cached.version == version:
            return cached
        if max_relations is not None and self.relations(store, version) > max_relations:
            self._graph = None
            return PartialGraph(store, version)
        with self._lock:
            cached = self._graph
            if not force and cached is not None and cached.version == version:
                return cached
            self._graph = None  # let the old graph go before the new one is built
            del cached
            graph = load_graph(store, version)
            self._graph = graph
            if graph.edge_count >= FREEZE_ABOVE_EDGES:
                # A large graph is ~1M long-lived dicts and lists; every full (generation 2) collection would
                # walk them all (~1 s at 240k edges, a p95 killer). Freezing moves the objects alive now out
                # of the collector's sight; they are still freed by reference counting when dropped.
                gc.freeze()
            return graph

    def relations(self, store: Counts, version: tuple) -> int:
        """The store's relation count at ``version`` (read once per version, from the count the store
        keeps with the version: no table is counted)."""
        if self._size is None or self._size[0] != version:
            self._size = (version, store.versioned_rows("relations"))
        return self._size[1]
