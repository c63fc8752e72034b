"""bio query mode (seed 003 §2.5, §3.1): question -> gene/disease names and wanted types -> filters on
the graph -> every relation description above a similarity threshold -> one answer per batch of
evidence -> one merged answer citing papers.

1. Parse (purpose ``parse``): the LLM names the genes (HGNC symbols), diseases (MeSH headings),
   other named entities, and the entity/relation types the question asks for; names go through
   the same dictionary as indexing. Without an LLM (or when its output is unusable), names are
   found by matching the question's word n-grams against the graph's entity names and aliases,
   types by type words ("genes", "pathways", "biomarker", "up-regulated", ...).
2. Filter: a relation must touch a named gene/other entity (when any was found) and a named
   disease (when any), have an end of a wanted entity type, and one of the wanted relation types;
   optionally an edge weight (``graph.weights``) at or above ``weight_threshold``. Type filters
   that leave nothing are relaxed, with a note.
3. Search: every relation whose vector is at least ``query.bio_threshold`` similar to the
   question (seed 003 §2.5 sets no cap; here at most ``plugins.bio.max_relations``, the most
   similar, with a note when reached: an exact search for every one read all 570,000 relation
   vectors of a 200,000-abstract graph per question). When the question names genes, diseases or
   other entities, the search is among their relations (exact); else through the vector index.
   When no relation reaches the threshold, the ``query.top_k`` most similar that pass the
   filters, with a note.
4. Evidence is grouped per paper: each numbered source is one paper (id, title, journal, year)
   with the descriptions of its matched relations (per-paper descriptions, from
   ``relation_sources``). Papers are ordered by best similarity, then paper weight.
5. Answer (purpose ``answer``): one call per batch of papers that fits
   ``query.max_context_tokens`` (concurrently), then one merge call when there was more than one
   batch; ``[n]`` citations are verified against the papers. A failed batch only loses its own
   papers. Without an LLM the answer is extractive.

The steps live in ``.query_parse`` (1), ``.evidence`` (2-4) and ``.answer``
(5); this module holds the two entry points, ``bio_retrieve`` and ``bio_answer``, and re-exports
the public names of the others.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ...errors import ConfigError, LLMError, LLMUnavailableError, ModelOutputError
from ...models import Answer
from ...plugins.base import QueryContext, QueryMode, QueryRequest, plugin_settings
from ...query.citations import verify_citations
from ...query.extractive import extractive_answer
from ...query.retrieval import Retrieval, history_text, merge_usage
from .answer import batches, format_papers, format_references, generate_answer
from .evidence import Evidence, Filters, paper_sources, search_evidence
from .normalise import BioDictionary, dictionary_from_settings
from .query_parse import (
    ENTITY_TYPE_HINTS,
    MAX_NGRAM,
    PARSE_SCHEMA,
    BioQuery,
    llm_parse,
    resolve_names,
    vocabulary_parse,
)
from .settings import BioModeSettings

DEFAULT_THRESHOLD = 0.3


def _mode_settings(settings) -> BioModeSettings:
    return plugin_settings(settings, "bio", BioModeSettings)


def _threshold(settings, given: float | None) -> float:
    return float(given if given is not None else _mode_settings(settings).threshold)


def _edge_combine(settings) -> str:
    return _mode_settings(settings).edge_weight


def _weight_threshold(settings, given: float | None) -> float | None:
    return given if given is not None else _mode_settings(settings).min_edge_weight


@dataclass
class GivenFilters:
    """What a caller names beside the question (fastbmRAG's ``query(gene=, disease=, paper_id=,
    question_analysis=)``): names added to the parsed ones (or used alone when ``parse`` is False),
    and the papers the evidence must come from (empty: any)."""

    genes: list[str] = field(default_factory=list)
    diseases: list[str] = field(default_factory=list)
    papers: set[str] = field(default_factory=set)
    parse: bool = True


def _given_query(given: GivenFilters) -> BioQuery:
    return BioQuery(genes=list(given.genes), diseases=list(given.diseases), parsed_by="given")


async def _parse(store, settings, llm, question: str, dictionary: BioDictionary | None, given: GivenFilters | None,
                 retrieval: Retrieval) -> tuple[BioQuery, dict[str, list[str]]]:
    """The question's names and types (the caller's when it gives them unparsed; else the LLM's, or
    the graph vocabulary's when there is no LLM or its reply is unusable), and each name resolved to
    entity ids; names not in the graph are noted on ``retrieval``."""
    query: BioQuery | None = None
    resolved: dict[str, list[str]] = {}
    if given is not None and not given.parse:
        query = _given_query(given)
    elif llm is not None:
        try:
            query = await llm_parse(llm, question, settings)
        except LLMUnavailableError:
            raise
        except (ModelOutputError, LLMError) as exc:
            retrieval.notes.append(f"question parse by the LLM failed ({exc}); names matched against the graph instead")
    if query is None:
        query, resolved = vocabulary_parse(store, question, settings, dictionary)
    if given is not None and given.parse:
        query.genes = list(dict.fromkeys([*query.genes, *given.genes]))
        query.diseases = list(dict.fromkeys([*query.diseases, *given.diseases]))
    if query.parsed_by != "vocabulary" or (given is not None and (given.genes or given.diseases)):
        resolved = resolve_names(store, query.genes + query.diseases + query.other, dictionary)
        missing = list(dict.fromkeys(n for n in query.genes + query.diseases + query.other if n not in resolved))
        if missing:
            retrieval.notes.append(f"not in the graph: {', '.join(missing)} (no filter on them)")
    return query, resolved


async def bio_retrieve(store, settings, embedder, llm, question: str, weight_threshold: float | None = None, *,
                       dictionary: BioDictionary | None = None, threshold: float | None = None,
                       top_k: int | None = None, given: GivenFilters | None = None) -> Retrieval:
    """Numbered paper sources for ``question`` (see the module doc); no answer is generated.

    ``top_k``: at most this many papers (the best ranked), and the number of relations the search
    falls back to when none reaches the threshold; None = every paper above the threshold, and
    ``query.top_k`` relations as the fallback (fastbmRAG's behaviour). ``given``: names and papers
    the caller filters on (see :class:`GivenFilters`)."""
    if not question.strip():
        raise ConfigError("the question is empty")
    t0 = time.perf_counter()
    retrieval = Retrieval(question, "bio", [], "", {})
    if dictionary is None:
        dictionary = dictionary_from_settings(settings)
    before = llm.usage_snapshot() if llm is not None else {}
    query, resolved = await _parse(store, settings, llm, question, dictionary, given, retrieval)
    retrieval.timings["parse_s"] = time.perf_counter() - t0
    filters = Filters(
        named={i for n in query.genes + query.other for i in resolved.get(n, [])},
        diseases={i for n in query.diseases for i in resolved.get(n, [])},
        entity_types=set(query.entity_types), relation_types=set(query.relation_types))
    retrieval.details["parsed"] = query.to_json()
    retrieval.details["matched_entities"] = resolved

    t = time.perf_counter()
    cutoff = _threshold(settings, threshold)
    min_weight = _weight_threshold(settings, weight_threshold)
    how = _edge_combine(settings)
    evidence = await search_evidence(store, embedder, question, filters, cutoff, min_weight, how, retrieval,
                                     top_k or settings.query.top_k, _mode_settings(settings).max_relations)
    if given is not None and given.papers:
        evidence = [e for e in evidence if e.document_id in given.papers]
        retrieval.details["papers_filter"] = sorted(given.papers)
    retrieval.timings["search_s"] = time.perf_counter() - t

    t = time.perf_counter()
    retrieval.sources = paper_sources(store, evidence)
    if top_k is not None and len(retrieval.sources) > top_k:
        retrieval.notes.append(f"{len(retrieval.sources)} papers matched; showing the {top_k} best ranked (top_k)")
        del retrieval.sources[top_k:]
    retrieval.context = format_papers(retrieval.sources)
    retrieval.details.update({"threshold": cutoff, "edge_weight": how, "weight_threshold": min_weight,
                              "relations": len({e.relation_id for e in evidence}), "papers": len(retrieval.sources)})
    retrieval.timings["context_s"] = time.perf_counter() - t
    retrieval.timings["retrieval_s"] = time.perf_counter() - t0
    if llm is not None:
        retrieval.usage = merge_usage(llm.usage_since(before))
    return retrieval


async def bio_answer(store, settings, embedder, llm, question: str, weight_threshold: float | None = None, *,
                     dictionary: BioDictionary | None = None, threshold: float | None = None,
                     on_text: Callable[[str], None] | None = None, batch_tokens: int | None = None,
                     top_k: int | None = None, history: Sequence[tuple[str, str]] = (),
                     given: GivenFilters | None = None) -> Answer:
    """The bio-mode answer: per-batch answers merged into one, citing numbered papers.

    ``batch_tokens`` (default ``query.max_context_tokens``) is the evidence per answer call;
    ``history``: the session's earlier (question, answer) turns, shown to the answer calls."""
    retrieval = await bio_retrieve(store, settings, embedder, llm, question, weight_threshold, dictionary=dictionary,
                                   threshold=threshold, top_k=top_k, given=given)
    answer = Answer(question, "", "bio", retrieval.sources, usage=merge_usage(retrieval.usage),
                    timings=dict(retrieval.timings), context=retrieval.context, notes=list(retrieval.notes),
                    trace=dict(retrieval.details))
    if not retrieval.sources:
        answer.text = "No relation in the graph matches the question (is the workspace indexed with --profile fastbio?)."
        if on_text:
            on_text(answer.text)
        return answer
    t0 = time.perf_counter()
    if llm is None:
        answer.text, answer.cited = extractive_answer(question, retrieval.sources)
        answer.extractive = True
    else:
        before = llm.usage_snapshot()
        budget = batch_tokens or settings.query.max_context_tokens
        in_batches: list[int] = []  # cited by a batch answer, but not one of that batch's papers
        raw = await generate_answer(llm, settings, question, retrieval.sources, answer.notes, budget,
                                    history_text(history), in_batches)
        check = verify_citations(raw, {s.number for s in retrieval.sources})
        answer.text, answer.cited = check.text.strip(), check.cited
        answer.removed_citations = sorted(set(check.removed) | set(in_batches))
        if answer.removed_citations:
            answer.notes.append(f"removed citation(s) {answer.removed_citations}: not among the papers the answer "
                                f"was given")
        answer.usage = merge_usage(answer.usage, llm.usage_since(before))
    answer.timings["generation_s"] = time.perf_counter() - t0
    if on_text:
        on_text(answer.text)
    return answer


async def _retrieve_mode(ctx: QueryContext, req: QueryRequest) -> Retrieval:
    return await bio_retrieve(ctx.store, ctx.settings, ctx.embedder, ctx.llm, req.question, top_k=req.top_k)


async def _answer_mode(ctx: QueryContext, req: QueryRequest) -> Answer:
    return await bio_answer(ctx.store, ctx.settings, ctx.embedder, ctx.llm, req.question, on_text=req.on_text,
                            top_k=req.top_k, history=req.history)


# the ablation switches concern the graph modes' keywords and subgraph, which bio mode does not use
BIO_MODE = QueryMode("bio", "fastbmRAG: question parsed into genes/diseases/types -> filtered relations above a "
                     "similarity threshold -> answers per batch of papers, merged", _retrieve_mode, _answer_mode,
                     settings=BioModeSettings)


__all__ = ["BIO_MODE", "DEFAULT_THRESHOLD", "ENTITY_TYPE_HINTS", "MAX_NGRAM", "PARSE_SCHEMA", "BioQuery", "Evidence", "GivenFilters",
           "batches",
           "bio_answer", "bio_retrieve", "format_papers", "format_references", "llm_parse", "resolve_names",
           "vocabulary_parse"]
