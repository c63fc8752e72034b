"""Community reports (seed 001 §III.D), written bottom-up: the finest level first, then each parent
from its children's reports (not from all their text).

A report's key entities (most central inside the community first), key relations (heaviest),
supporting papers (most supporting first) and representative passages (cited sentences that name
several of its entities) are chosen from the graph. Its title, summary and rating are written by
the LLM (prompt ``community_report``) or, without one, extractively from those parts.

Reports are keyed by community signature: a community whose members and inner relations did not
change keeps its report; only the others are (re)written (and, once an LLM is configured, the
extractive ones, e.g. from an offline run). A model answer that cannot be used
gives an extractive report for that community (noted), never a failed run.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BeforeValidator

from ..errors import LLMError, LLMUnavailableError, ModelOutputError
from ..llm.output import Invalid, LenientModel, output_schema, validate
from ..llm.repair import parse_json
from ..models import Community, CommunityReport, Entity, Relation
from ..prompts import load_prompt
from ..store.base import ChunkStore, CommunityStore, CommunityUpkeep
from ..text.boilerplate import is_boilerplate, non_thematic_type
from ..text.sentences import sentence_spans, without_repeats

EVIDENCE = 3  # representative passages per report
DESCRIPTION_CHARS = 240


@dataclass
class ReportParams:
    entities: int = 25
    relations: int = 30
    use_llm: bool = False


@dataclass
class ReportRun:
    written: int = 0
    kept: int = 0
    llm: int = 0
    fallbacks: list[str] = field(default_factory=list)  # communities whose model output was unusable


class _Adjacency:
    """Weighted neighbours of every entity, to rank members by their degree inside a community."""

    def __init__(self, edges: Sequence[tuple[str, str, str, float]]):
        self.adj: dict[str, list[tuple[str, str, float]]] = defaultdict(list)
        for rid, s, t, w in edges:
            if s != t:
                w = float(w or 0.0)
                self.adj[s].append((t, rid, w))
                self.adj[t].append((s, rid, w))

    def inside(self, members: Sequence[str]) -> tuple[list[str], list[str]]:
        """Members by weighted degree inside the community (then id), and the inner relation ids
        by weight (then id)."""
        member_set = set(members)
        degree: dict[str, float] = {}
        rels: dict[str, float] = {}
        for m in members:
            total = 0.0
            for other, rid, w in self.adj.get(m, ()):
                if other in member_set:
                    total += w + 1.0
                    rels[rid] = w
            degree[m] = total
        ranked = sorted(members, key=lambda m: (-degree[m], m))
        return ranked, sorted(rels, key=lambda r: (-rels[r], r))


def _first_sentence(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    text = " ".join(text.split())
    spans = sentence_spans(text)
    first = text[spans[0][0]:spans[0][1]] if spans else text
    return first if len(first) <= limit else first[: limit - 1].rsplit(" ", 1)[0] + "…"


def _clip(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _names_pattern(entities: Sequence[Entity]) -> re.Pattern[str] | None:
    names = sorted({n.lower() for e in entities for n in [e.name, *e.aliases] if len(n) >= 3}, key=len, reverse=True)
    if not names:
        return None
    return re.compile(r"(?<![\w-])(" + "|".join(re.escape(n) for n in names[:200]) + r")(?![\w-])", re.IGNORECASE)


def _prose(sentence: str) -> bool:
    """A sentence, not a table row or a list of links: mostly words of letters."""
    words = sentence.split()
    wordy = sum(1 for w in words if sum(ch.isalpha() for ch in w) >= 0.7 * len(w))
    return len(words) >= 6 and wordy >= 0.75 * len(words) and "http" not in sentence


def _sentences(text: str) -> list[str]:
    return [" ".join(text[a:b].split()) for a, b in sentence_spans(text)]


def off_theme(store: ChunkStore, entities: Sequence[Entity]) -> set[str]:
    """Entities that are not research themes: typed as persons, organisations, places or funding,
    or named only in acknowledgement, funding and author/affiliation sentences of their sources."""
    out = {e.id for e in entities if non_thematic_type(e.type)}
    todo = [e for e in entities if e.id not in out]
    chunks = store.get_chunks(list(dict.fromkeys(c for e in todo for c in e.chunk_ids[:3])))
    sentences = {cid: _sentences(chunk.text) for cid, chunk in chunks.items()}
    for e in todo:
        pattern = _names_pattern([e])
        if pattern is None:
            continue
        named = [x for cid in e.chunk_ids[:3] for x in sentences.get(cid, ()) if pattern.search(x)]
        if named and all(is_boilerplate(x) for x in named):
            out.add(e.id)
    return out


def _evidence(store: ChunkStore, key: Sequence[Entity]) -> list[dict]:
    """Sentences of the key entities' source chunks that name the most distinct key entities,
    from different chunks (papers first spread), with their chunk and paper."""
    pattern = _names_pattern(key)
    chunk_ids = list(dict.fromkeys(c for e in key[:6] for c in e.chunk_ids[:3]))
    if pattern is None or not chunk_ids:
        return []
    chunks = store.get_chunks(chunk_ids)
    scored = []
    for order, cid in enumerate(chunk_ids):
        chunk = chunks.get(cid)
        if chunk is None:
            continue
        for a, b in sentence_spans(chunk.text):
            sentence = " ".join(chunk.text[a:b].split())
            if not 40 <= len(sentence) <= 600 or not _prose(sentence) or is_boilerplate(sentence):
                continue
            named = {m.group(1).lower() for m in pattern.finditer(sentence)}
            if named:
                scored.append((-len(named), order, sentence, chunk))
    scored.sort(key=lambda x: (x[0], x[1]))
    out: list[dict] = []
    used_chunks: set[str] = set()
    used_docs: Counter[str] = Counter()
    for _, _, sentence, chunk in scored:
        if chunk.id in used_chunks or used_docs[chunk.document_id] >= 2:
            continue
        used_chunks.add(chunk.id)
        used_docs[chunk.document_id] += 1
        out.append({"chunk_id": chunk.id, "document_id": chunk.document_id, "text": sentence})
        if len(out) == EVIDENCE:
            break
    return out


@dataclass
class _Parts:
    """What the graph says about one community, before the title/summary are written."""

    community: Community
    entities: list[Entity]
    relations: list[Relation]
    documents: list[str]
    evidence: list[dict]
    keywords: list[str]
    children: list[CommunityReport]
    names: dict[str, str]  # entity id -> name (relation ends)
    thematic: bool = True


def _parts(store: CommunityUpkeep, community: Community, adjacency: _Adjacency, children: list[CommunityReport],
           params: ReportParams) -> _Parts:
    ranked, rids = adjacency.inside(community.members)
    entities = store.get_entities(ranked[:200], sources=True)
    checked = [entities[i] for i in ranked[: params.entities + 20] if i in entities]
    off = off_theme(store, checked)
    thematic = any(e.id not in off for e in checked) or not checked
    top = [i for i in ranked if i not in off][: params.entities] if thematic else ranked[: params.entities]
    key = [entities[i] for i in top if i in entities]
    relations = _key_relations(store, rids, off if thematic else set(), params.relations)
    ends = {x for r in relations for x in (r.source_id, r.target_id)} - set(entities)
    names = {i: e.name for i, e in entities.items()}
    names.update({i: e.name for i, e in store.get_entities(ends, sources=False).items()})
    return _Parts(community, key, relations, _supporting_papers(entities.values(), children),
                  _evidence_with_children(store, key, children), _top_keywords(relations, children), children, names,
                  thematic)


def _key_relations(store: CommunityUpkeep, rids: list[str], off: set[str], count: int) -> list[Relation]:
    """The heaviest ``count`` relations inside; those touching an off-theme entity left out (a
    research theme's links, not who thanked whom) unless nothing else is left."""
    by_id = store.get_relations(rids[: count * 2], sources=False)
    relations = [by_id[r] for r in rids[: count * 2] if r in by_id]
    if off:
        relations = [r for r in relations if r.source_id not in off and r.target_id not in off] or relations
    return relations[:count]


def _supporting_papers(entities: Iterable[Entity], children: list[CommunityReport]) -> list[str]:
    """Papers by support: the entities' sources, then each child's papers weighted by their rank."""
    papers: Counter[str] = Counter()
    for e in entities:
        papers.update(e.document_ids)
    for child in children:
        papers.update({d: len(child.documents) - i for i, d in enumerate(child.documents)})
    return [d for d, _ in papers.most_common()]


def _top_keywords(relations: list[Relation], children: list[CommunityReport]) -> list[str]:
    keywords = Counter(k.lower() for r in relations for k in r.keywords if k.strip())
    for child in children:
        keywords.update(child.keywords)
    return [k for k, _ in keywords.most_common(8)]


def _evidence_with_children(store: CommunityUpkeep, key: list[Entity], children: list[CommunityReport]) -> list[dict]:
    """The key entities' representative passages; a parent also shows its children's best ones."""
    evidence = _evidence(store, key)
    seen = {x["chunk_id"] for x in evidence}
    for child in children:
        for item in child.evidence[:1]:
            if item["chunk_id"] not in seen and len(evidence) < EVIDENCE + 2:
                evidence.append(item)
                seen.add(item["chunk_id"])
    return evidence


OFF_THEME_TITLE = "Not a research theme: people, institutions and funding"


def _title(parts: _Parts) -> str:
    if not parts.thematic:
        return OFF_THEME_TITLE
    names = [e.name for e in parts.entities[:3]]
    if not names:
        return f"community {parts.community.id}"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def extractive_text(parts: _Parts) -> tuple[str, str]:
    """(title, summary) from the community's own parts: central entities, main links, children."""
    c = parts.community
    lines = [f"{len(c.members)} entities and {c.relations} relations from {len(parts.documents)} paper(s)."]
    if not parts.thematic:
        named = ", ".join(e.name for e in parts.entities[:6])
        lines.append(f"Named in acknowledgements, funding statements or author lists, not research: {named}.")
        return _title(parts), " ".join(lines)
    if parts.children:
        listing = "; ".join(f"«{r.title}»" for r in parts.children[:6])
        lines.append(f"It groups {len(parts.children)} sub-topics: {listing}.")
    central = [f"{e.name} ({e.type})" + (f": {_first_sentence(e.description)}" if e.description else "")
               for e in parts.entities[:3]]
    if central:
        lines.append("Central: " + " ".join(x if x.endswith((".", "…")) else x + "." for x in central))
    links = [f"{parts.names.get(r.source_id, r.source_id)} – {parts.names.get(r.target_id, r.target_id)}"
             + (f": {_first_sentence(r.description)}" if r.description else "") for r in parts.relations[:3]]
    if links:
        lines.append("Main links: " + " ".join(x if x.endswith((".", "…")) else x + "." for x in links))
    if parts.keywords:
        lines.append("Keywords: " + ", ".join(parts.keywords[:6]) + ".")
    return _title(parts), " ".join(lines)


def _report(parts: _Parts, title: str, summary: str, rating: float, method: str,
            keywords: list[str] | None = None) -> CommunityReport:
    return CommunityReport(
        signature=parts.community.signature, title=title.strip()[:200], summary=summary.strip(), rating=rating,
        method=method, entities=[e.id for e in parts.entities], relations=[r.id for r in parts.relations],
        documents=parts.documents[:20], evidence=parts.evidence, keywords=keywords or parts.keywords,
        children=[r.signature for r in parts.children], thematic=parts.thematic)


def _prompt_values(parts: _Parts) -> dict[str, str]:
    entities = "\n".join(f"- {e.name} ({e.type}): {_clip(e.description)}" for e in parts.entities) or "(none)"
    relations = "\n".join(
        f"- {parts.names.get(r.source_id, r.source_id)} -> {parts.names.get(r.target_id, r.target_id)}: "
        f"{_clip(r.description)}" for r in parts.relations) or "(none)"
    children = ""
    if parts.children:
        children = "\nSub-community reports:\n" + "\n".join(
            f"- {r.title} (rating {r.rating:g}): {_clip(r.summary, 600)}" for r in parts.children[:20])
    passages = ""
    if parts.evidence:
        passages = "\nRepresentative passages:\n" + "\n".join(f"- {_clip(x['text'], 400)}" for x in parts.evidence)
    return {"entities": entities, "relations": relations, "children": children, "passages": passages}


def _some_text(value: object) -> str:
    if not str(value or "").strip():
        raise ValueError("blank")
    return str(value)


def _rating(value: object) -> float | None:
    try:
        return max(0.0, min(10.0, float(value)))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def _keywords(value: object) -> list[str] | None:
    if not isinstance(value, list):
        return None
    return [str(k).strip() for k in value if str(k).strip()] or None


class ReportReply(LenientModel):
    """A community report as the model writes it: a title and a summary (neither blank), a 0-10
    rating (left to the extractive one when absent or not a number), keywords (first 8 kept)."""

    title: Annotated[str, BeforeValidator(_some_text)]
    summary: Annotated[str, BeforeValidator(_some_text)]
    rating: Annotated[float | None, BeforeValidator(_rating)] = None
    keywords: Annotated[list[str] | None, BeforeValidator(_keywords)] = None




def _bounded_report_schema() -> dict[str, Any]:
    """The reply schema with every string and list bounded: a server that constrains decoding to
    it cannot let a looping model write one summary sentence until the completion budget ends
    (Qwen2.5-Coder 0.5B did, four reports in five)."""
    schema = output_schema(ReportReply)
    fields = schema["properties"]
    fields["title"]["maxLength"] = TITLE_CHARS
    fields["summary"]["maxLength"] = SUMMARY_CHARS
    fields["keywords"].update(maxItems=8)
    fields["keywords"]["items"]["maxLength"] = KEYWORD_CHARS
    return schema


TITLE_CHARS, SUMMARY_CHARS, KEYWORD_CHARS = 160, 2400, 80
REPORT_SCHEMA = _bounded_report_schema()


def read_report(text: str) -> ReportReply:
    """The report in a model reply; ModelOutputError when it has no title or summary."""
    data = parse_json(text)
    if isinstance(data, list):
        data = next((d for d in data if isinstance(d, dict)), None)
    try:
        return validate(data, ReportReply)
    except Invalid:
        raise ModelOutputError("the report has no title or summary", text) from None


async def _llm_report(llm, parts: _Parts, rating: float) -> CommunityReport:
    # structured output where the server takes it; a reply that does not parse is not cached
    result = await llm.chat(load_prompt("community_report").messages(**_prompt_values(parts)), purpose="report",
                            schema=REPORT_SCHEMA, schema_name="community_report", parse=read_report)
    if result.error is not None:
        raise result.error
    reply: ReportReply = result.parsed
    return _report(parts, reply.title, without_repeats(reply.summary), rating if reply.rating is None else reply.rating, "llm",
                   reply.keywords[:8] if reply.keywords else None)


def _ratings(communities: Sequence[Community]) -> dict[str, float]:
    """Extractive rating 1-10: size and inner weight relative to the largest community of the level."""
    best: dict[int, float] = defaultdict(float)
    for c in communities:
        best[c.level] = max(best[c.level], len(c.members) + c.weight)
    return {c.id: round(1 + 9 * math.log1p(len(c.members) + c.weight) / math.log1p(best[c.level] or 1), 1)
            for c in communities}


REPORT_CLAIM = 8  # reports a process claims at a time: workers sharing a database split a level between them
CLAIM_POLL_S = 0.5  # how often a process that found nothing to claim looks whether the others finished the level


async def write_reports(store: CommunityUpkeep, communities: Sequence[Community], edges: Sequence[tuple[str, str, str, float]],
                        params: ReportParams, llm=None) -> ReportRun:
    """Write the missing reports of ``communities`` (members filled), finest level first.

    Each level's missing reports are queued as maintenance and claimed a few at a time, so workers
    that share a PostgreSQL database and finish together write a level's reports between them (none
    twice; a killed worker's claims pass to the others when its lease ends), and move to the next
    level only once the level is complete: a parent's report is written from all its children's."""
    run = ReportRun()
    known = _reusable(store, [c.signature for c in communities], params, llm)
    run.kept = len(known)
    writer = _ReportWriter(store, edges, communities, params, llm, run)
    for level in sorted({c.level for c in communities}, reverse=True):
        known.update(_reusable(store, [c.signature for c in communities if c.level == level], params, llm))
        todo = {c.signature: c for c in communities if c.level == level and c.signature not in known}
        if todo:
            await asyncio.to_thread(store.queue_maintenance, "reports", todo)
            await _share_level(store, todo, known, writer)
    return run


def _reusable(store: CommunityStore, signatures: list[str], params: ReportParams, llm) -> dict[str, CommunityReport]:
    """Stored reports that stay: with an LLM now, extractive ones (offline runs, fallbacks) are rewritten."""
    known = store.community_reports(signatures)
    if params.use_llm and llm is not None:
        known = {sig: r for sig, r in known.items() if r.method != "extractive"}
    return known


async def _share_level(store: CommunityUpkeep, todo: dict[str, Community], known: dict[str, CommunityReport],
                       writer: _ReportWriter) -> None:
    """Claim and write this level's reports until none is left to anyone (see :func:`write_reports`)."""
    while True:
        claimed = await asyncio.to_thread(store.claim_maintenance, "reports", REPORT_CLAIM)
        mine = [todo[sig] for sig in claimed if sig in todo and sig not in known]
        if mine:
            reports = await asyncio.gather(*(writer.one(c, known) for c in mine))
            await asyncio.to_thread(store.put_community_reports, reports)
            known.update({r.signature: r for r in reports})
            writer.run.written += len(reports)
        if claimed:  # done, or left over from communities that no longer exist (a killed run's)
            await asyncio.to_thread(store.finish_maintenance, "reports", claimed)
            continue
        if not set(await asyncio.to_thread(store.pending_maintenance, "reports")) & todo.keys():
            known.update(store.community_reports([sig for sig in todo if sig not in known]))
            return
        await asyncio.sleep(CLAIM_POLL_S)  # others are writing the rest of the level


class _ReportWriter:
    """One community's report: by the LLM when asked and it answers usably, else extractive."""

    def __init__(self, store: CommunityUpkeep, edges: Sequence[tuple[str, str, str, float]], communities: Sequence[Community],
                 params: ReportParams, llm, run: ReportRun):
        self.store, self.params, self.llm, self.run = store, params, llm, run
        self.adjacency = _Adjacency(edges)
        self.ratings = _ratings(communities)
        self.children: dict[str, list[Community]] = defaultdict(list)
        for c in communities:
            if c.parent_id:
                self.children[c.parent_id].append(c)

    async def one(self, c: Community, known: dict[str, CommunityReport]) -> CommunityReport:
        kids = [known[k.signature] for k in self.children.get(c.id, ()) if k.signature != c.signature
                and k.signature in known]
        kids.sort(key=lambda child: -child.rating)
        parts = _parts(self.store, c, self.adjacency, kids, self.params)
        if self.params.use_llm and self.llm is not None and parts.thematic:  # no call to describe the thanked
            try:
                report = await _llm_report(self.llm, parts, self.ratings[c.id])
                self.run.llm += 1
                return report
            except LLMUnavailableError:
                raise
            except (ModelOutputError, LLMError):
                self.run.fallbacks.append(c.id)
        title, summary = extractive_text(parts)
        return _report(parts, title, summary, self.ratings[c.id], "extractive")
