"""The knowledge graph in memory, for path finding and neighbourhoods at query time.

An undirected :class:`networkx.Graph` over entity ids; each edge carries ``rid`` (the relation
id; when several relations join the same pair, the heaviest), ``rids`` (all of them),
``weight`` (their summed weight) and ``max_weight``. Direction is kept in the store; paths
ignore it (thesis 000 §3.3.2 builds subgraphs from shortest paths between matched nodes,
whatever their direction).

Loading reads ``store.all_edges()`` once and is cached on the store object under a cheap
"graph version" (:func:`graph_version`, two indexed SQLite lookups) so repeated queries
reuse the same graph and a new or deleted relation triggers a reload. Weights in memory are a
snapshot: rankings that need current weights read them from the store.
"""

from __future__ import annotations

import gc
import threading
import time
from collections import deque
from collections.abc import Iterable, Sequence

import networkx as nx

_CACHE_ATTR = "_scholargraph_memory_graph"
FREEZE_ABOVE_EDGES = 20_000
_LOCK = threading.Lock()


class MemoryGraph:
    def __init__(self, edges: Iterable[tuple[str, str, str, float]], version: tuple = ()):
        started = time.perf_counter()
        adj: dict[str, dict[str, dict]] = {}
        count = 0
        gc_was_enabled = gc.isenabled()
        gc.disable()  # hundreds of thousands of new dicts: the cyclic GC would rescan them again and again
        try:
            count = self._fill(adj, edges)
        finally:
            if gc_was_enabled:
                gc.enable()
        g = _graph_from_adjacency(adj)
        self.graph = g
        self.version = version
        self.edge_count = count
        self.load_seconds = time.perf_counter() - started

    @staticmethod
    def _fill(adj: dict[str, dict[str, dict]], edges: Iterable[tuple[str, str, str, float]]) -> int:
        count = 0
        for rid, s, t, w in edges:
            count += 1
            w = float(w or 0.0)
            nbrs = adj.get(s)
            if nbrs is None:
                nbrs = adj[s] = {}
            data = nbrs.get(t)
            if data is None:
                data = {"rid": rid, "rids": [rid], "weight": w, "max_weight": w}
                nbrs[t] = data
                adj.setdefault(t, {})[s] = data  # one dict shared by both directions, as networkx does
            else:
                data["rids"].append(rid)
                data["weight"] += w
                if w > data["max_weight"]:
                    data["rid"], data["max_weight"] = rid, w
        return count

    # -- basic access --------------------------------------------------------------------

    def __contains__(self, node: object) -> bool:
        return node in self.graph

    def degree(self, node: str) -> int:
        return self.graph.degree(node) if node in self.graph else 0

    def neighbours(self, node: str) -> list[str]:
        return list(self.graph.adj[node]) if node in self.graph else []

    def edge_rids(self, a: str, b: str) -> list[str]:
        data = self.graph.adj.get(a, {}).get(b)
        return list(data["rids"]) if data else []

    def incident(self, node: str) -> list[tuple[str, list[str]]]:
        """(neighbour, relation ids) for every edge at ``node``."""
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
            for u in front:
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
        present = [n for n in dict.fromkeys(nodes) if n in self.graph]
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


def _graph_from_adjacency(adj: dict[str, dict[str, dict]]) -> nx.Graph:
    """An undirected networkx graph over ``adj`` (node -> neighbour -> shared edge data).

    Filling networkx's own dict-of-dicts is ~10x faster than ``add_edges_from`` for 10^5+ edges;
    when a networkx release stores graphs differently, the public (slower) API is used instead."""
    g = nx.Graph()
    if type(getattr(g, "_adj", None)) is dict and type(getattr(g, "_node", None)) is dict \
            and g.adjlist_inner_dict_factory is dict and g.node_attr_dict_factory is dict:
        g._adj.update(adj)
        g._node.update((n, {}) for n in adj)
        return g
    g.add_edges_from((s, t, d) for s, nbrs in adj.items() for t, d in nbrs.items() if s <= t)
    return g


def _key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def _join(meet: str, pred: dict, succ: dict) -> list[str]:
    left: deque[str] = deque()
    node = meet
    while node is not None:
        left.appendleft(node)
        node = pred.get(node)
    node = succ.get(meet)
    while node is not None:
        left.append(node)
        node = succ.get(node)
    return list(left)


def graph_version(store) -> tuple:
    """Cheap fingerprint of the relations table: (count, last rowid, id of the last row).

    Adding a relation raises the last rowid, deleting one lowers the count, re-keying one (entity
    merge/split) inserts a new row; the last row's id tells apart a deleted-then-reused rowid.
    Each statement is answered from an index or the end of the b-tree (no table scan)."""
    with store._lock:
        count = store.conn.execute("SELECT COUNT(*) FROM relations").fetchone()[0]
        last = store.conn.execute("SELECT rowid, id FROM relations ORDER BY rowid DESC LIMIT 1").fetchone()
    return (int(count), int(last[0]), str(last[1])) if last else (int(count), 0, "")


def load_graph(store, force: bool = False) -> MemoryGraph:
    """The store's graph, loaded once per graph version and cached on the store object."""
    version = graph_version(store)
    cached: MemoryGraph | None = getattr(store, _CACHE_ATTR, None)
    if not force and cached is not None and cached.version == version:
        return cached
    with _LOCK:
        cached = getattr(store, _CACHE_ATTR, None)
        if not force and cached is not None and cached.version == version:
            return cached
        gc_was_enabled = gc.isenabled()
        gc.disable()  # all_edges builds one tuple per relation
        try:
            with store._lock:
                edges = store.all_edges()
        finally:
            if gc_was_enabled:
                gc.enable()
        graph = MemoryGraph(edges, version)
        del edges
        setattr(store, _CACHE_ATTR, graph)
        if graph.edge_count >= FREEZE_ABOVE_EDGES:
            # A large graph is ~1M long-lived dicts and lists; every full (generation 2) collection would
            # walk them all (~1 s at 240k edges, a p95 killer). Freezing moves the objects alive now out
            # of the collector's sight; they are still freed by reference counting when dropped.
            gc.freeze()
        return graph


def cached_graph(store) -> MemoryGraph | None:
    """The graph cached on ``store`` (possibly stale), without touching the database."""
    return getattr(store, _CACHE_ATTR, None)
