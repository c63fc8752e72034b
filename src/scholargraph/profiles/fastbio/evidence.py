"""bio query mode, steps 2-4 (``.query``): filters on the graph (named entities, entity and
relation types, relaxed with a note when they leave nothing), the similarity search over relation
vectors (every relation above the threshold, else the most similar that pass the filters), edge
weights, and the evidence grouped into one numbered source per paper.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...graph.weights import combine, node_weights, paper_weight
from ...models import Source
from ...query.retrieval import Retrieval
from ...store.base import DocumentStore, GraphSearch, GraphStore


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


def _relation_rows(store: GraphStore, ids: Sequence[str]) -> dict[str, tuple[str, str, list[str], str, str, str, str]]:
    """id -> (source id, target id, types, source name, source type, target name, target type)."""
    relations = store.get_relations(ids, sources=False)
    ends = store.get_entities({e for r in relations.values() for e in (r.source_id, r.target_id)}, sources=False)
    return {rid: (r.source_id, r.target_id, list(r.types), ends[r.source_id].name, ends[r.source_id].type,
                  ends[r.target_id].name, ends[r.target_id].type)
            for rid, r in relations.items() if r.source_id in ends and r.target_id in ends}


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


async def search_evidence(store: GraphSearch, embedder, question, filters: Filters, cutoff: float, min_weight: float | None,
                          how: str, retrieval: Retrieval, top_k: int, max_relations: int = 1000) -> list[Evidence]:
    """The relations above ``cutoff`` (at most ``max_relations``, the most similar: searched among the
    named entities' relations when the question names any, else through the vector index), else the
    most similar that pass the filters; weighted, with their per-paper descriptions."""
    if not store.has_rows("relations"):  # counting 570,000 relations took 40 ms a question
        retrieval.notes.append("the graph has no relations (index with --profile fastbio)")
        return []
    qvec = await embedder.embed_one(question)
    index = store.vector_index("relation", embedder.dim)
    allowed = _named_candidates(store, filters)
    if allowed is None:
        above = index.above(qvec, cutoff, limit=max_relations)
    else:
        above = [(i, s) for i, s in index.search(qvec, max_relations, allowed=allowed) if s >= cutoff]
    if len(above) >= max_relations:
        retrieval.notes.append(f"at least {max_relations} relations are {cutoff:.2f} similar to the question; the "
                               f"{max_relations} most similar are used (plugins.bio.max_relations)")
    hits = dict(above)
    rows = _relation_rows(store, list(hits))
    rows = {rid: row for rid, row in rows.items() if filters.names_ok(row)}
    fallback = False
    if not rows:  # nothing above the threshold: the most similar relations that pass the filters
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
    for record in store.relation_provenance(list(kept)):
        rid, row = record.id, kept[record.id]
        types = list(dict.fromkeys(record.types or row[2]))
        out.append(Evidence(rid, row[3], row[5], types, record.description, record.document_id, record.chunk_id,
                            float(hits[rid]), weights.get(rid), record.confidence))
    return out


def _named_candidates(store: GraphStore, filters: Filters) -> set[str] | None:
    ids = list(filters.named or filters.diseases)
    return set(store.relations_touching(ids)) if ids else None


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


def paper_sources(store: DocumentStore, evidence: list[Evidence]) -> list[Source]:
    by_doc: dict[str, list[Evidence]] = {}
    for e in evidence:
        by_doc.setdefault(e.document_id, []).append(e)
    docs = store.documents_by_id(by_doc)
    weights = {d: paper_weight(docs[d].metadata) if d in docs else None for d in by_doc}

    def rank(d: str) -> tuple:
        weight = weights[d]
        return (-max(e.similarity for e in by_doc[d]), -(weight if weight is not None else float("-inf")), d)

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
