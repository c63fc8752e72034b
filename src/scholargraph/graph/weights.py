"""Node and edge weights of the biomedical graph (seed 003 §2.4, §2.5).

* node weight = degree / number of nodes, where degree is the number of distinct neighbouring
  entities (edges taken undirected, as in fastbmRAG) and nodes are the workspace's entities;
* edge weight = min (or mean, or max) of its two node weights -- the confidence of the link:
  edges between well-connected entities are better supported;
* paper weight = the paper-level ``weight`` (or ``IMPACT_FACTOR``) column of the fastbmRAG CSV,
  stored once per paper in ``documents.metadata`` and reached from each relation source through
  its ``document_id``; None when the paper has none.

Nothing here is materialised, so nothing can go stale: the facts weights are made of are the
stored relations (``GraphStore.degrees``, indexed by source and by target) and the entity count, which
every insert, delete, merge and split already keeps exact, incrementally, in the same unit of
work as the change. Reading the weights of k edges costs two indexed lookups per endpoint plus one count
-- never a pass over the whole graph, and never recomputed per indexing batch. The only
normalisation that would touch every row (dividing by the node count) is applied on read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import ConfigError
from ..store.base import Counts, DocumentStore, GraphSearch, GraphStore

COMBINE = ("min", "mean", "max")


def _norm_col(name: str) -> str:
    return re.sub(r"[\s_\-:.]+", "", str(name)).casefold()


def paper_weight(metadata: Mapping | str | None) -> float | None:
    """The paper-level weight in a document's metadata (``weight``, else ``IMPACT_FACTOR``), or None."""
    if isinstance(metadata, str):
        try:
            metadata = json.loads(metadata)
        except ValueError:
            return None
    if not isinstance(metadata, Mapping):
        return None
    by_col = {_norm_col(k): v for k, v in metadata.items()}
    for col in ("weight", "impactfactor", "if"):
        value = by_col.get(col)
        if value is None or value == "":
            continue
        try:
            x = float(value)
        except (TypeError, ValueError):
            continue
        if x == x:  # not NaN
            return x
    return None


def combine(a: float, b: float, how: str = "min") -> float:
    if how == "min":
        return min(a, b)
    if how == "max":
        return max(a, b)
    if how == "mean":
        return (a + b) / 2
    raise ConfigError(f"edge weight: unknown combination {how!r}; use one of {', '.join(COMBINE)}")


def node_count(store: Counts) -> int:
    return store.count("entities")


def degrees(store: GraphStore, entity_ids: Iterable[str]) -> dict[str, int]:
    """Distinct neighbours of each entity (0 for an isolated or unknown one)."""
    return store.degrees(entity_ids)


def node_weights(store: GraphSearch, entity_ids: Iterable[str], nodes: int | None = None) -> dict[str, float]:
    """degree / number of nodes, per entity."""
    deg = degrees(store, entity_ids)
    n = nodes if nodes is not None else node_count(store)
    return {k: (d / n if n else 0.0) for k, d in deg.items()}


def relation_ends(store: GraphStore, relation_ids: Iterable[str]) -> dict[str, tuple[str, str]]:
    return {rid: (r.source_id, r.target_id) for rid, r in store.get_relations(relation_ids, sources=False).items()}


def edge_weights(store: GraphSearch, relation_ids: Iterable[str] | Mapping[str, tuple[str, str]], how: str = "min") -> dict[str, float]:
    """combine(weight(source), weight(target)) per relation; relations that no longer exist are left out."""
    ends = dict(relation_ids) if isinstance(relation_ids, Mapping) else relation_ends(store, relation_ids)
    nodes = node_weights(store, {e for pair in ends.values() for e in pair})
    return {rid: combine(nodes[s], nodes[t], how) for rid, (s, t) in ends.items()}


def paper_weights(store: DocumentStore, document_ids: Iterable[str]) -> dict[str, float | None]:
    ids = list(dict.fromkeys(document_ids))
    docs = store.documents_by_id(ids)
    return {d: paper_weight(docs[d].metadata) if d in docs else None for d in ids}


@dataclass
class EdgeWeight:
    relation_id: str
    weight: float  # from the node weights (min/mean/max)
    papers: dict[str, float | None]  # document id -> paper weight, per source paper


def relation_weights(store: GraphSearch, relation_ids: Sequence[str], how: str = "min") -> dict[str, EdgeWeight]:
    """Edge weight plus the paper weight of every paper the relation was extracted from."""
    node_based = edge_weights(store, relation_ids, how)
    docs = store.relation_documents(list(node_based))
    papers = paper_weights(store, {d for ds in docs.values() for d in ds})
    return {rid: EdgeWeight(rid, w, {d: papers.get(d) for d in docs[rid]}) for rid, w in node_based.items()}


def all_weights(store: GraphSearch, how: str = "min") -> tuple[dict[str, float], dict[str, float]]:
    """(node weights, edge weights) of the whole graph, for inspection and tests."""
    ends = {rid: (s, t) for rid, s, t, _ in store.all_edges()}
    ids = store.all_entity_ids()
    nodes = node_weights(store, ids, len(ids))
    return nodes, {rid: combine(nodes[s], nodes[t], how) for rid, (s, t) in ends.items()}


__all__ = ["COMBINE", "EdgeWeight", "all_weights", "combine", "degrees", "edge_weights", "node_count", "node_weights",
           "paper_weight", "paper_weights", "relation_weights"]
