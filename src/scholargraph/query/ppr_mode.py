"""The ``ppr`` query mode: seeds from the question, personalised PageRank (:mod:`.ppr`), ranked parts.

Seeds (HippoRAG 2, §3): the entities the question matches (:func:`.graph_modes.match_nodes`: its
terms' nearest entities and exact names), the two ends of the ``ppr_facts`` relations most similar
to the question (its "facts"), and the question's own passages with weight ``ppr_passage_weight``.
Passages come out ranked by PageRank; entities likewise; the relations are the matched facts.
"""

from __future__ import annotations

from ..config import QuerySettings
from ..graph.memory import MemoryGraph
from ..store.base import Store
from .graph_modes import GraphParams, Part, QueryVectors, match_nodes
from .passages import PassageLists
from .ppr import PassageGraph

DERIVED_KEY = "ppr_passage_graph"


def passage_graph(store: Store, graph: MemoryGraph) -> tuple[PassageGraph, bool]:
    """The entity + passage matrix for ``graph``'s version, built once (and again when chunks were
    added or removed without a relation changing). Returns (matrix, built now)."""
    chunks = store.count("chunks")
    cached = graph.derived.get(DERIVED_KEY)
    if isinstance(cached, tuple) and cached[0] == chunks:
        return cached[1], False
    built = PassageGraph.build(store)
    graph.derived[DERIVED_KEY] = (chunks, built)
    return built, True


def ppr_retrieve(store: Store, graph: MemoryGraph, vecs: QueryVectors, params: GraphParams, dim: int,
                 passages: PassageLists, settings: QuerySettings) -> Part:
    part = Part("ppr")
    pgraph, built = passage_graph(store, graph)
    if built:
        part.details["passage_graph_loaded"] = {"nodes": len(pgraph.nodes), "seconds": round(pgraph.load_seconds, 4)}
    seeds = dict(match_nodes(store, vecs, params, dim))
    facts: list[tuple[str, float]] = []
    index = store.vector_index("relation", dim)
    if settings.ppr_facts and len(index):
        facts = [(rid, s) for rid, s in index.search(vecs.query, settings.ppr_facts) if s >= params.edge_threshold]
        for rid, r in store.get_relations([rid for rid, _ in facts], sources=False).items():
            score = dict(facts)[rid]
            for end in (r.source_id, r.target_id):
                seeds[end] = max(seeds.get(end, 0.0), score)
    best = passages.fused[0][1] if passages.fused else 0.0
    passage_seeds = ({c: settings.ppr_passage_weight * s / best for c, s in passages.fused} if best > 0 else {})
    ranked, entities = pgraph.rank(seeds, passage_seeds, settings.ppr_damping, max(params.top_k, settings.fusion_depth))
    part.chunks = ranked
    part.entities = entities[: params.max_items]
    part.relations = facts[: params.max_items]
    part.details["seeds"] = sorted(seeds, key=lambda e: -seeds[e])[:20]
    return part
