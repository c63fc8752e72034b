"""The whole entity graph for the web app's overview (``KnowledgeBase.overview``): every entity
(of a type, of a paper) up to a limit, placed by a seeded layout in which each community's members
lie together, coloured by community.

Beyond ``limit`` entities the most connected are kept and the answer says so (``sampled``,
``total_nodes``), so the browser draws a few thousand nodes at most."""

from __future__ import annotations

import math
from collections.abc import Iterable

import igraph as ig
import numpy as np

from ..models import Community, Entity
from ..store.base import BrowseStore

LAYOUT_ITERATIONS = 200


def _placement(n: int, pairs: list[tuple[int, int]], group: list[int], seed: int) -> list[tuple[float, float]]:
    """Fruchterman-Reingold from a start where each community sits on its own spot of a circle,
    so clusters stay apart; coordinates scaled to about 1000 units across."""
    if n == 0:
        return []
    if n == 1:
        return [(0.0, 0.0)]
    rng = np.random.default_rng(seed)
    groups = sorted(set(group))
    spot = {g: i for i, g in enumerate(groups)}
    start = []
    for g in group:
        angle = 2 * math.pi * spot[g] / max(len(groups), 1)
        start.append([3 * math.cos(angle) + rng.uniform(-0.5, 0.5), 3 * math.sin(angle) + rng.uniform(-0.5, 0.5)])
    weights = [3.0 if group[a] == group[b] and group[a] >= 0 else 1.0 for a, b in pairs]
    graph = ig.Graph(n=n, edges=pairs)
    coords = np.array(graph.layout_fruchterman_reingold(seed=start, niter=LAYOUT_ITERATIONS, weights=weights or None).coords)
    coords -= coords.mean(axis=0)
    span = float(np.abs(coords).max()) or 1.0
    return [(round(float(x) * 500 / span, 1), round(float(y) * 500 / span, 1)) for x, y in coords]


def overview(store: BrowseStore, limit: int = 1500, type_: str | None = None, document: str | None = None,
             seed: int = 42) -> dict:
    """``{"nodes", "edges", "communities", "types", "total_nodes", "total_edges", "sampled", "limit"}``:
    nodes ``{id, name, type, degree, community, x, y}`` (community: its level-0 id, or None), edges
    ``{id, source, target, weight}`` among the shown nodes; ``types``: entity count per type of the
    entities matching the paper filter (what the type filter offers)."""
    edges = store.all_edges()
    degree = _degrees(edges)
    entities = _entities(store, document)
    matching = [i for i, e in entities.items() if not type_ or (e.type or "") == type_]
    chosen = sorted(matching, key=lambda i: (-degree.get(i, 0), i))[:limit]
    index = {n: k for k, n in enumerate(chosen)}
    shown = [(rid, s, t, w) for rid, s, t, w in edges if s in index and t in index and s != t]
    level0 = store.list_communities(0)
    member_of = store.communities_of(chosen, 0) if level0 else {}
    order = {cid: k for k, cid in enumerate(sorted(c.id for c in level0))}
    group = [order[member_of[n]] if n in member_of else -1 for n in chosen]
    coords = _placement(len(chosen), [(index[s], index[t]) for _, s, t, _ in shown], group, seed)
    return {
        "nodes": [{"id": n, "name": entities[n].name, "type": entities[n].type or "", "degree": degree.get(n, 0),
                   "community": member_of.get(n), "x": x, "y": y} for n, (x, y) in zip(chosen, coords, strict=True)],
        "edges": [{"id": rid, "source": s, "target": t, "weight": round(float(w), 3)} for rid, s, t, w in shown],
        "communities": _shown_communities(store, level0, chosen, member_of),
        "types": _type_counts(entities.values()),
        "total_nodes": len(matching), "total_edges": len(edges), "sampled": len(matching) > len(chosen),
        "limit": limit,
    }


def _entities(store: BrowseStore, document: str | None) -> dict[str, Entity]:
    """Every entity, or those of the paper ``document``."""
    if not document:
        return store.get_entities(store.all_entity_ids(), sources=False)
    return {e.id: e for page in store.iter_entity_pages([document]) for e in page}


def _degrees(edges: list[tuple[str, str, str, float]]) -> dict[str, int]:
    """Each entity's number of relations to other entities."""
    degree: dict[str, int] = {}
    for _, s, t, _ in edges:
        if s != t:
            degree[s] = degree.get(s, 0) + 1
            degree[t] = degree.get(t, 0) + 1
    return degree


def _type_counts(entities: Iterable[Entity]) -> dict[str, int]:
    """Entities per type, the most frequent first (what the type filter offers)."""
    types: dict[str, int] = {}
    for e in entities:
        types[e.type or ""] = types.get(e.type or "", 0) + 1
    return dict(sorted(types.items(), key=lambda kv: (-kv[1], kv[0])))


def _shown_communities(store: BrowseStore, level0: list[Community], chosen: list[str],
                       member_of: dict[str, str]) -> list[dict]:
    """The level-0 communities with shown members: id, report title, members shown."""
    reports = store.community_reports([c.signature for c in level0]) if level0 else {}
    counts: dict[str, int] = {}
    for n in chosen:
        if n in member_of:
            counts[member_of[n]] = counts.get(member_of[n], 0) + 1
    return [{"id": c.id, "title": reports[c.signature].title if c.signature in reports else None,
             "shown": counts[c.id]} for c in level0 if c.id in counts]
