"""Graph retrieval modes over the stored knowledge graph (thesis 000 §3.3.2–3.4).

* ``local``    — entities matched by low-level keywords plus their whole one-hop neighbourhood
                 (LightRAG-style; kept for comparison, and used for the ``-subgraph`` ablation).
* ``subgraph`` — §3.3.2: node matching, union of shortest paths between matched nodes, pruning of
                 edges irrelevant to the query, text units ranked by frequency in the subgraph,
                 one-hop expansion with relevant edges (truncation happens in :mod:`.fusion`).
* ``global``   — §3.3.3: relations matched by high-level keywords, their nodes by degree, edges
                 ranked by relevance x weight (and degree), text units ranked by edge relevance.
* ``hybrid``   — §3.4: subgraph (or local) + global, fused by :func:`.fusion.fuse`.

Every mode ranks its text units by relevance to the question (dense + full-text, among the units
it selected) weighted by graph support (:func:`rank_chunks`), not by support alone; the engine
then fuses them with the question's own passages (:mod:`.passages`).

The functions here only rank ids (entities, relations, chunks) with scores; :mod:`.fusion`
turns them into numbered sources within token budgets. Every vector search goes through the
store's :class:`ExactVectorIndex` (batched with ``search_many``) and graph traversal is bounded
(path length, pairs, visited nodes, neighbours per node), so a query costs a few matrix products
and a few small SQL lookups whatever the size of the workspace.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from ..graph.memory import MemoryGraph
from ..store.base import GraphSearch, GraphStore, SourceLimit
from ..text.names import normalise_name
from .rank import relevance_by_support

# Bounds that keep one query cheap on a large graph.
MAX_MATCHED = 12  # matched nodes that enter path finding (66 pairs)
MAX_NEIGHBOURS = 400  # incident edges considered per node (heaviest first)
EXPANSION_PER_NODE = 5  # relevant edges added per matched node in step 5
MAX_VISITS = 20000  # nodes one bidirectional BFS may visit
SOURCES_PER_ITEM = 20  # source chunks read per entity or relation beyond the question's own passages


@dataclass
class GraphParams:
    top_k: int = 10  # text units; entities and relations get 2 x top_k
    node_threshold: float = 0.4
    nodes_per_keyword: int = 3
    edge_threshold: float = 0.3
    max_path_length: int = 4

    @property
    def max_items(self) -> int:
        return 2 * self.top_k


@dataclass
class QueryVectors:
    """The question and its keywords, embedded (rows L2-normalised)."""

    query: np.ndarray
    low: list[str]
    low_vecs: np.ndarray
    high: list[str]
    high_vecs: np.ndarray
    text: str = ""  # the question itself (full-text relevance of text units)
    passages: tuple[str, ...] = ()  # the question's own passages (chunk ids, best first)

    def sources(self) -> SourceLimit:
        """The source chunks read per entity or relation a mode selected: those among the question's
        passages, then the first others in document order, at most ``SOURCES_PER_ITEM`` of them. A hub
        entity stated in thousands of chunks gives its relevant ones, not all of them."""
        return SourceLimit(len(self.passages) + SOURCES_PER_ITEM, self.passages)

    def local_probe(self) -> np.ndarray:
        """Vectors an edge is compared with for relevance in local retrieval: question + low-level keywords."""
        return np.vstack([self.query[None, :], self.low_vecs]) if len(self.low) else self.query[None, :]


@dataclass
class Part:
    """Ranked ids (best first) with scores, from one mode or a fusion of modes."""

    mode: str
    entities: list[tuple[str, float]] = field(default_factory=list)
    relations: list[tuple[str, float]] = field(default_factory=list)
    chunks: list[tuple[str, float]] = field(default_factory=list)
    details: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


# -- shared steps -------------------------------------------------------------------------


def match_nodes(store: GraphSearch, vecs: QueryVectors, params: GraphParams, dim: int) -> dict[str, float]:
    """Step 1 (node matching): for each low-level keyword, the entities whose vectors are most
    similar (top ``nodes_per_keyword`` with cosine >= ``node_threshold``); an entity whose name or
    alias equals the keyword (normalised) always matches, with score 1. Best first."""
    scores: dict[str, float] = {}
    if not vecs.low:
        return scores
    keys = {normalise_name(k): k for k in vecs.low}
    keys.pop("", None)
    if keys:
        for _key, eid in store.entities_by_keys(list(keys)).items():
            scores[eid] = 1.0
    index = store.vector_index("entity", dim)
    if index:  # (not len(): on PostgreSQL a count of every row)
        for hits in index.search_many(vecs.low_vecs, params.nodes_per_keyword):
            for eid, score in hits:
                if score >= params.node_threshold and score > scores.get(eid, -2.0):
                    scores[eid] = float(score)
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    return dict(ranked)


def relevance(store: GraphSearch, ids, probes: np.ndarray, dim: int) -> dict[str, float]:
    """Max cosine between each relation's vector and any probe vector (relations without a vector: 0)."""
    ids = list(dict.fromkeys(ids))
    if not ids:
        return {}
    out = {i: 0.0 for i in ids}
    # one call, scored where the vectors are (PostgreSQL: one number per relation comes back, not
    # its vector; a hub's relations are thousands)
    out.update(store.vector_index("relation", dim).similarities(ids, probes))
    return out


def incident_rids(graph: MemoryGraph, node: str, limit: int = MAX_NEIGHBOURS) -> list[tuple[str, str]]:
    """(relation id, neighbour) at ``node``, heaviest edges first, at most ``limit`` edges."""
    adj = graph.adjacency(node)
    if not adj:
        return []
    items: Iterable[tuple[str, dict]] = adj.items()
    if len(adj) > limit:
        items = sorted(items, key=lambda kv: -kv[1]["weight"])[:limit]
    return [(rid, nb) for nb, data in items for rid in data["rids"]]


def rank_chunks(store: GraphSearch, support: Mapping[str, float], vecs: QueryVectors, dim: int,
                limit: int) -> list[tuple[str, float]]:
    """Text units the graph selected (``support``: unit -> how much of the selected graph it states),
    ranked by relevance to the question (dense similarity and full-text match, among these units)
    weighted by that support (:func:`.rank.relevance_by_support`)."""
    if not support:
        return []
    index = store.vector_index("chunk", dim)
    dense = index.search(vecs.query, len(support), allowed=set(support)) if index else []
    lexical = store.lexical_search(vecs.text, len(support), chunk_ids=list(support)) if vecs.text else []
    return relevance_by_support(support, dense, lexical, limit=limit)


def _chunks_of(items) -> dict[str, list[str]]:
    return {i: list(x.chunk_ids) for i, x in items.items()}


# -- local (LightRAG-style one-hop) ---------------------------------------------------------


def local_retrieve(store: GraphSearch, graph: MemoryGraph, vecs: QueryVectors, params: GraphParams, dim: int) -> Part:
    """Matched entities and their one-hop neighbourhood, without relevance pruning. Relations are
    ranked by the degree of their ends, then weight; text units by frequency."""
    part = Part("local")
    matched = match_nodes(store, vecs, params, dim)
    top = list(matched)[: max(params.max_items // 2, 1)]
    part.details["matched"] = top
    rels: dict[str, tuple[float, int]] = {}
    neighbours: dict[str, int] = {}
    graph.fetch(top)  # a partial graph: the matched entities' edges in one store query
    incident = {node: incident_rids(graph, node) for node in top}
    # the neighbours' degrees (a partial graph counts them in the store, without reading their edges)
    degree = graph.degrees([*top, *(nb for pairs in incident.values() for _, nb in pairs)])
    for node in top:
        adj = graph.adjacency(node) or {}
        for rid, nb in incident[node]:
            data = adj[nb]
            rels.setdefault(rid, (degree[node] + degree[nb], data["weight"]))
            if nb not in matched:
                neighbours[nb] = degree[nb]
    ranked_rels = sorted(rels, key=lambda r: (-rels[r][0], -rels[r][1], r))[: params.max_items]
    part.relations = [(r, float(rels[r][0])) for r in ranked_rels]
    part.entities = [(e, matched[e]) for e in top]
    part.entities += [(e, 0.0) for e in sorted(neighbours, key=lambda n: (-neighbours[n], n))]
    part.entities = part.entities[: params.max_items]
    counts: Counter[str] = Counter()
    for chunk_ids in _chunks_of(store.get_entities(top, vecs.sources())).values():
        counts.update(set(chunk_ids))
    for chunk_ids in _chunks_of(store.get_relations(ranked_rels, vecs.sources())).values():
        counts.update(set(chunk_ids))
    part.chunks = rank_chunks(store, counts, vecs, dim, params.top_k)
    part.details["neighbours"] = list(neighbours)
    return part


# -- subgraph (§3.3.2) ----------------------------------------------------------------------


@dataclass
class _Subgraph:
    """Steps 1-3 of §3.3.2: the matched nodes, the shortest paths between them and the path edges
    relevant enough to keep (relation id -> relevance, and its node pair)."""

    matched: dict[str, float]
    seeds: list[str]
    paths: list
    path_rids: dict[str, tuple[str, str]]
    kept: dict[str, float]
    nodes: list[str]  # seeds, then path nodes an edge kept


def _pruned_subgraph(store: GraphSearch, graph: MemoryGraph, vecs: QueryVectors, params: GraphParams, dim: int) -> _Subgraph:
    # 1. node matching
    matched = match_nodes(store, vecs, params, dim)
    seeds = list(matched)[:MAX_MATCHED]
    # 2. union of shortest paths between every pair of matched nodes
    path_nodes, path_pairs, paths = graph.union_of_shortest_paths(
        seeds, params.max_path_length, max_pairs=MAX_MATCHED * (MAX_MATCHED - 1) // 2, max_visits=MAX_VISITS)
    path_rids = {rid: pair for pair in path_pairs for rid in graph.edge_rids(*pair)}
    # 3. pruning: keep edges relevant to the question/keywords, drop nodes left isolated
    rel = relevance(store, path_rids, vecs.local_probe(), dim)
    kept = {rid: s for rid, s in rel.items() if s >= params.edge_threshold}
    alive = {n for r in kept for n in path_rids[r]}
    nodes = list(seeds) + sorted((path_nodes & alive) - set(seeds))
    return _Subgraph(matched, seeds, paths, path_rids, kept, nodes)


def _expand(store: GraphSearch, graph: MemoryGraph, sub: _Subgraph, vecs: QueryVectors, params: GraphParams,
            dim: int) -> tuple[list[tuple[str, float]], dict[str, tuple[str, str]]]:
    """Step 5: relevant edges from the matched nodes to their one-hop neighbours, best first, at most
    EXPANSION_PER_NODE per node; also every candidate edge's (node, neighbour)."""
    candidates: dict[str, tuple[str, str]] = {}
    graph.fetch(sub.seeds)
    for node in sub.seeds:
        for rid, nb in incident_rids(graph, node):
            if rid not in sub.kept and rid not in candidates:
                candidates[rid] = (node, nb)
    crel = relevance(store, candidates, vecs.local_probe(), dim)
    expansion: list[tuple[str, float]] = []
    per_node: Counter = Counter()
    for rid in sorted(crel, key=lambda r: (-crel[r], r)):
        if crel[rid] < params.edge_threshold:
            break
        node = candidates[rid][0]
        if per_node[node] < EXPANSION_PER_NODE:
            per_node[node] += 1
            expansion.append((rid, crel[rid]))
    return expansion, candidates


def _by_score(items: Iterable[tuple[str, float]]) -> list[tuple[str, float]]:
    return sorted(items, key=lambda kv: (-kv[1], kv[0]))


def _subgraph_entities(sub: _Subgraph, expansion: list[tuple[str, float]], reached: list[str],
                       candidates: dict[str, tuple[str, str]]) -> list[tuple[str, float]]:
    """Matched nodes (their match score), then the other subgraph nodes, then the nodes the
    expansion reached, each by the best relevance of an edge that reaches it."""
    node_score: dict[str, float] = {}
    for rid, s in sub.kept.items():
        for n in sub.path_rids[rid]:
            node_score[n] = max(node_score.get(n, 0.0), s)
    for rid, s in expansion:
        nb = candidates[rid][1]
        node_score[nb] = max(node_score.get(nb, 0.0), s)
    entities = [(n, sub.matched[n]) for n in sub.seeds]
    entities += _by_score((n, node_score.get(n, 0.0)) for n in sub.nodes if n not in sub.matched)
    entities += _by_score((n, node_score.get(n, 0.0)) for n in reached)
    return entities


def _subgraph_chunk_counts(store: GraphStore, sub: _Subgraph, relation_ids: list[str],
                           sources: SourceLimit) -> defaultdict[str, float]:
    """Step 4: text units of the subgraph's nodes and edges, by frequency (expansion edges count half)."""
    counts: defaultdict[str, float] = defaultdict(float)
    for rid, r in store.get_relations(relation_ids, sources).items():
        w = 1.0 if rid in sub.kept else 0.5
        for c in set(r.chunk_ids):
            counts[c] += w
    for e in store.get_entities(sub.nodes, sources).values():
        for c in set(e.chunk_ids):
            counts[c] += 1.0
    return counts


def subgraph_retrieve(store: GraphSearch, graph: MemoryGraph, vecs: QueryVectors, params: GraphParams, dim: int) -> Part:
    part = Part("subgraph")
    sub = _pruned_subgraph(store, graph, vecs, params, dim)
    expansion, candidates = _expand(store, graph, sub, vecs, params, dim)
    reached = list(dict.fromkeys(nb for nb in (candidates[rid][1] for rid, _ in expansion) if nb not in sub.nodes))
    part.details.update({
        "matched": sub.seeds, "paths": sub.paths, "pruned": sorted(set(sub.path_rids) - set(sub.kept)),
        "subgraph_nodes": list(sub.nodes), "subgraph_relations": sorted(sub.kept),
        "expansion": [r for r, _ in expansion],
    })
    # ranking: subgraph edges by relevance, then expansion edges
    ranked_core = _by_score(sub.kept.items())
    part.relations = (ranked_core + expansion)[: params.max_items]
    part.entities = _subgraph_entities(sub, expansion, reached, candidates)[: params.max_items]
    counts = _subgraph_chunk_counts(store, sub, [r for r, _ in ranked_core] + [r for r, _ in expansion], vecs.sources())
    part.chunks = rank_chunks(store, counts, vecs, dim, params.top_k)
    return part


# -- global (§3.3.3) ------------------------------------------------------------------------


def global_retrieve(store: GraphSearch, graph: MemoryGraph, vecs: QueryVectors, params: GraphParams, dim: int) -> Part:
    part = Part("global")
    index = store.vector_index("relation", dim)
    if not vecs.high or not index:
        return part
    # 1. edges whose vectors are close to the high-level keywords
    per_keyword = max(params.max_items, 20)
    rel: dict[str, float] = {}
    for hits in index.search_many(vecs.high_vecs, per_keyword):
        for rid, score in hits:
            if score >= params.edge_threshold and score > rel.get(rid, -2.0):
                rel[rid] = float(score)
    if not rel:
        return part
    rels = store.get_relations(rel, vecs.sources())
    # 2.-4. nodes by degree; edges ranked by relevance x weight, with the ends' degree
    composite: dict[str, float] = {}
    degrees = graph.degrees(n for r in rels.values() for n in (r.source_id, r.target_id))
    for rid, r in rels.items():
        degree = degrees[r.source_id] + degrees[r.target_id]
        composite[rid] = rel[rid] * (1.0 + 0.05 * math.log1p(max(r.weight, 0.0)) + 0.03 * math.log1p(degree))
    ranked = sorted(composite, key=lambda r: (-composite[r], r))[: params.max_items]
    part.relations = [(r, composite[r]) for r in ranked]
    ends: dict[str, int] = {}
    for rid in ranked:
        for n in (rels[rid].source_id, rels[rid].target_id):
            ends[n] = degrees[n]
    part.entities = [(n, float(d)) for n, d in sorted(ends.items(), key=lambda kv: (-kv[1], kv[0]))][: params.max_items]
    # 5. text units of those edges, by the edges' relevance to the high-level keywords
    chunk_score: dict[str, float] = {}
    chunk_count: Counter = Counter()
    for rid in ranked:
        for c in set(rels[rid].chunk_ids):
            chunk_count[c] += 1
            chunk_score[c] = max(chunk_score.get(c, -2.0), rel[rid])
    # support: the best edge relevance, then the number of matched edges stated
    support = {c: chunk_score[c] + 0.01 * chunk_count[c] for c in chunk_score}
    part.chunks = rank_chunks(store, support, vecs, dim, params.top_k)
    part.details["matched_relations"] = ranked
    return part
