"""Communities as plain data for the CLI, the HTTP API and Python users (``KnowledgeBase.communities``)."""

from __future__ import annotations

from typing import Any

from ..errors import NotFoundError
from ..graph.community_update import state
from ..models import Community, CommunityReport
from ..store.base import BrowseStore


def _report_json(store: BrowseStore, report: CommunityReport | None, names: dict[str, Any], docs: dict[str, Any]) -> dict:
    if report is None:
        return {"title": None, "summary": None, "rating": None, "method": None, "thematic": None, "key_entities": [],
                "papers": [],
                "evidence": [], "keywords": []}
    return {
        # an extractive report's score comes from size and weight, not from a reader: no rating shown
        "title": report.title, "summary": report.summary, "rating": report.rating if report.method == "llm" else None,
        "method": report.method, "thematic": report.thematic,
        "key_entities": [{"id": i, "name": names[i].name, "type": names[i].type} for i in report.entities[:10]
                         if i in names],
        "papers": [{"id": d, "title": docs[d].title, "year": docs[d].year} for d in report.documents[:10] if d in docs],
        "evidence": [{**e, "title": docs[e["document_id"]].title if e.get("document_id") in docs else None}
                     for e in report.evidence],
        "keywords": report.keywords,
    }


def community_rows(store: BrowseStore, communities: list[Community], members: bool = False) -> list[dict]:
    reports = store.community_reports([c.signature for c in communities])
    entity_ids = {i for r in reports.values() for i in r.entities[:10]}
    doc_ids = {d for r in reports.values() for d in [*r.documents[:10], *(e["document_id"] for e in r.evidence)]}
    names = store.get_entities(entity_ids, sources=False)
    docs = store.documents_by_id(doc_ids)
    children: dict[str, list[str]] = {}
    for c in communities:
        if c.parent_id:
            children.setdefault(c.parent_id, []).append(c.id)
    rows = []
    for c in communities:
        row = {"id": c.id, "level": c.level, "parent": c.parent_id, "children": children.get(c.id, []),
               "size": len(c.members) or None, "relations": c.relations, "weight": c.weight,
               **_report_json(store, reports.get(c.signature), names, docs)}
        if members:
            row["members"] = c.members
        rows.append(row)
    return rows


def list_view(store: BrowseStore, level: int | None = None, members: bool = False) -> dict:
    """Every level's counts and modularity, and the communities (of ``level``, else all)."""
    every = store.list_communities(None, members=True)
    levels: dict[int, int] = {}
    for c in every:
        levels[c.level] = levels.get(c.level, 0) + 1
    if level is not None and level not in levels and every:
        raise NotFoundError(f"no community level {level}; levels: {', '.join(map(str, sorted(levels)))}")
    chosen = [c for c in every if level is None or c.level == level]
    if not members:
        sizes = {c.id: len(c.members) for c in chosen}
        chosen = [Community(c.id, c.level, c.signature, [], c.parent_id, c.relations, c.weight) for c in chosen]
    rows = community_rows(store, chosen, members)
    if not members:
        for row in rows:
            row["size"] = sizes[row["id"]]
    info = state(store)
    return {
        "levels": [{"level": lv, "communities": n, "modularity": round(float(info.get("modularity", {}).get(str(lv), 0.0)), 4)}
                   for lv, n in sorted(levels.items())],
        "computed_at": info.get("computed_at"), "seed": info.get("seed"),
        "communities": rows,
    }


def one_view(store: BrowseStore, community_id: str) -> dict:
    found = [c for c in store.list_communities(None) if c.id == community_id]
    if not found:
        raise NotFoundError(f"no community {community_id!r} (see `scholargraph communities`)")
    c = found[0]
    c.members = store.community_members([c.id])[c.id]
    return community_rows(store, [c], members=True)[0]
