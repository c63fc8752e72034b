"""Records and documents the contract tests build graphs from."""

from __future__ import annotations

from scholargraph.graph.merge import plan_writes
from scholargraph.models import Chunk, Document, EntityRecord, Extraction, KeywordRecord, RelationRecord, Section
from scholargraph.store import Store

DIM = 4  # the embedding dimension the ``store`` fixture records


def key(name: str) -> str:
    return " ".join(name.lower().split())


def doc(doc_id: str, words: int = 5, **fields) -> Document:
    return Document(id=doc_id, title=f"Title {doc_id}", sections=[Section("body", "word " * words)], **fields)


def chunk(doc_id: str, ordinal: int = 0, text: str = "text") -> Chunk:
    return Chunk(f"{doc_id}-c{ordinal}", doc_id, ordinal, text, len(text.split()), section="Results", char_start=0,
                 char_end=len(text), page_start=2, page_end=3, header=f"Paper: {doc_id}")


def extraction(chunk_id: str) -> Extraction:
    return Extraction(
        entities=[EntityRecord("Retrieval-Augmented Generation", "Method", "combines retrieval and generation", chunk_id,
                               ["RAG"]),
                  EntityRecord("BERT", "Model", "an encoder", chunk_id)],
        relations=[RelationRecord("RAG", "BERT", "RAG can use BERT", chunk_id, ["uses"], 2.0, ["Uses"], True, 0.8)],
        keywords=[KeywordRecord("retrieval", chunk_id)],
    )


def index_document(store: Store, doc_id: str, ext: Extraction | None = None):
    """What the pipeline's commit does for one document (minus vectors); returns the resolved records."""
    store.add_pending(doc(doc_id), "full", "test")
    c = chunk(doc_id)
    ext = ext or extraction(c.id)

    def work():
        known = store.entities_by_keys([key(e.name) for e in ext.entities] + [key(n) for e in ext.entities for n in e.aliases])
        writes = plan_writes(doc_id, ext, key, known)
        store.insert_chunks([c])
        store.write_entities(writes.entities)
        store.write_relations(writes.relations)
        store.write_keywords(writes.keywords)
        return writes

    return store.write(work)


def entity_id(store: Store, name: str) -> str:
    ids = store.find_entity(name)
    assert len(ids) == 1, (name, ids)
    return ids[0]
