"""bio query mode, steps 2-4 (``.query``): filters on the graph (named entities, entity and
relation types, relaxed with a note when they leave nothing), the similarity search over relation
vectors (every relation above the threshold, else the most similar that pass the filters), edge
weights, and the evidence grouped into one numbered source per paper.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from ...graph.weights import combine, node_weights, paper_weight
from ...models import Source
from ...query.retrieval import Retrieval

_BATCH = 400


@dataclass
class Evidence:
    relation_id: str
    source: str
    target: str
    types: list[str]
    description: str
    document_id: str
    chunk_id: str
    similarity: float
    edge_weight: float | None = None
    confidence: float | None = None

    def line(self) -> str:
        kind = f" ({', '.join(self.types)})" if self.types else ""
        return f"{self.source} -> {self.target}{kind}: {self.description}"


def _relation_rows(store, ids: Sequence[str]) -> dict[str, tuple[str, str, list[str], str, str, str, str]]:
    """id -> (source id, target id, types, source name, source type, target name, target type)."""
    out = {}
    for i in range(0, len(ids), _BATCH):
        part = list(ids[i : i + _BATCH])
        rows = store.conn.execute(
            f"""SELECT r.id, r.source_id, r.target_id, r.types, s.name, s.type, t.name, t.type
                FROM relations r JOIN entities s ON s.id = r.source_id JOIN entities t ON t.id = r.target_id
                WHERE r.id IN ({','.join('?' * len(part))})""", part)
        for r in rows:
            out[r[0]] = (r[1], r[2], json.loads(r[3] or "[]"), r[4], r[5], r[6], r[7])
    return out


def _sources_of(store, ids: Sequence[str]) -> list[tuple[str, str, str, str, str, float | None]]:
    """(relation id, document id, chunk id, description, types json, confidence) per relation source."""
    out = []
    for i in range(0, len(ids), _BATCH):
        part = list(ids[i : i + _BATCH])
        out += [tuple(r) for r in store.conn.execute(
            f"""SELECT relation_id, document_id, chunk_id, description, types, confidence FROM relation_sources
                WHERE relation_id IN ({','.join('?' * len(part))}) ORDER BY document_id, rowid""", part)]
    return out


@dataclass
class Filters:
    named: set[str]  # gene / other entity ids
    diseases: set[str]
    entity_types: set[str]
    relation_types: set[str]

    def names_ok(self, row) -> bool:
        ends = {row[0], row[1]}
        return (not self.named or bool(ends & self.named)) and (not self.diseases or bool(ends & self.diseases))

    def types_ok(self, row, use_entity: bool, use_relation: bool) -> bool:
        if use_entity and self.entity_types and not ({row[4], row[6]} & self.entity_types):
            return False
        return not (use_relation and self.relation_types and not (set(row[2]) & self.relation_types))


async def search_evidence(store, embedder, question, filters: Filters, cutoff: float, min_weight: float | None,
                          how: str, retrieval: Retrieval, top_k: int) -> list[Evidence]:
    if store.count("relations") == 0:
        retrieval.notes.append("the graph has no relations (index with --profile fastbio)")
        return []
    qvec = await embedder.embed_one(question)
    index = store.vector_index("relation", embedder.dim)
    hits = dict(index.above(qvec, cutoff))
    rows = _relation_rows(store, list(hits))
    rows = {rid: row for rid, row in rows.items() if filters.names_ok(row)}
    fallback = False
    if not rows:  # nothing above the threshold: the most similar relations that pass the filters
        allowed = _named_candidates(store, filters)
        near = index.search(qvec, top_k * 5 if allowed is None else top_k, allowed=allowed)
        near_rows = _relation_rows(store, [i for i, _ in near])
        rows = {i: near_rows[i] for i, _ in near if i in near_rows and filters.names_ok(near_rows[i])}
        hits = {i: s for i, s in near if i in rows}
        fallback = bool(rows)
    kept = _apply_type_filters(rows, filters, retrieval)
    if fallback:
        kept = dict(sorted(kept.items(), key=lambda kv: -hits[kv[0]])[:top_k])
        if kept:
            retrieval.notes.append(f"no relation is {cutoff:.2f} similar to the question; showing the {len(kept)} "
                                   "most similar that pass the filters")
    weights: dict[str, float] = {}
    if kept:
        nodes = node_weights(store, {e for row in kept.values() for e in row[:2]})
        weights = {rid: combine(nodes[row[0]], nodes[row[1]], how) for rid, row in kept.items()}
    if min_weight is not None:
        dropped = [rid for rid in kept if weights[rid] < min_weight]
        for rid in dropped:
            del kept[rid]
        if dropped:
            retrieval.notes.append(f"{len(dropped)} relation(s) below the edge-weight threshold {min_weight:g} left out")
    out = []
    for rid, doc_id, chunk_id, desc, types_json, confidence in _sources_of(store, list(kept)):
        row = kept[rid]
        types = list(dict.fromkeys(json.loads(types_json or "[]") or row[2]))
        out.append(Evidence(rid, row[3], row[5], types, desc, doc_id, chunk_id, float(hits[rid]), weights.get(rid),
                            confidence))
    return out


def _named_candidates(store, filters: Filters) -> set[str] | None:
    ids = list(filters.named or filters.diseases)
    if not ids:
        return None
    out: set[str] = set()
    for i in range(0, len(ids), _BATCH):
        part = ids[i : i + _BATCH]
        marks = ",".join("?" * len(part))
        out.update(r[0] for r in store.conn.execute(
            f"SELECT id FROM relations WHERE source_id IN ({marks}) OR target_id IN ({marks})", part + part))
    return out


def _apply_type_filters(rows: dict, filters: Filters, retrieval: Retrieval) -> dict:
    """Entity- and relation-type filters; a filter that would leave nothing is dropped, with a note."""
    if not rows:
        return {}
    steps = [(True, True, "")]
    if filters.relation_types:
        steps.append((True, False, "no matching relation has the asked relation type(s) "
                                   f"({', '.join(sorted(filters.relation_types))}); relation types not used as a filter"))
    if filters.entity_types:
        steps.append((False, False, "no matching relation has an end of the asked entity type(s) "
                                    f"({', '.join(sorted(filters.entity_types))}); entity types not used as a filter"))
    for use_entity, use_relation, note in steps:
        kept = {rid: row for rid, row in rows.items() if filters.types_ok(row, use_entity, use_relation)}
        if kept:
            if note:
                retrieval.notes.append(note)
            return kept
    return {}


def paper_sources(store, evidence: list[Evidence]) -> list[Source]:
    by_doc: dict[str, list[Evidence]] = {}
    for e in evidence:
        by_doc.setdefault(e.document_id, []).append(e)
    docs = store.documents_by_id(by_doc)
    weights = {d: paper_weight(docs[d].metadata) if d in docs else None for d in by_doc}

    def rank(d: str) -> tuple:
        return (-max(e.similarity for e in by_doc[d]), -(weights[d] if weights[d] is not None else float("-inf")), d)

    sources = []
    for n, doc_id in enumerate(sorted(by_doc, key=rank), start=1):
        items = sorted(by_doc[doc_id], key=lambda e: -e.similarity)
        lines = list(dict.fromkeys(e.line() for e in items if e.description))
        doc = docs.get(doc_id)
        sources.append(Source(
            number=n, kind="relation", chunk_id=items[0].chunk_id, document_id=doc_id,
            title=doc.title if doc else None, section=None, page_start=None, page_end=None, text="\n".join(lines),
            score=items[0].similarity, authors=doc.authors if doc else [], year=doc.year if doc else None,
            venue=doc.venue if doc else None))
    return sources


__all__ = ["Evidence"]
