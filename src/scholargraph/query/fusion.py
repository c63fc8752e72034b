"""Fusion of graph parts (thesis 000 §3.4, Concat(L_local, L_global)) and the numbered context.

Every retrieved item is a source numbered continuously ``[1] .. [n]``: the ``top_k`` ranked text
units first (they are a query's results), then entities, then relations. Entities and relations
are sources too: each is resolved to one supporting chunk (one in the context when possible, else
one among the text units, else its first supporting chunk) so that a citation to it still points
at a paper, section and page.

Budgets (step 6 of §3.3.2/§3.3.3) bound only the prompt context, never the results: entities and
relations each get their own token budget; the text units get what is left of
``max_context_tokens``. Each section keeps its best items until the next one would overflow its
budget (the first item of a section is always kept); the numbers left out are reported (``cut``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..models import Chunk, Entity, Relation, Source
from ..store.base import Store
from .citations import neutralise_source_citations
from .graph_modes import Part

SECTION_TITLES = ("Text units", "Entities", "Relations")


@dataclass
class Budgets:
    entities: int
    relations: int
    total: int


def _interleave(*lists: list[tuple[str, float]]) -> list[tuple[str, float]]:
    out: dict[str, float] = {}
    longest = max((len(x) for x in lists), default=0)
    for i in range(longest):
        for items in lists:
            if i < len(items) and items[i][0] not in out:
                out[items[i][0]] = items[i][1]
    return list(out.items())


def fuse(local: Part, global_: Part, limit_items: int, limit_chunks: int) -> Part:
    """Hybrid: local/subgraph and global results interleaved (local first), deduplicated."""
    part = Part("hybrid")
    part.entities = _interleave(local.entities, global_.entities)[:limit_items]
    part.relations = _interleave(local.relations, global_.relations)[:limit_items]
    part.chunks = _interleave(local.chunks, global_.chunks)[:limit_chunks]
    part.details = {"local": local.details, "global": global_.details, "local_mode": local.mode}
    part.notes = local.notes + global_.notes
    return part


def _one_line(text: str) -> str:
    return " ".join((text or "").split())


def entity_text(e: Entity) -> str:
    kind = f" ({e.type})" if e.type else ""
    desc = _one_line(e.description)
    return f"{e.name}{kind}: {desc}" if desc else f"{e.name}{kind}"


def relation_text(r: Relation, names: dict[str, str]) -> str:
    a, b = names.get(r.source_id, r.source_id), names.get(r.target_id, r.target_id)
    arrow = "->" if r.directed else "--"
    kw = f" [{', '.join(r.keywords[:6])}]" if r.keywords else ""
    return f"{a} {arrow} {b}{kw}: {_one_line(r.description)}"


def _where(s: Source) -> str:
    where = s.title or s.document_id or ""
    if s.section:
        where += f" — {s.section}"
    if s.page_start:
        where += f" (p. {s.page_start}{'' if s.page_end in (None, s.page_start) else f'–{s.page_end}'})"
    return where


def format_graph_context(sources: list[Source]) -> str:
    blocks = []
    for kind, title in zip(("chunk", "entity", "relation"), SECTION_TITLES, strict=True):
        items = [s for s in sources if s.kind == kind]
        if not items:
            continue
        if kind == "chunk":
            lines = [f"[{s.number}] {_where(s)}\n{neutralise_source_citations(s.text.strip())}" for s in items]
            blocks.append(f"### {title}\n" + "\n\n".join(lines))
        else:
            blocks.append(f"### {title}\n" + "\n".join(f"[{s.number}] {neutralise_source_citations(s.text)}"
                                                         for s in items))
    return "\n\n".join(blocks)


def _take(items: list, texts: list[str], budget: int, count: Callable[[str], int]) -> tuple[list, int]:
    kept: list = []
    used = 0
    for item, text in zip(items, texts, strict=True):
        n = count(text) + 4  # "[n] " and the line break
        if kept and used + n > budget:
            break
        kept.append(item)
        used += n
    return kept, used


@dataclass
class Context:
    """Every retrieved item as a numbered source (text units first, then entities, relations), and
    the prompt context: the items that fit the budgets. ``cut`` = numbers of the sources left out."""

    sources: list[Source]
    text: str
    cut: list[int]
    used_tokens: int
    budget_tokens: int


def build_sources(store: Store, part: Part, budgets: Budgets, count: Callable[[str], int]) -> Context:
    """Numbered sources (text units, then entities, then relations): all of them are the retrieval's
    results; the context holds those that fit the budgets (entities and relations their own shares,
    text units what is left of the total), each section keeping its best items."""
    ent_ids = [i for i, _ in part.entities]
    rel_ids = [i for i, _ in part.relations]
    relations = store.get_relations(rel_ids)
    ends = {x for r in relations.values() for x in (r.source_id, r.target_id)}
    entities = store.get_entities(list(dict.fromkeys(ent_ids + sorted(ends))))
    names = {i: e.name for i, e in entities.items()}

    ent_items = [(entities[i], s) for i, s in part.entities if i in entities]
    ent_kept, used_e = _take(ent_items, [entity_text(e) for e, _ in ent_items], budgets.entities, count)
    rel_items = [(relations[i], s) for i, s in part.relations if i in relations]
    rel_kept, used_r = _take(rel_items, [relation_text(r, names) for r, _ in rel_items], budgets.relations, count)

    chunks = store.get_chunks(i for i, _ in part.chunks)
    chunk_items = [(chunks[i], s) for i, s in part.chunks if i in chunks]
    chunk_budget = max(budgets.total - used_e - used_r, 0)
    chunk_kept, used_c = _take(chunk_items, [c.text for c, _ in chunk_items], chunk_budget, count)
    in_context = {c.id for c, _ in chunk_kept}
    retrieved = {c.id for c, _ in chunk_items}

    def anchor(chunk_ids: list[str]) -> str | None:
        for pool in (in_context, retrieved):
            for c in chunk_ids:
                if c in pool:
                    return c
        return chunk_ids[0] if chunk_ids else None

    anchors = {("e", e.id): anchor(e.chunk_ids) for e, _ in ent_items}
    anchors.update({("r", r.id): anchor(r.chunk_ids) for r, _ in rel_items})
    missing = {c for c in anchors.values() if c and c not in chunks}
    if missing:
        chunks.update(store.get_chunks(missing))
    docs = store.documents_by_id({c.document_id for c in chunks.values()}
                                 | {d for e, _ in ent_items for d in e.document_ids[:1]}
                                 | {d for r, _ in rel_items for d in r.document_ids[:1]})

    def make(number: int, kind: str, text: str, score: float, chunk: Chunk | None, doc_id: str | None) -> Source:
        doc_id = chunk.document_id if chunk else doc_id
        doc = docs.get(doc_id) if doc_id else None
        return Source(
            number=number, kind=kind, chunk_id=chunk.id if chunk else None, document_id=doc_id,
            title=doc.title if doc else None, section=chunk.section if chunk else None,
            page_start=chunk.page_start if chunk else None, page_end=chunk.page_end if chunk else None,
            text=text, score=float(score), authors=doc.authors if doc else [], year=doc.year if doc else None,
            venue=doc.venue if doc else None,
        )

    sources: list[Source] = []
    cut: list[int] = []
    kept_ids = {id(x) for x in (*chunk_kept, *ent_kept, *rel_kept)}
    for chunk_item in chunk_items:
        chunk, s = chunk_item
        sources.append(make(len(sources) + 1, "chunk", chunk.text, s, chunk, chunk.document_id))
        if id(chunk_item) not in kept_ids:
            cut.append(len(sources))
    for ent_item in ent_items:
        e, s = ent_item
        at = anchors[("e", e.id)]
        sources.append(make(len(sources) + 1, "entity", entity_text(e), s, chunks.get(at) if at else None,
                            e.document_ids[0] if e.document_ids else None))
        if id(ent_item) not in kept_ids:
            cut.append(len(sources))
    for rel_item in rel_items:
        r, s = rel_item
        at = anchors[("r", r.id)]
        sources.append(make(len(sources) + 1, "relation", relation_text(r, names), s, chunks.get(at) if at else None,
                            r.document_ids[0] if r.document_ids else None))
        if id(rel_item) not in kept_ids:
            cut.append(len(sources))
    dropped = set(cut)
    text = format_graph_context([x for x in sources if x.number not in dropped])
    return Context(sources, text, cut, used_e + used_r + used_c, budgets.total)
