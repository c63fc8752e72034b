"""A paper's local knowledge graph as facts (subject, predicate, object, with the sentence and
section they come from), entity relevance to the paper, and the two scores the seed 004 §5
evaluations compare texts with: embedding similarity and lexical overlap (ROUGE-1 on content words).

Works for any profile's papers: a relation record without a sentence is placed in its chunk's section."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import NotFoundError
from ..export.source import BROADER, predicate_of
from ..models import Entity
from ..store.base import BrowseStore
from ..text.stopwords import STOPWORDS
from ..text.tokens import tokenize

Embed = Callable[[Sequence[str]], Awaitable[np.ndarray]]
WINDOW_WORDS = 200  # texts are embedded in windows (the embedding model truncates long inputs)


@dataclass
class Fact:
    subject_id: str
    subject: str
    predicate: str
    object_id: str
    object: str
    section: str
    sentence: int | None = None
    level: str = ""

    def line(self) -> str:
        if self.predicate == BROADER:
            return f"- {self.subject} is a kind of {self.object}."
        return f"- {self.subject} {self.predicate} {self.object}."


@dataclass
class PaperKG:
    doc_id: str
    title: str
    sections: list[tuple[str, str]]  # (heading, text) in paper order
    entities: dict[str, Entity]
    facts: list[Fact] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n\n".join(t for _, t in self.sections)


def load_paper_kg(store: BrowseStore, doc_id: str) -> PaperKG:
    doc = store.load_document(doc_id)
    if doc is None:
        raise NotFoundError(f"no indexed document with id {doc_id!r} (see `scholargraph status`)")
    entities = {e.id: e for page in store.iter_entity_pages([doc_id]) for e in page}
    section_of_sentence = {s.ordinal: s.section or "" for s in store.sentences_of(doc_id)}
    section_of_chunk = {c.id: c.section or "" for c in store.chunks_of(doc_id)}
    kg = PaperKG(doc_id, doc.title, [(s.heading, s.text) for s in doc.sections if s.text.strip()], entities)
    for page in store.iter_relation_pages([doc_id]):
        for rec in store.relation_provenance([r.id for r in page]):
            if rec.document_id != doc_id or rec.source_id not in entities or rec.target_id not in entities:
                continue
            section = section_of_sentence.get(rec.sentence, "") if rec.sentence is not None else \
                section_of_chunk.get(rec.chunk_id, "")
            kg.facts.append(Fact(rec.source_id, entities[rec.source_id].name, predicate_of(rec), rec.target_id,
                                 entities[rec.target_id].name, section, rec.sentence, rec.level))
    return kg


def entity_relevance(store: BrowseStore, kg: PaperKG) -> dict[str, float]:
    """Cosine of each entity's vector to the paper's (mean of its chunk vectors), as stage 4 ranks them."""
    chunks = store.get_vectors("chunk", [c.id for c in store.chunks_of(kg.doc_id)])
    vectors = store.get_vectors("entity", list(kg.entities))
    if not chunks:
        return dict.fromkeys(kg.entities, 0.0)
    paper = np.mean(np.stack(list(chunks.values())), axis=0)
    paper /= np.linalg.norm(paper) or 1.0
    return {e: float(np.dot(vectors[e], paper)) if e in vectors else 0.0 for e in kg.entities}


def stored_relevance(store: BrowseStore, kg: PaperKG) -> dict[str, float]:
    """Each entity's relevance as the paper's local KG stored it (stage 4, seed 004 §4.4): the
    highest of the paper's local entities linked to it; the embedding cosine
    (:func:`entity_relevance`) for entities it has none for (papers of other profiles)."""
    computed = entity_relevance(store, kg)
    local = store.local_graph_of(kg.doc_id)
    stored: dict[str, float] = {}
    for e in local.entities if local else []:
        if e.relevance is not None and e.entity_id:
            stored[e.entity_id] = max(stored.get(e.entity_id, float("-inf")), float(e.relevance))
    return {e: stored.get(e, computed.get(e, 0.0)) for e in kg.entities}


def content_words(text: str) -> list[str]:
    return [w for w in (t.casefold() for t in tokenize(text)) if w.isalnum() and w not in STOPWORDS]


def overlap(reference: str, generated: str) -> dict[str, float]:
    """ROUGE-1 over content words: recall (of the reference), precision (of the generated text), F1."""
    ref, gen = Counter(content_words(reference)), Counter(content_words(generated))
    common = sum((ref & gen).values())
    recall = common / sum(ref.values()) if ref else 0.0
    precision = common / sum(gen.values()) if gen else 0.0
    f1 = 2 * recall * precision / (recall + precision) if recall + precision else 0.0
    return {"recall": round(recall, 4), "precision": round(precision, 4), "f1": round(f1, 4)}


async def similarity(embed: Embed, a: str, b: str) -> float:
    """Cosine of the two texts' embeddings (each the mean of its windows of ``WINDOW_WORDS`` words)."""
    if not a.strip() or not b.strip():
        return 0.0
    windows = [_windows(a), _windows(b)]
    vectors = np.asarray(await embed(windows[0] + windows[1]), dtype=np.float32)
    va, vb = vectors[: len(windows[0])].mean(axis=0), vectors[len(windows[0]):].mean(axis=0)
    denom = float(np.linalg.norm(va) * np.linalg.norm(vb))
    return round(float(np.dot(va, vb)) / denom, 4) if denom else 0.0


def _windows(text: str) -> list[str]:
    words = text.split()
    return [" ".join(words[i : i + WINDOW_WORDS]) for i in range(0, len(words), WINDOW_WORDS)]


def summary(values: Sequence[float]) -> dict[str, float | None]:
    if not values:
        return {"mean": None, "median": None, "min": None}
    return {"mean": round(float(np.mean(values)), 4), "median": round(float(np.median(values)), 4),
            "min": round(float(np.min(values)), 4)}
