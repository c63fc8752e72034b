"""The library as the web app pages through it (``KnowledgeBase.library``): documents matching a
search and filters, sorted, one page at a time, with the counts the filters offer."""

from __future__ import annotations

from collections import Counter
from typing import Any

SORT_KEYS = ("title", "year", "authors", "status", "added", "updated")


def _matches(row: dict, words: list[str]) -> bool:
    hay = " ".join([row.get("title") or "", " ".join(row.get("authors") or []), row.get("venue") or "",
                    row.get("doi") or "", row.get("id") or "", row.get("source_path") or ""]).casefold()
    return all(w in hay for w in words)


def _key(sort: str):
    def key(row: dict) -> tuple:
        if sort == "year":
            return (row.get("year") is None, row.get("year") or 0, (row.get("title") or "").casefold())
        if sort == "authors":
            authors = row.get("authors") or []
            return (not authors, (authors[0] if authors else "").casefold(), (row.get("title") or "").casefold())
        if sort in ("status", "added", "updated"):
            field = {"added": "created_at", "updated": "updated_at"}.get(sort, sort)
            return (str(row.get(field) or ""), (row.get("title") or "").casefold())
        return ((row.get("title") or row.get("id") or "").casefold(),)
    return key


def library_page(rows: list[dict[str, Any]], *, search: str = "", status: str | None = None,
                 year: int | None = None, sort: str = "title", descending: bool = False, offset: int = 0,
                 limit: int = 50) -> dict[str, Any]:
    """``rows`` (status rows with bibliographic fields) filtered by ``search`` (every word in the
    title, authors, venue, DOI, id or file), ``status`` and ``year``, sorted by ``sort`` (one of
    :data:`SORT_KEYS`; missing years and authors last), and the page ``offset``..``offset+limit``."""
    words = search.casefold().split()
    found = [r for r in rows if _matches(r, words)]
    statuses = Counter(r["status"] for r in found)
    years = Counter(r["year"] for r in found if r.get("year"))
    found = [r for r in found if (not status or r["status"] == status) and (not year or r.get("year") == year)]
    found.sort(key=_key(sort), reverse=descending)
    if descending and sort in ("year", "authors"):  # missing values stay last either way
        found.sort(key=lambda r: not (r.get("year") if sort == "year" else r.get("authors")))
    return {"documents": found[offset:offset + limit], "total": len(found), "offset": offset, "limit": limit,
            "sort": sort, "order": "desc" if descending else "asc",
            "statuses": dict(sorted(statuses.items())), "years": dict(sorted(years.items(), reverse=True))}
