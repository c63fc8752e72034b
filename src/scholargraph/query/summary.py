"""The ``summary`` query mode: corpus-level questions answered from community reports (seed 001
§III.D), map/reduce.

Retrieval picks a level of the community hierarchy (``communities.summary_level``, else the
finest level with at most ``AUTO_LEVEL_MAX`` communities), ranks that level's reports by the
similarity of their title and summary to the question (plus a little of their rating) and numbers
the best ``communities.summary_reports`` as sources. Each source is a report and carries its
representative passages resolved to paper, section and pages (``Source.supporting``), so an answer
citing [n] leads to the papers through the report.

With an LLM, each report is mapped to rated points about the question (prompt ``summary_map``,
one call per report, concurrently), and the best points are reduced to one answer with verified
citations (``summary_reduce``). Without one, the answer lists the most relevant reports with their
summary and a cited passage, labelled extractive. Missing communities or reports are computed
first (noted).
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Annotated

import numpy as np
from pydantic import BeforeValidator

from ..config import Settings
from ..errors import ConfigError, LLMError, LLMUnavailableError, ModelOutputError
from ..llm.output import Items, LenientModel, output_schema, validate
from ..llm.repair import parse_json
from ..models import Answer, CommunityReport, Source
from ..plugins.base import QueryContext, QueryMode, QueryRequest
from ..prompts import load_prompt
from ..store.base import CommunityStore, PaperReads, QueryStore
from ..text.sentences import split_sentences
from .citations import neutralise_source_citations, verify_citations
from .retrieval import Retrieval, merge_usage
from .sources import source_location

MODE = "summary"
AUTO_LEVEL_MAX = 64
EXTRACTIVE_LABEL = ("Extractive overview (no LLM configured): the community reports that best match the question, "
                    "each with its summary and a representative passage.")


def choose_level(counts: dict[int, int], wanted: int | None) -> int:
    if wanted is not None:
        if wanted not in counts:
            raise ConfigError(f"no community level {wanted}; levels: {', '.join(map(str, sorted(counts)))}")
        return wanted
    fitting = [lv for lv in sorted(counts) if counts[lv] <= AUTO_LEVEL_MAX]
    return fitting[-1] if fitting else min(counts)


async def _ensure(store: QueryStore, settings: Settings, llm, notes: list[str]) -> None:
    """Communities and every report exist (computed now when missing)."""
    from ..graph.community_update import update_communities, use_llm

    communities = store.list_communities()
    have = len(store.community_reports([c.signature for c in communities])) if communities else 0
    missing = bool(communities) and have < len({c.signature for c in communities})
    if communities and not missing:
        return
    limit = settings.query.max_graph_relations
    if (relations := store.count("relations")) > limit:  # computing them reads the whole graph
        if not have:
            raise ConfigError(
                f"the summary mode needs community reports, and this graph has {relations:,} relations, more than "
                f"query.max_graph_relations ({limit:,}): communities and their reports are not computed while a "
                "question waits on a graph that large. Compute them once with `scholargraph communities` (or "
                "`index --reports`), or raise query.max_graph_relations")
        notes.append(f"{len(communities) - have} communities have no report yet and are left out (a graph of "
                     f"{relations:,} relations, above query.max_graph_relations: `scholargraph communities` "
                     "writes them)")
        return
    run = await update_communities(store, settings.communities, llm if use_llm(settings.communities, llm) else None)
    if run.computed:
        notes.append(f"communities computed now ({', '.join(f'{n} at level {lv}' for lv, n in run.levels.items())})")
    if run.reports_written:
        notes.append(f"{run.reports_written} community report(s) written now")


def _report_text(report: CommunityReport, names: dict[str, str]) -> str:
    key = ", ".join(names[i] for i in report.entities[:8] if i in names)
    return f"{report.title}\n{report.summary}" + (f"\nKey entities: {key}" if key else "")


async def _vectors(store: QueryStore, embedder, reports: list[CommunityReport]) -> np.ndarray:
    """Report vectors (namespace "community", by signature), embedded now where missing."""
    have = store.get_vectors("community", [r.signature for r in reports])
    todo = [r for r in reports if r.signature not in have]
    if todo:
        fresh = await embedder.embed([f"{r.title}. {r.summary}" for r in todo])
        await store.awrite(lambda: store.put_vectors("community", [r.signature for r in todo], fresh))
        have.update(zip((r.signature for r in todo), fresh, strict=True))
    return np.stack([have[r.signature] for r in reports]).astype(np.float32)


def _supporting(store: PaperReads, report: CommunityReport, number: int) -> list[Source]:
    chunks = store.get_chunks(e["chunk_id"] for e in report.evidence)
    docs = store.documents_by_id(e["document_id"] for e in report.evidence)
    out = []
    for e in report.evidence:
        chunk, doc = chunks.get(e["chunk_id"]), docs.get(e["document_id"])
        out.append(Source(number, "chunk", e["chunk_id"], e["document_id"], doc.title if doc else None,
                          chunk.section if chunk else None, chunk.page_start if chunk else None,
                          chunk.page_end if chunk else None, e["text"], authors=doc.authors if doc else [],
                          year=doc.year if doc else None, venue=doc.venue if doc else None))
    return out


def _context_block(source: Source, level: int) -> str:
    lines = [f"[{source.number}] Community report (level {level}): {source.text}"]
    for s in source.supporting:
        lines.append(f"  passage ({source_location(s)}): {neutralise_source_citations(s.text)}")
    return "\n".join(lines)


async def _ranked(store: QueryStore, settings: Settings, embedder, question: str, level: int, k: int,
                  start: int = 1) -> tuple[list[Source], int]:
    """The ``k`` reports of ``level`` most similar to the question, as sources numbered from ``start``;
    and how many reports the level has."""
    communities = store.list_communities(level)
    by_sig = store.community_reports([c.signature for c in communities])
    reports = list({c.signature: by_sig[c.signature] for c in communities
                    if c.signature in by_sig and by_sig[c.signature].thematic}.values())  # no acknowledgements
    if not reports:
        return [], 0
    query = await embedder.embed_one(question)
    scores = (await _vectors(store, embedder, reports)) @ np.asarray(query, dtype=np.float32)
    ranked = sorted(zip(reports, scores, strict=True), key=lambda x: (-(float(x[1]) + 0.02 * x[0].rating), x[0].signature))
    chosen = ranked[:k]
    names = {i: e.name for i, e in store.get_entities({i for r, _ in chosen for i in r.entities[:8]}, sources=False).items()}
    docs = store.documents_by_id(r.documents[0] for r, _ in chosen if r.documents)
    sources = []
    for n, (report, score) in enumerate(chosen, start):
        top_doc = docs.get(report.documents[0]) if report.documents else None
        sources.append(Source(n, "community", None, top_doc.id if top_doc else None, report.title, None, None, None,
                              _report_text(report, names), float(score), supporting=_supporting(store, report, n)))
    return sources, len(reports)


def _level_counts(store: CommunityStore) -> dict[int, int]:
    counts: dict[int, int] = {}
    for c in store.list_communities():
        counts[c.level] = counts.get(c.level, 0) + 1
    return counts


async def summary_retrieve(store: QueryStore, settings: Settings, embedder, llm, question: str,
                           top_k: int | None = None) -> Retrieval:
    if not question.strip():
        raise ConfigError("the question is empty")
    t0 = time.perf_counter()
    retrieval = Retrieval(question, MODE, [], "", {})
    await _ensure(store, settings, llm, retrieval.notes)
    counts = _level_counts(store)
    if not counts:
        retrieval.notes.append("the graph has no communities (no relations yet): nothing to summarise")
        return retrieval
    level = choose_level(counts, settings.communities.summary_level)
    retrieval.sources, total = await _ranked(store, settings, embedder, question, level,
                                             top_k or settings.communities.summary_reports)
    retrieval.context = "\n\n".join(_context_block(s, level) for s in retrieval.sources)
    retrieval.details = {"level": level, "levels": counts, "reports_at_level": total}
    retrieval.notes.append(f"summary over {len(retrieval.sources)} of {total} community report(s) at level {level}")
    retrieval.timings["retrieval_s"] = time.perf_counter() - t0
    return retrieval


_BROAD = re.compile(
    r"\b(main|major|overall|overview|themes?|trends?|directions?|landscape|summar\w*|across|collection|corpus|"
    r"literature|research (areas?|gaps?)|key (ideas|topics|findings)|how do .* (connect|relate)|in general)\b",
    re.IGNORECASE)


def is_broad(question: str) -> bool:
    """A corpus-level question (themes, trends, overview, across the collection...)."""
    return bool(_BROAD.search(question))


async def add_reports(ctx: QueryContext, question: str, retrieval: Retrieval) -> None:
    """``hybrid`` with ``communities.hybrid_reports``: a broad question also gets the best community
    reports (stored ones only; nothing is computed here), numbered after the other sources."""
    if not is_broad(question):
        return
    t0 = time.perf_counter()
    counts = _level_counts(ctx.store)
    if not counts:
        retrieval.notes.append("broad question, but no communities yet (`scholargraph communities`)")
        return
    level = choose_level(counts, ctx.settings.communities.summary_level)
    sources, _ = await _ranked(ctx.store, ctx.settings, ctx.embedder, question, level,
                               ctx.settings.communities.hybrid_reports, start=len(retrieval.sources) + 1)
    if sources:
        retrieval.sources += sources
        retrieval.context = "\n\n".join(x for x in [retrieval.context, *(_context_block(s, level) for s in sources)] if x)
        retrieval.notes.append(f"broad question: {len(sources)} community report(s) of level {level} added")
    retrieval.timings["reports_s"] = time.perf_counter() - t0


def extractive_overview(sources: list[Source]) -> tuple[str, list[int]]:
    lines = [EXTRACTIVE_LABEL]
    for s in sources:
        title, _, rest = s.text.partition("\n")
        summary = rest.split("\nKey entities:")[0]
        sentences = [x for x in split_sentences(summary) if x.strip()]
        gist = " ".join(sentences[:2]) if sentences else summary
        line = f"- {title} [{s.number}]: {gist}"
        if s.supporting:
            p = s.supporting[0]
            passage = neutralise_source_citations(p.text)
            passage = passage if len(passage) <= 300 else passage[:299].rsplit(" ", 1)[0] + "…"
            line += f" Passage: “{passage}” ({p.title or p.document_id})"
        lines.append(line)
    return "\n".join(lines), [s.number for s in sources]


def _point_text(value: object) -> str:
    text = str(value or "").strip()
    if not text:
        raise ValueError("blank")
    return text


def _score(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 50.0


class MapPoint(LenientModel):
    """One point of a map reply: its text (not blank) and a 0-100 score (50 when not a number)."""

    text: Annotated[str, BeforeValidator(_point_text)]
    score: Annotated[float, BeforeValidator(_score)] = 50.0


class MapReply(LenientModel):
    """A map reply: ``{"points": [...]}`` or just the list; items that are not points are dropped."""

    points: Items[MapPoint] | None = None


MAP_SCHEMA = {**output_schema(MapReply), "required": ["points"]}  # "{}" is not an answer


async def _map_one(llm, source: Source, level: int, question: str) -> list[tuple[float, str]]:
    prompt = load_prompt("summary_map").messages(report=_context_block(source, level), number=source.number,
                                                 question=question)
    result = await llm.chat(prompt, purpose="map", schema=MAP_SCHEMA, schema_name="map_points")
    data = parse_json(result.text)
    reply = validate(data if isinstance(data, dict) else {"points": data}, MapReply)
    points = []
    for point in reply.points or []:
        text = point.text if f"[{source.number}]" in point.text else f"{point.text} [{source.number}]"
        points.append((point.score, text))
    return points


async def summary_answer(store: QueryStore, settings: Settings, embedder, llm, question: str, top_k: int | None = None,
                         on_text=None) -> Answer:
    retrieval = await summary_retrieve(store, settings, embedder, llm, question, top_k)
    answer = Answer(question, "", MODE, retrieval.sources, trace=dict(retrieval.details), timings=dict(retrieval.timings),
                    context=retrieval.context,
                    notes=list(retrieval.notes), usage=merge_usage(retrieval.usage))
    if not retrieval.sources:
        answer.text = "No community report to answer from (is the workspace empty? see `scholargraph stats --graph`)."
        return answer
    t0 = time.perf_counter()
    if llm is None:
        answer.text, answer.cited = extractive_overview(retrieval.sources)
        answer.extractive = True
    else:
        await _map_reduce(answer, llm, settings, retrieval.details["level"])
    if on_text:
        on_text(answer.text)
    answer.timings["generation_s"] = time.perf_counter() - t0
    return answer


async def _map_reduce(answer: Answer, llm, settings: Settings, level: int) -> None:
    before = llm.usage_snapshot()

    async def mapped(source: Source) -> list[tuple[float, str]]:
        try:
            return await _map_one(llm, source, level, answer.question)
        except LLMUnavailableError:
            raise
        except (ModelOutputError, LLMError) as exc:
            answer.notes.append(f"report [{source.number}] skipped: {exc}")
            return []

    results = await asyncio.gather(*(mapped(s) for s in answer.sources))
    points = sorted((p for ps in results for p in ps if p[0] > 0), key=lambda p: -p[0])
    if not points:
        answer.text = "The community reports do not address this question."
        answer.usage = merge_usage(answer.usage, llm.usage_since(before))
        return
    budget, used, kept = settings.query.max_context_tokens * 4, 0, list[str]()  # characters
    for score, text in points:
        if kept and used + len(text) > budget:
            break
        kept.append(f"- (importance {score:g}) {text}")
        used += len(text)
    language = f"in {settings.query.answer_language}" if settings.query.answer_language else "in the language of the question"
    result = await llm.chat(load_prompt("summary_reduce").messages(points="\n".join(kept), question=answer.question,
                                                                    language=language), purpose="answer")
    check = verify_citations(result.text, {s.number for s in answer.sources})
    answer.text, answer.cited, answer.removed_citations = check.text.strip(), check.cited, check.removed
    if check.removed:
        answer.notes.append(f"removed citation(s) {check.removed}: not among the {len(answer.sources)} reports")
    answer.usage = merge_usage(answer.usage, llm.usage_since(before))


async def _retrieve(ctx: QueryContext, req: QueryRequest) -> Retrieval:
    return await summary_retrieve(ctx.store, ctx.settings, ctx.embedder, ctx.llm, req.question, req.top_k)


async def _answer(ctx: QueryContext, req: QueryRequest) -> Answer:
    return await summary_answer(ctx.store, ctx.settings, ctx.embedder, ctx.llm, req.question, req.top_k, req.on_text)


# registered by the core plug-in (profiles/core.py); top_k = reports mapped (default communities.summary_reports)
SUMMARY_MODE = QueryMode(MODE, "corpus-level questions answered from community reports, map/reduce (seed 001 §III.D)",
                         _retrieve, _answer, unsupported=frozenset({"clues", "subgraph"}))
