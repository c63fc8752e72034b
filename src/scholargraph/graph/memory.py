"""The knowledge graph in memory, for path finding and neighbourhoods at query time.

An undirected :class:`networkx.Graph` over entity ids; each edge carries ``rid`` (the relation
id; when several relations join the same pair, the heaviest), ``rids`` (all of them) and
``weight`` (their summed weight). Direction is kept in the store; paths ignore it (thesis 000
§3.3.2 builds subgraphs from shortest paths between matched nodes, whatever their direction).

Loading reads ``store.all_edges()`` once and is cached on the store object under a cheap
"graph version" — ``(relation count, max relation rowid)`` from SQLite — so repeated queries
reuse the same graph and a new or deleted relation triggers a reload. Weights in memory are a
snapshot: rankings that need current weights read them from the store.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterable, Sequence

import networkx as nx

_CACHE_ATTR = "_scholargraph_memory_graph"
_LOCK = threading.Lock()


class MemoryGraph:
    def __init__(self, edges: Iterable[tuple[str, str, str, float]], version: tuple = ()):
        started = time.perf_counter()
        pairs: dict[tuple[str, str], list] = {}
        for rid, s, t, w in edges:
            key = (s, t) if s <= t else (t, s)
            w = float(w or 0.0)
            cur = pairs.get(key)
            if cur is None:
                pairs[key] = [rid, [rid], w, w]
            else:
                cur[1].append(rid)
                cur[2] += w
                if w > cur[3]:
                    cur[0], cur[3] = rid, w
        g = nx.Graph()
        g.add_edges_from((s, t, {"rid": v[0], "rids": v[1], "weight": v[2]}) for (s, t), v in pairs.items())
        self.graph = g
        self.version = version
        self.edge_count = sum(len(v[1]) for v in pairs.values())
        self.load_seconds = time.perf_counter() - started

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
        adj = self.graph.adj
        if source not in adj or target not in adj:
            return None
        if source == target:
            return [source]
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
                return _join(meet, pred, succ)
            if visits > max_visits:
                return None
            if forward:
                front_s = nxt
            else:
                front_t = nxt
        return None

    def union_of_shortest_paths(self, nodes: Sequence[str], max_length: int = 4, max_pairs: int = 66,
                                max_visits: int = 20000) -> tuple[set[str], set[tuple[str, str]], list[list[str]]]:
        """Nodes, edges (sorted pairs) and the paths joining every pair of ``nodes`` (in order,
        at most ``max_pairs`` pairs, each path at most ``max_length`` edges)."""
        keep_nodes: set[str] = set()
        keep_edges: set[tuple[str, str]] = set()
        paths: list[list[str]] = []
        present = [n for n in dict.fromkeys(nodes) if n in self.graph]
        pairs = 0
        for i, a in enumerate(present):
            for b in present[i + 1:]:
                if pairs >= max_pairs:
                    break
                pairs += 1
                path = self.shortest_path(a, b, max_length, max_visits)
                if not path or len(path) < 2:
                    continue
                paths.append(path)
                keep_nodes.update(path)
                keep_edges.update(_key(u, v) for u, v in zip(path, path[1:]))
        return keep_nodes, keep_edges, paths


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
    """Cheap fingerprint of the relations table: changes whenever a relation is added or removed."""
    with store._lock:
        row = store.conn.execute("SELECT COUNT(*), COALESCE(MAX(rowid), 0) FROM relations").fetchone()
    return (int(row[0]), int(row[1]))


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
        with store._lock:
            edges = store.all_edges()
        graph = MemoryGraph(edges, version)
        setattr(store, _CACHE_ATTR, graph)
        return graph


def cached_graph(store) -> MemoryGraph | None:
    """The graph cached on ``store`` (possibly stale), without touching the database."""
    return getattr(store, _CACHE_ATTR, None)
