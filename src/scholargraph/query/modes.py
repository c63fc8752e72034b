"""The engine's own query modes, registered by the ``core`` plug-in (:mod:`scholargraph.profiles.core`).

``naive`` (the question's passages: dense + full-text, fused), ``local`` (matched entities +
one-hop neighbourhood), ``subgraph`` (thesis 000 §3.3.2), ``global`` (§3.3.3), ``hybrid`` (§3.4:
subgraph + global, the default) and ``ppr`` (personalised PageRank over entities and passages,
HippoRAG 2; :mod:`.ppr_mode`). Graph modes first retrieve clues and dual-level keywords (§3.3.1,
one LLM call when an LLM is configured, offline keywords otherwise), then rank entities, relations
and text units (:mod:`.graph_modes`); their text units are fused with the question's own passages
(:mod:`.passages`), optionally reranked, and every item is numbered as a source, text units first
(:mod:`.fusion`). Every mode returns ``top_k`` text units; the token budgets bound only the
prompt context (``Retrieval.cut`` names what was left out).

Costs: ``Retrieval.usage`` holds the keyword call; ``timings`` has ``retrieval_s`` (all of
retrieval), ``keywords_llm_s`` (the keyword call inside it) and ``retrieval_excl_llm_s``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from ..config import Settings
from ..graph.memory import GraphCache, MemoryGraph, PartialGraph
from ..plugins.base import QueryContext, QueryMode, QueryRequest, plugin_settings
from .fusion import Budgets, build_sources, fuse
from .graph_modes import GraphParams, Part, QueryVectors, global_retrieve, local_retrieve, subgraph_retrieve
from .keywords import Keywords, find_clues, make_keywords, query_terms, question_keyword
from .passages import PassageLists, depth, fuse_text_units, rerank, search_passages
from .ppr_mode import ppr_retrieve
from .ppr_settings import PPRSettings
from .retrieval import Retrieval, budget_cut, merge_usage
from .sources import chunk_sources, format_context

__all__ = ["CORE_MODES", "keywords"]

# (context, request, graph, vectors, params, the question's passages) -> the ranked part of one graph mode
Search = Callable[[QueryContext, QueryRequest, MemoryGraph, QueryVectors, GraphParams, PassageLists], Part]


async def naive_retrieve(ctx: QueryContext, req: QueryRequest) -> Retrieval:
    t0 = time.perf_counter()
    retrieval = Retrieval(req.question, "naive", [], "", {})
    q, top_k = ctx.settings.query, req.k(ctx.settings)
    if ctx.store.has_rows("chunks"):
        query = await ctx.embedder.embed_one(req.question)
        passages = search_passages(ctx.store, q, req.question, query, ctx.embedder.dim, top_k)
        ranked = await _rerank(ctx, retrieval, req.question, passages.fused, top_k)
        retrieval.details["passages"] = passages.details()
        chunks = ctx.store.get_chunks(i for i, _ in ranked)
        retrieval.sources = chunk_sources(ctx.store, [(chunks[i], s) for i, s in ranked if i in chunks])
    kept, retrieval.cut, used = budget_cut(retrieval.sources, q.max_context_tokens, ctx.tokenizer.count)
    retrieval.context = format_context(kept)
    retrieval.context_tokens = {"budget": q.max_context_tokens, "used": used}
    retrieval.timings["retrieval_s"] = time.perf_counter() - t0
    return retrieval


async def _rerank(ctx: QueryContext, retrieval: Retrieval, question: str, ranked: list[tuple[str, float]],
                  top_k: int) -> list[tuple[str, float]]:
    """The optional second stage (``settings.rerank``); without a reranker, the first ``top_k``."""
    t = time.perf_counter()
    out, info = await rerank(ctx.reranker, ctx.store, question, ranked, ctx.settings.rerank.candidates, top_k)
    if info:
        retrieval.details["rerank"] = info
        retrieval.timings["rerank_s"] = time.perf_counter() - t
    return out


def _params(ctx: QueryContext, top_k: int) -> GraphParams:
    q = ctx.settings.query
    return GraphParams(top_k=top_k, node_threshold=q.node_threshold, nodes_per_keyword=q.nodes_per_keyword,
                       edge_threshold=q.edge_threshold, max_path_length=q.max_path_length)


def _budgets(ctx: QueryContext) -> Budgets:
    q = ctx.settings.query
    total = q.max_context_tokens
    ent = q.entity_tokens if q.entity_tokens is not None else total // 5
    rel = q.relation_tokens if q.relation_tokens is not None else total // 4
    return Budgets(min(ent, total), min(rel, total), total)


async def keywords(ctx: QueryContext, question: str, query_vec: np.ndarray, clues: bool = True) -> Keywords:
    """Clue retrieval (eq. 3.2) then dual-level keywords (eq. 3.3; LLM when configured)."""
    q = ctx.settings.query
    found = find_clues(ctx.store, query_vec, q.clue_threshold, q.max_clues, ctx.embedder.dim) if clues else []
    return await make_keywords(question, found, ctx.llm)


async def _query_vectors(ctx: QueryContext, req: QueryRequest, retrieval: Retrieval) -> QueryVectors:
    """Keywords (clues + LLM or offline) and the vectors of the question and of every keyword."""
    timings, dim = retrieval.timings, ctx.embedder.dim
    t = time.perf_counter()
    # one embedding call for the question and its own terms (the offline low-level keywords)
    terms = query_terms(req.question)
    first = await ctx.embedder.embed([req.question, *terms])
    query_vec = first[0]
    known = {question_keyword(req.question): query_vec, **dict(zip(terms, first[1:], strict=True))}
    kw = await keywords(ctx, req.question, query_vec, req.clues)
    timings["keywords_s"] = time.perf_counter() - t
    timings["keywords_llm_s"] = kw.llm_seconds
    retrieval.keywords = kw.to_json()
    retrieval.usage = merge_usage(kw.usage)
    retrieval.notes += kw.notes
    if not req.clues:
        retrieval.notes.append("clue retrieval disabled (-clues): keywords come from the question alone")

    t = time.perf_counter()
    if kw.clues:  # clue vectors are already in the keyword index
        index = ctx.store.vector_index("keyword", dim)
        for c in kw.clues:
            if c.text not in known and (v := index.get(c.id)) is not None:
                known[c.text] = v
    missing = [x for x in dict.fromkeys(kw.low_level + kw.high_level) if x not in known]
    if missing:
        known.update(zip(missing, await ctx.embedder.embed(missing), strict=True))

    def stack(texts: list[str]) -> np.ndarray:
        return np.stack([known[x] for x in texts]).astype(np.float32) if texts else np.zeros((0, dim), np.float32)

    timings["embed_keywords_s"] = time.perf_counter() - t
    return QueryVectors(query_vec, kw.low_level, stack(kw.low_level), kw.high_level, stack(kw.high_level),
                        req.question)


FuseWeight = Callable[[Settings], float | None]  # None: the mode's text units are not fused


def _graph_weight(settings: Settings) -> float | None:
    return settings.query.graph_weight


async def _graph_retrieve(ctx: QueryContext, req: QueryRequest, mode: str, search: Search,
                          uses_subgraph: bool, fuse: FuseWeight = _graph_weight) -> Retrieval:
    t0 = time.perf_counter()
    retrieval = Retrieval(req.question, mode, [], "", {})
    if ctx.store.has_rows("chunks"):
        await _graph_search(ctx, req, search, retrieval, uses_subgraph, fuse)
    elapsed = time.perf_counter() - t0
    retrieval.timings["retrieval_s"] = elapsed
    retrieval.timings["retrieval_excl_llm_s"] = elapsed - retrieval.timings.get("keywords_llm_s", 0.0)
    return retrieval


async def _graph_search(ctx: QueryContext, req: QueryRequest, search: Search, retrieval: Retrieval,
                        uses_subgraph: bool, fuse: FuseWeight) -> None:
    timings, dim, top_k = retrieval.timings, ctx.embedder.dim, req.k(ctx.settings)
    qv = await _query_vectors(ctx, req, retrieval)

    t = time.perf_counter()
    graphs = ctx.graphs or GraphCache()
    before = graphs.current
    graph = graphs.get(ctx.store, max_relations=ctx.settings.query.max_graph_relations)
    timings["graph_s"] = time.perf_counter() - t  # version check, plus the load when the graph changed
    if graph is not before and not graph.partial:
        retrieval.details["graph_loaded"] = {"edges": graph.edge_count, "seconds": round(graph.load_seconds, 4)}

    t = time.perf_counter()
    q = ctx.settings.query
    if uses_subgraph and not req.subgraph:
        retrieval.notes.append("subgraph disabled (-subgraph): one-hop neighbours of the matched entities "
                               "replace the shortest-path subgraph")
    passages = search_passages(ctx.store, q, req.question, qv.query, dim, top_k)
    qv.passages = tuple(c for c, _ in passages.fused)
    part = search(ctx, req, graph, qv, _params(ctx, top_k), passages)
    if isinstance(graph, PartialGraph):  # a large graph: what this question read of it
        retrieval.details["graph_loaded"] = graph.loaded()
    part.details["graph_text_units"] = [c for c, _ in part.chunks]
    if not part.chunks and not part.entities and not part.relations:
        retrieval.notes.append("no entity or relation of the graph matched the question's keywords; "
                               "showing the passages that best match the question instead")
        part = Part(retrieval.mode, chunks=passages.fused, details=part.details)
    elif q.hybrid_passages and (weight := fuse(ctx.settings)) is not None:  # fused with the question's own passages
        part.chunks = fuse_text_units(part.chunks, passages, q, depth(q, top_k), weight)
    part.chunks = await _rerank(ctx, retrieval, req.question, part.chunks, top_k)
    retrieval.details["passages"] = passages.details()
    retrieval.notes += part.notes
    retrieval.details.update(part.details)
    timings["search_s"] = time.perf_counter() - t

    t = time.perf_counter()
    context = build_sources(ctx.store, part, _budgets(ctx), ctx.tokenizer.count)
    retrieval.sources, retrieval.context, retrieval.cut = context.sources, context.text, context.cut
    retrieval.context_tokens = {"budget": context.budget_tokens, "used": context.used_tokens}
    timings["context_s"] = time.perf_counter() - t


def _local_part(ctx: QueryContext, req: QueryRequest, graph: MemoryGraph, qv: QueryVectors, params: GraphParams) -> Part:
    """subgraph (AcademicRAG local), or one-hop neighbours with ``subgraph=False``."""
    retrieve = subgraph_retrieve if req.subgraph else local_retrieve
    return retrieve(ctx.store, graph, qv, params, ctx.embedder.dim)


def _search_local(ctx: QueryContext, req: QueryRequest, graph: MemoryGraph, qv: QueryVectors,
                  params: GraphParams, passages: PassageLists) -> Part:
    return local_retrieve(ctx.store, graph, qv, params, ctx.embedder.dim)


def _search_subgraph(ctx: QueryContext, req: QueryRequest, graph: MemoryGraph, qv: QueryVectors,
                     params: GraphParams, passages: PassageLists) -> Part:
    return _local_part(ctx, req, graph, qv, params)


def _search_global(ctx: QueryContext, req: QueryRequest, graph: MemoryGraph, qv: QueryVectors,
                   params: GraphParams, passages: PassageLists) -> Part:
    return global_retrieve(ctx.store, graph, qv, params, ctx.embedder.dim)


def _search_hybrid(ctx: QueryContext, req: QueryRequest, graph: MemoryGraph, qv: QueryVectors,
                   params: GraphParams, passages: PassageLists) -> Part:
    return fuse(_local_part(ctx, req, graph, qv, params), global_retrieve(ctx.store, graph, qv, params, ctx.embedder.dim),
                params.max_items, params.top_k)


def _search_ppr(ctx: QueryContext, req: QueryRequest, graph: MemoryGraph, qv: QueryVectors,
                params: GraphParams, passages: PassageLists) -> Part:
    return ppr_retrieve(ctx.store, graph, qv, params, ctx.embedder.dim, passages, ctx.settings.query,
                        plugin_settings(ctx.settings, "ppr", PPRSettings))


def _graph_mode(name: str, description: str, search: Search, uses_subgraph: bool = False,
                reports: bool = False, fuse: FuseWeight = _graph_weight,
                settings: type[PPRSettings] | None = None) -> QueryMode:
    """``fuse``: the RRF weight of the mode's text units when fused with the question's passages;
    None = not fused (``ppr`` by default: its search starts from those passages already)."""

    async def retrieve(ctx: QueryContext, req: QueryRequest) -> Retrieval:
        retrieval = await _graph_retrieve(ctx, req, name, search, uses_subgraph, fuse)
        if reports and ctx.settings.communities.hybrid_reports:  # broad questions: + community reports
            from .summary import add_reports

            await add_reports(ctx, req.question, retrieval)
        return retrieval

    return QueryMode(name, description, retrieve, settings=settings)


CORE_MODES = (
    QueryMode("naive", "the question's passages: chunk vectors + full-text search, fused (RRF)", naive_retrieve),
    _graph_mode("local", "entities matched by low-level keywords + their one-hop neighbourhood", _search_local),
    _graph_mode("subgraph", "shortest-path subgraph between matched entities (thesis 000 §3.3.2)", _search_subgraph,
                True),
    _graph_mode("global", "relations matched by high-level keywords, ranked by relevance x weight (§3.3.3)",
                _search_global),
    _graph_mode("hybrid", "subgraph + global fused, plus the question's passages (§3.4; the default)",
                _search_hybrid, True, reports=True),
    _graph_mode("ppr", "personalised PageRank over entities and passages from the question's best passages "
                       "(HippoRAG 2-style): finds the passages their names lead to", _search_ppr,
                fuse=lambda s: plugin_settings(s, "ppr", PPRSettings).graph_weight or None, settings=PPRSettings),
)
