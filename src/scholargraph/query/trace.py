"""What a query mode used to find its evidence, with names (``ask --json``/``retrieve --json``
``trace``, the HTTP API's ``/ask`` and ``/retrieve``).

From a retrieval's ``details`` (entity and relation ids): the subgraph mode's matched nodes, the
shortest paths between them, the subgraph kept after pruning, the pruned and expansion edges
(thesis 000 §3.3.2); the global mode's matched edges (§3.3.3); hybrid's two parts; local's matched
nodes and neighbours; ppr's seed entities and passages; the bio mode's parsed filters and the
entities they matched (seed 003 §2.5); the summary mode's community level. Entities are
``{"id", "name", "type"}``, edges ``{"id", "source", "target", "keywords"}``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..store.base import GraphStore

MAX_ITEMS = 100  # per list: a trace stays readable


class _Names:
    """Entity and relation lookups for one trace (one query each)."""

    def __init__(self, store: GraphStore, details: dict[str, Any]):
        entity_ids: set[str] = set()
        relation_ids: set[str] = set()
        _collect(details, entity_ids, relation_ids)
        self.relations = store.get_relations(list(relation_ids), sources=False) if relation_ids else {}
        entity_ids |= {x for r in self.relations.values() for x in (r.source_id, r.target_id)}
        self.entities = store.get_entities(list(entity_ids), sources=False) if entity_ids else {}

    def entity(self, eid: str) -> dict[str, Any]:
        e = self.entities.get(eid)
        return {"id": eid, "name": e.name if e else None, "type": e.type if e else None}

    def name(self, eid: str) -> str:
        e = self.entities.get(eid)
        return e.name if e else eid

    def nodes(self, ids: Iterable[str]) -> list[dict[str, Any]]:
        return [self.entity(i) for i in list(ids)[:MAX_ITEMS]]

    def edges(self, ids: Iterable[str]) -> list[dict[str, Any]]:
        out = []
        for rid in list(ids)[:MAX_ITEMS]:
            r = self.relations.get(rid)
            out.append({"id": rid, "source": self.name(r.source_id) if r else None,
                        "target": self.name(r.target_id) if r else None, "keywords": r.keywords[:6] if r else []})
        return out


_NODE_KEYS = ("matched", "neighbours", "subgraph_nodes")
_EDGE_KEYS = ("subgraph_relations", "pruned", "expansion", "matched_relations")


def _collect(details: dict[str, Any], entities: set[str], relations: set[str]) -> None:
    for key in _NODE_KEYS:
        entities.update(list(details.get(key) or [])[:MAX_ITEMS])
    for path in (details.get("paths") or [])[:MAX_ITEMS]:
        entities.update(path)
    for key in _EDGE_KEYS:
        relations.update(list(details.get(key) or [])[:MAX_ITEMS])
    seeds = details.get("seeds")
    if isinstance(seeds, dict):
        entities.update(seeds.get("entities") or [])
    for ids in (details.get("matched_entities") or {}).values():
        entities.update(ids)
    for part in ("local", "global"):
        if isinstance(details.get(part), dict):
            _collect(details[part], entities, relations)


def _graph_part(names: _Names, details: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "matched" in details:
        out["matched_nodes"] = names.nodes(details["matched"])
    if "paths" in details:
        out["paths"] = [[names.name(n) for n in path] for path in details["paths"][:MAX_ITEMS]]
    if "subgraph_nodes" in details:
        out["subgraph"] = {"nodes": names.nodes(details["subgraph_nodes"]),
                           "edges": names.edges(details.get("subgraph_relations", []))}
    if "pruned" in details:
        out["pruned_edges"] = names.edges(details["pruned"])
    if "expansion" in details:
        out["expansion_edges"] = names.edges(details["expansion"])
    if "neighbours" in details:
        out["neighbours"] = names.nodes(details["neighbours"])
    if "matched_relations" in details:
        out["edges"] = names.edges(details["matched_relations"])
    seeds = details.get("seeds")
    if isinstance(seeds, dict):
        out["seeds"] = {"entities": names.nodes(seeds.get("entities") or []),
                        "passages": list(seeds.get("passages") or [])[:MAX_ITEMS]}
    return out


def build_trace(store: GraphStore, mode: str, details: dict[str, Any]) -> dict[str, Any]:
    """The named trace of one retrieval (see the module doc); ``{}`` for modes that record nothing."""
    if not details:
        return {}
    names = _Names(store, details)
    out: dict[str, Any] = {"mode": mode}
    if isinstance(details.get("local"), dict) or isinstance(details.get("global"), dict):
        out["local"] = {"mode": details.get("local_mode"), **_graph_part(names, details.get("local") or {})}
        out["global"] = _graph_part(names, details.get("global") or {})
    out.update(_graph_part(names, details))
    if "parsed" in details:  # bio
        out["filters"] = details["parsed"]
        out["matched_entities"] = {n: names.nodes(ids) for n, ids in (details.get("matched_entities") or {}).items()}
        for key in ("threshold", "weight_threshold", "edge_weight", "papers_filter", "relations", "papers"):
            if key in details:
                out[key] = details[key]
    for key in ("level", "levels", "reports_at_level"):  # summary
        if key in details:
            out[key] = details[key]
    return out


__all__ = ["build_trace"]
