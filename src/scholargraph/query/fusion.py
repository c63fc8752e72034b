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
from ..store.base import ChunkStore, DocumentRow, PaperReads, SourceLimit
from .citations import neutralise_source_citations
from .graph_modes import Part
from .sources import format_context

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


def format_graph_context(sources: list[Source]) -> str:
    blocks = []
    for kind, title in zip(("chunk", "entity", "relation"), SECTION_TITLES, strict=True):
        items = [s for s in sources if s.kind == kind]
        if not items:
            continue
        if kind == "chunk":
            blocks.append(f"### {title}\n" + format_context(items))
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


@dataclass
class _Picked:
    """A part's items found in the store, best first per section, and which of them fit the budgets."""

    chunks: dict[str, Chunk]
    chunk_items: list[tuple[Chunk, float]]
    ent_items: list[tuple[Entity, float]]
    rel_items: list[tuple[Relation, float]]
    names: dict[str, str]  # entity id -> name, relation ends included
    kept: set[int]  # id() of the kept items
    in_context: set[str]  # ids of the kept chunks
    used_tokens: int


def _pick(store: PaperReads, part: Part, budgets: Budgets, count: Callable[[str], int]) -> _Picked:
    """Entities and relations take their own budgets, text units what is left of the total."""
    # each entity and relation cites one chunk (:func:`_anchor`): one it was retrieved with when it
    # can, else its first; so the store reads those and one more, not every chunk of a hub
    retrieved = tuple(dict.fromkeys(i for i, _ in part.chunks))
    cite = SourceLimit(len(retrieved) + 1, retrieved)
    relations = store.get_relations([i for i, _ in part.relations], cite)
    entities = store.get_entities([i for i, _ in part.entities], cite)
    ends = {x for r in relations.values() for x in (r.source_id, r.target_id)} - set(entities)
    names = {i: e.name for i, e in entities.items()}
    names.update({i: e.name for i, e in store.get_entities(sorted(ends), sources=False).items()})

    ent_items = [(entities[i], s) for i, s in part.entities if i in entities]
    ent_kept, used_e = _take(ent_items, [entity_text(e) for e, _ in ent_items], budgets.entities, count)
    rel_items = [(relations[i], s) for i, s in part.relations if i in relations]
    rel_kept, used_r = _take(rel_items, [relation_text(r, names) for r, _ in rel_items], budgets.relations, count)

    chunks = store.get_chunks(i for i, _ in part.chunks)
    chunk_items = [(chunks[i], s) for i, s in part.chunks if i in chunks]
    chunk_budget = max(budgets.total - used_e - used_r, 0)
    chunk_kept, used_c = _take(chunk_items, [c.text for c, _ in chunk_items], chunk_budget, count)
    return _Picked(
        chunks=chunks, chunk_items=chunk_items, ent_items=ent_items, rel_items=rel_items, names=names,
        kept={id(x) for x in (*chunk_kept, *ent_kept, *rel_kept)}, in_context={c.id for c, _ in chunk_kept},
        used_tokens=used_e + used_r + used_c,
    )


def _anchor(chunk_ids: list[str], picked: _Picked) -> str | None:
    """The chunk an entity or relation cites: one in the context, else one among the text units,
    else its first supporting chunk."""
    retrieved = {c.id for c, _ in picked.chunk_items}
    for pool in (picked.in_context, retrieved):
        for c in chunk_ids:
            if c in pool:
                return c
    return chunk_ids[0] if chunk_ids else None


@dataclass
class _Row:
    """One source before numbering: its item (to tell whether it was kept) and where it points."""

    item: tuple
    kind: str
    text: str
    score: float
    chunk: Chunk | None
    document_id: str | None


def _rows(store: ChunkStore, picked: _Picked) -> list[_Row]:
    """Text units, then entities, then relations, each graph item anchored to a chunk (fetched when
    it was not retrieved)."""
    anchors = {("e", e.id): _anchor(e.chunk_ids, picked) for e, _ in picked.ent_items}
    anchors.update({("r", r.id): _anchor(r.chunk_ids, picked) for r, _ in picked.rel_items})
    chunks = picked.chunks
    missing = {c for c in anchors.values() if c and c not in chunks}
    if missing:
        chunks.update(store.get_chunks(missing))

    def at(key: tuple[str, str]) -> Chunk | None:
        anchor = anchors[key]
        return chunks.get(anchor) if anchor else None

    rows = [_Row(item, "chunk", c.text, s, c, c.document_id) for item in picked.chunk_items for c, s in [item]]
    rows += [_Row(item, "entity", entity_text(e), s, at(("e", e.id)), e.document_ids[0] if e.document_ids else None)
             for item in picked.ent_items for e, s in [item]]
    rows += [_Row(item, "relation", relation_text(r, picked.names), s, at(("r", r.id)),
                  r.document_ids[0] if r.document_ids else None)
             for item in picked.rel_items for r, s in [item]]
    return rows


def _source(number: int, row: _Row, docs: dict[str, DocumentRow]) -> Source:
    chunk = row.chunk
    doc_id = chunk.document_id if chunk else row.document_id
    doc = docs.get(doc_id) if doc_id else None
    return Source(
        number=number, kind=row.kind, chunk_id=chunk.id if chunk else None, document_id=doc_id,
        title=doc.title if doc else None, section=chunk.section if chunk else None,
        page_start=chunk.page_start if chunk else None, page_end=chunk.page_end if chunk else None,
        text=row.text, score=float(row.score), authors=doc.authors if doc else [], year=doc.year if doc else None,
        venue=doc.venue if doc else None,
    )


def build_sources(store: PaperReads, part: Part, budgets: Budgets, count: Callable[[str], int]) -> Context:
    """Numbered sources (text units, then entities, then relations): all of them are the retrieval's
    results; the context holds those that fit the budgets (entities and relations their own shares,
    text units what is left of the total), each section keeping its best items."""
    picked = _pick(store, part, budgets, count)
    rows = _rows(store, picked)
    docs = store.documents_by_id({c.document_id for c in picked.chunks.values()}
                                 | {d for e, _ in picked.ent_items for d in e.document_ids[:1]}
                                 | {d for r, _ in picked.rel_items for d in r.document_ids[:1]})
    sources = [_source(n, row, docs) for n, row in enumerate(rows, start=1)]
    cut = [n for n, row in enumerate(rows, start=1) if id(row.item) not in picked.kept]
    dropped = set(cut)
    text = format_graph_context([x for x in sources if x.number not in dropped])
    return Context(sources, text, cut, picked.used_tokens, budgets.total)
