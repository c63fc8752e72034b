"""One paper as the web app's paper page shows it (``KnowledgeBase.paper``): its metadata, its
sections (with pages and passages), the entities drawn from it (most passages first) and its
citations out (references, resolved to workspace papers where they match) and in."""

from __future__ import annotations

from typing import Any

from ..errors import NotFoundError
from ..store.base import BrowseStore
from .citation_view import paper_view

ENTITY_LIMIT = 300


def _sections(sections: list, chunks: list) -> list[dict]:
    """The paper's sections in reading order (heading, level, pages) with the passages holding
    each: a passage's section names every heading it spans ("A / B")."""
    passages: dict[str, int] = {}
    first: dict[str, str] = {}
    for chunk in sorted(chunks, key=lambda c: c.ordinal):
        for name in dict.fromkeys(part.strip() for part in (chunk.section or "").split(" / ")):
            passages[name] = passages.get(name, 0) + 1
            first.setdefault(name, chunk.id)
    return [{"title": s.heading, "level": s.level, "kind": s.kind, "page_start": s.page_start, "page_end": s.page_end,
             "passages": passages.get(s.heading.strip(), 0), "first_passage": first.get(s.heading.strip())}
            for s in sections if s.kind != "references"]


def _entities(store: BrowseStore, doc_id: str, chunk_ids: set[str]) -> tuple[list[dict], int]:
    found = [e for page in store.iter_entity_pages([doc_id]) for e in page]
    degrees = store.degrees([e.id for e in found])
    rows: list[dict[str, Any]] = [{"id": e.id, "name": e.name, "type": e.type or "", "passages": sum(1 for c in e.chunk_ids if c in chunk_ids),
             "degree": degrees.get(e.id, 0), "papers": len(e.document_ids)} for e in found]
    rows.sort(key=lambda r: (-r["passages"], -r["degree"], r["name"].casefold()))
    return rows[:ENTITY_LIMIT], len(rows)


def paper_page(store: BrowseStore, doc_id: str) -> dict:
    """``{"document", "sections", "entities", "entities_total", "references", "cited_by"}``; the
    document's ``source_path`` is the server's path (the HTTP layer shows a name instead)."""
    row = store.get_document(doc_id)
    if row is None:
        raise NotFoundError(f"no document with id {doc_id!r} (see `scholargraph status`)")
    chunks = store.chunks_of(doc_id)
    doc = store.load_document(doc_id)
    entities, total = _entities(store, doc_id, {c.id for c in chunks})
    citations = paper_view(store, doc_id)
    return {
        "document": {"id": row.id, "title": row.title, "authors": row.authors, "year": row.year, "venue": row.venue,
                     "doi": row.doi, "pmid": row.pmid, "status": row.status.value, "scope": row.scope,
                     "profile": row.profile, "chunks": row.chunks, "source_path": row.source_path},
        "sections": _sections(doc.sections if doc is not None else [], chunks),
        "entities": entities, "entities_total": total,
        "references": citations["references"], "cited_by": citations["cited_by"],
    }
