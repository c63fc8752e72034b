"""Resolve retrieved chunks to numbered sources with paper title, authors, year, section, pages."""

from __future__ import annotations

from collections.abc import Sequence

from ..models import Chunk, Source
from ..store.base import DocumentStore
from .citations import neutralise_source_citations


def chunk_sources(store: DocumentStore, ranked: Sequence[tuple[Chunk, float]], start: int = 1) -> list[Source]:
    docs = store.documents_by_id(c.document_id for c, _ in ranked)
    out = []
    for i, (chunk, score) in enumerate(ranked, start=start):
        doc = docs.get(chunk.document_id)
        out.append(Source(
            number=i, kind="chunk", chunk_id=chunk.id, document_id=chunk.document_id,
            title=doc.title if doc else None, section=chunk.section, page_start=chunk.page_start,
            page_end=chunk.page_end, text=chunk.text, score=score, authors=doc.authors if doc else [],
            year=doc.year if doc else None, venue=doc.venue if doc else None,
        ))
    return out


def format_reference(source: Source) -> str:
    """One line a reader can follow back to the paper: title, authors/year, section, pages."""
    parts = [source.title or source.document_id or "?"]
    if source.authors:
        who = source.authors[0] + (" et al." if len(source.authors) > 1 else "")
        parts.append(f"{who} ({source.year})" if source.year else who)
    elif source.year:
        parts.append(str(source.year))
    if source.section:
        parts.append(f"§ {source.section}")
    if source.page_start:
        pages = source.page_start if source.page_end in (None, source.page_start) else f"{source.page_start}–{source.page_end}"
        parts.append(f"p. {pages}")
    parts.append(f"chunk {source.chunk_id}" if source.chunk_id else source.kind)
    return " · ".join(str(p) for p in parts)


def source_location(s: Source) -> str:
    """"Paper — Section (p. 3–4)" for a context block."""
    where = s.title or s.document_id or ""
    if s.section:
        where += f" — {s.section}"
    if s.page_start:
        where += f" (p. {s.page_start}{'' if s.page_end in (None, s.page_start) else f'–{s.page_end}'})"
    return where


def format_context(sources: Sequence[Source]) -> str:
    return "\n\n".join(f"[{s.number}] {source_location(s)}\n{neutralise_source_citations(s.text.strip())}"
                         for s in sources)
