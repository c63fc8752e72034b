"""The ``ppr`` query mode: seeds from the question, personalised PageRank (:mod:`.ppr`), ranked parts.

Seeds (:mod:`.ppr`): the question's best ``ppr_seed_passages`` passages (dense + lexical fusion),
weighted by their fused score, and the entities the question matches (:func:`.graph_modes.match_nodes`:
its terms' nearest entities and exact names, and the two ends of the ``ppr_facts`` relations most
similar to the question, its "facts", HippoRAG 2-style) whose match score reaches
``ppr_entity_min_score`` (default 1: the entities the question names exactly, :func:`.ppr.question_seeds`).
The walk also crosses between entity names that contain one another (``ppr_name_links``).
Passages come out ranked by PageRank; entities likewise; the relations are the matched facts.
The passages already seed the walk, so the mode's text units are not fused with them again.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..config import QuerySettings
from ..graph.memory import MemoryGraph, PartialGraph
from ..store.base import GraphSearch, GraphStore, SourceLimit
from .graph_modes import GraphParams, Part, QueryVectors, match_nodes
from .passages import PassageLists
from .ppr import PassageGraph, question_seeds
from .ppr_settings import PPRSettings

DERIVED_KEY = "ppr_passage_graph"


def passage_graph(store: GraphSearch, graph: MemoryGraph, name_link_weight: float = 0.0) -> tuple[PassageGraph, bool]:
    """The entity + passage matrix for ``graph``'s version, built once (and again when chunks were
    added, removed or re-keyed without a relation changing: the chunks' version). Returns (matrix,
    built now)."""
    chunks = store.content_version("chunks")
    cached = graph.derived.get(DERIVED_KEY)
    if isinstance(cached, tuple) and cached[:2] == (chunks, name_link_weight):
        return cached[2], False
    built = PassageGraph.build(store, name_link_weight)
    graph.derived[DERIVED_KEY] = (chunks, name_link_weight, built)
    return built, True


def neighbourhood_graph(store: GraphStore, graph: PartialGraph, entity_seeds: Iterable[str], passage_seeds: Iterable[str],
                        settings: PPRSettings, passages: Sequence[str] = ()) -> PassageGraph:
    """The matrix of a question's part of a large graph: the seed entities and those stated in the
    seed passages, the entities up to ``local_hops`` hops from them (at most ``local_entities``;
    a hop that would pass it is taken only as far as it fits, neighbours in the store's order), the
    relations between them that the walk out read (those between two entities of the last hop are
    not read: the matrix is the hops, not every edge among their ends) and the passages stating them
    (at most ``local_passages`` per entity, the question's ``passages`` first)."""
    start = list(dict.fromkeys([*entity_seeds, *(e for es in store.entities_in_chunks(list(passage_seeds)).values()
                                                 for e in es)]))
    reached = dict.fromkeys(start[: settings.local_entities])
    frontier = list(reached)
    for _ in range(settings.local_hops):
        graph.fetch(frontier)
        step = [n for u in frontier for n in graph.neighbours(u) if n not in reached]
        room = settings.local_entities - len(reached)
        frontier = list(dict.fromkeys(step))[: max(room, 0)]
        reached.update(dict.fromkeys(frontier))
        if not frontier or room <= len(frontier):
            break
    inside = list(reached)
    edges = [(data["rid"], a, b, data["weight"]) for a in inside if a in graph.fetched
             for b, data in (graph.adjacency(a) or {}).items() if b in reached and (b not in graph.fetched or a < b)]
    return PassageGraph.assemble(store, inside, edges, settings.name_links,
                                 SourceLimit(settings.local_passages, tuple(passages)))


def ppr_retrieve(store: GraphSearch, graph: MemoryGraph, vecs: QueryVectors, params: GraphParams, dim: int,
                 passages: PassageLists, settings: QuerySettings, ppr: PPRSettings) -> Part:
    part = Part("ppr")
    seeds = dict(match_nodes(store, vecs, params, dim))
    facts: list[tuple[str, float]] = []
    index = store.vector_index("relation", dim)
    if ppr.facts and index:
        facts = [(rid, s) for rid, s in index.search(vecs.query, ppr.facts) if s >= params.edge_threshold]
        for rid, r in store.get_relations([rid for rid, _ in facts], sources=False).items():
            score = dict(facts)[rid]
            for end in (r.source_id, r.target_id):
                seeds[end] = max(seeds.get(end, 0.0), score)
    best = passages.fused[0][1] if passages.fused else 0.0
    top = passages.fused[: ppr.seed_passages]
    passage_seeds = {c: s / best for c, s in top} if best > 0 else {}
    exact = store.get_entities([e for e, w in seeds.items() if w >= 1.0], sources=False)
    entity_seeds = question_seeds(seeds, {e: x.name for e, x in exact.items()}, vecs.text,
                                  ppr.entity_min_score, ppr.entity_weight)
    if isinstance(graph, PartialGraph):  # too large to hold whole: the walk stays in the seeds' neighbourhood
        pgraph = neighbourhood_graph(store, graph, entity_seeds, passage_seeds, ppr, [c for c, _ in passages.fused])
        part.details["passage_graph_loaded"] = {"partial": True, "entities": pgraph.n_entities,
                                                "nodes": len(pgraph.nodes), "edges": int(pgraph.adjacency.nnz // 2),
                                                "seconds": round(pgraph.load_seconds, 4)}
    else:
        pgraph, built = passage_graph(store, graph, ppr.name_links)
        if built:
            part.details["passage_graph_loaded"] = {"nodes": len(pgraph.nodes), "seconds": round(pgraph.load_seconds, 4)}
    ranked, entities = pgraph.rank(entity_seeds, passage_seeds, ppr.damping,
                                   max(params.top_k, settings.fusion_depth))
    reached = {c for c, _ in ranked}
    floor = min((sc for _, sc in ranked), default=1.0)
    # passages the walk did not reach follow in their fused order, so that top_k means k
    rest = [c for c, _ in passages.fused if c not in reached]
    part.chunks = ranked + [(c, floor * 0.5 ** (i + 1)) for i, c in enumerate(rest)]
    part.entities = entities[: params.max_items]
    part.relations = facts[: params.max_items]
    part.details["seeds"] = {"passages": list(passage_seeds),
                             "entities": sorted(entity_seeds, key=lambda e: -entity_seeds[e])[:20]}
    return part
