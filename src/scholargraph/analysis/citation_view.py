"""The citation network as plain data (``KnowledgeBase.citations``)."""

from __future__ import annotations

import re

from ..errors import NotFoundError
from ..graph.citations import citation_counts
from ..models import DocStatus, StubPaper
from ..store.base import BrowseStore

_MARKER = re.compile(r"^\s*(?:\[\d{1,4}\]|\d{1,4}\.)\s*")


def stub_title(stub: StubPaper | None, limit: int = 120) -> str | None:
    """What to call a cited paper outside the workspace: its parsed title, else the start of its
    reference text (never the ``ref:...`` id)."""
    if stub is None:
        return None
    if stub.title:
        return stub.title
    text = _MARKER.sub("", " ".join(stub.raw.split()))
    return (text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…") or None


def network_view(store: BrowseStore, limit: int = 50) -> dict:
    """Papers (workspace documents, then the most cited stub papers) with in/out citation counts,
    and the citation edges between workspace papers."""
    refs = store.references()
    cited_by, cites = citation_counts(refs)
    docs = [r for r in store.list_documents() if r.status == DocStatus.PROCESSED]
    ids = {d.id for d in docs}
    papers = [{"id": d.id, "title": d.title, "year": d.year, "doi": d.doi, "pmid": d.pmid, "stub": False,
               "cited_by": cited_by[d.id], "cites": cites[d.id]}
              for d in sorted(docs, key=lambda d: (-cited_by[d.id], -cites[d.id], d.id))]
    stubs = store.stub_papers()
    stub_rows = [{"id": s.id, "title": stub_title(s), "year": s.year, "doi": s.doi, "pmid": s.pmid, "stub": True,
                  "cited_by": cited_by[s.id], "cites": 0} for s in sorted(stubs, key=lambda s: (-cited_by[s.id], s.id))]
    edges = sorted({(r.citing_id, r.target_id) for r in refs if r.target_id in ids})
    return {
        "papers": len(docs), "stub_papers": len(stubs), "references": len(refs),
        "references_matched": sum(1 for r in refs if r.target_id in ids),
        "edges": [{"citing": a, "cited": b} for a, b in edges],
        "workspace_papers": papers,
        "most_cited_stubs": stub_rows[:limit],
    }


def paper_view(store: BrowseStore, doc_id: str) -> dict:
    """One paper's references (resolved) and the workspace papers citing it."""
    row = store.get_document(doc_id)
    if row is None:
        raise NotFoundError(f"no document with id {doc_id!r} (see `scholargraph status`)")
    refs = store.references([doc_id])
    targets = {r.target_id for r in refs}
    docs = store.documents_by_id(targets)
    stubs = {s.id: s for s in store.stub_papers([t for t in targets if t not in docs])}
    citing = sorted({r.citing_id for r in store.references() if r.target_id == doc_id})
    citing_docs = store.documents_by_id(citing)

    def target(t: str) -> dict:
        if t in docs:
            return {"id": t, "title": docs[t].title, "year": docs[t].year, "stub": False}
        s = stubs.get(t)
        return {"id": t, "title": stub_title(s), "year": s.year if s else None, "stub": True}

    return {
        "id": doc_id, "title": row.title, "year": row.year,
        "references": [{"ordinal": r.ordinal, "text": r.raw, "doi": r.doi, "pmid": r.pmid, "cites": target(r.target_id)}
                       for r in refs],
        "cited_by": [{"id": c, "title": citing_docs[c].title if c in citing_docs else None, "year":
                      citing_docs[c].year if c in citing_docs else None} for c in citing],
    }
