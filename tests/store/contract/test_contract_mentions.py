"""Sentence-level provenance (MentionStore) and the paged reads of exports (ExportReads)."""

from __future__ import annotations

from contract_helpers import doc, entity_id, index_document

from scholargraph.graph.edit import merge_entities
from scholargraph.models import (
    LocalGraph,
    LocalKGEntity,
    LocalKGRelation,
    MentionRecord,
    RelationRecord,
    SentenceRecord,
)

SENTENCES = ["Retrieval-Augmented Generation (RAG) grounds answers.", "RAG can use BERT as its retriever."]


def _provenance(store, doc_id: str) -> None:
    """Sentences and mentions of a document indexed by ``index_document`` (entities RAG and BERT)."""
    rag, bert = entity_id(store, "RAG"), entity_id(store, "BERT")
    sentences = [SentenceRecord(doc_id, n, text, f"{doc_id}-c0", "Results", 2, 0, 3, 10 * n, 10 * n + len(text))
                 for n, text in enumerate(SENTENCES)]
    mentions = [
        MentionRecord("Retrieval-Augmented Generation", 0, 0, 30, f"{doc_id}-c0", category="general",
                      types=["Method", "Technique"], description="A method that retrieves, then generates.",
                      level="section", sentence=SENTENCES[0], section="Results", page=3, entity_id=rag, document_id=doc_id),
        MentionRecord("RAG", 1, 0, 3, f"{doc_id}-c0", category="named", level="sentence", sentence=SENTENCES[1],
                      section="Results", page=3, entity_id=rag, document_id=doc_id),
        MentionRecord("BERT", 1, 12, 16, f"{doc_id}-c0", category="named", types=["Model"], sentence=SENTENCES[1],
                      entity_id=bert, document_id=doc_id),
    ]

    def work() -> None:
        store.write_sentences(sentences)
        store.write_mentions(mentions)

    store.write(work)


def test_sentences_and_mentions_round_trip_in_reading_order(store):
    index_document(store, "d1")
    _provenance(store, "d1")
    sentences = store.sentences_of("d1")
    assert [s.text for s in sentences] == SENTENCES and [s.ordinal for s in sentences] == [0, 1]
    first = sentences[0]
    assert (first.document_id, first.chunk_id, first.section, first.section_no, first.paragraph_no, first.page,
            first.char_start) == ("d1", "d1-c0", "Results", 2, 0, 3, 0)
    mentions = store.mentions_of("d1")
    assert [m.surface for m in mentions] == ["Retrieval-Augmented Generation", "RAG", "BERT"]
    m = mentions[0]
    assert (m.category, m.types, m.description, m.level, m.section, m.page, m.entity_id) == (
        "general", ["Method", "Technique"], "A method that retrieves, then generates.", "section", "Results", 3,
        entity_id(store, "RAG"))
    for m in mentions:  # the span points into the stored sentence
        assert sentences[m.sentence_no].text[m.char_start:m.char_end] == m.surface == m.sentence[m.char_start:m.char_end]
    assert store.count("mentions") == 3 and store.count("sentences") == 2
    assert store.sentences_of("other") == [] and store.mentions_of("other") == []


def test_rewriting_a_sentence_replaces_it(store):
    index_document(store, "d1")
    _provenance(store, "d1")
    store.write_sentences([SentenceRecord("d1", 1, "Changed.", "d1-c0")])
    assert [s.text for s in store.sentences_of("d1")] == [SENTENCES[0], "Changed."]


def test_relation_records_keep_their_sentence_and_level(store):
    index_document(store, "d1")
    rag, bert = entity_id(store, "RAG"), entity_id(store, "BERT")
    record = RelationRecord("RAG", "BERT", "RAG uses BERT.", "d1-c0", ["uses"], 1.0, ["uses"], True, None,
                            id="r_x", source_id=rag, target_id=bert, document_id="d1", sentence=1, level="paragraph")
    store.write_relations([record])
    [found] = [r for r in store.relation_provenance(["r_x"])]
    assert (found.sentence, found.level, found.types) == (1, "paragraph", ["uses"])
    [older] = [r for r in store.relation_provenance([store.all_edges()[0][0]]) if r.id != "r_x"]
    assert (older.sentence, older.level) == (None, "")


def test_deleting_a_documents_graph_removes_its_sentences_and_mentions(store):
    index_document(store, "d1")
    index_document(store, "d2")
    _provenance(store, "d1")
    _provenance(store, "d2")
    store.delete_graph_of("d1")
    assert store.sentences_of("d1") == [] and store.mentions_of("d1") == []
    assert len(store.mentions_of("d2")) == 3 and len(store.sentences_of("d2")) == 2


def test_merged_entities_take_their_mentions_along(store):
    index_document(store, "d1")
    _provenance(store, "d1")
    rag, bert = entity_id(store, "RAG"), entity_id(store, "BERT")
    merge_entities(store, rag, [bert])
    assert {m.entity_id for m in store.mentions_of("d1")} == {rag}


def test_entity_and_relation_pages_cover_the_workspace_once(store):
    for n in range(5):
        index_document(store, f"d{n}")
        store.add_pending(doc(f"x{n}"), "full", "test")
    from contract_helpers import extraction

    from scholargraph.models import EntityRecord

    for n in range(3):  # entities of their own per document
        ext = extraction(f"x{n}-c0")
        ext.entities.append(EntityRecord(f"Model {n}", "Model", "", f"x{n}-c0"))
        index_document(store, f"x{n}", ext)
    pages = list(store.iter_entity_pages(size=2))
    assert all(1 <= len(p) <= 2 for p in pages)
    ids = [e.id for p in pages for e in p]
    assert ids == sorted(store.all_entity_ids()) and len(ids) == 5
    assert all(e.document_ids for p in pages for e in p)  # sources attached
    only = [e.name for p in store.iter_entity_pages(["x1"], size=1) for e in p]
    assert sorted(only) == sorted(["Retrieval-Augmented Generation", "BERT", "Model 1"])
    relations = [r.id for p in store.iter_relation_pages(size=1) for r in p]
    assert relations == [r for r, *_ in sorted(store.all_edges())]
    assert [r.id for p in store.iter_relation_pages(["nothing"]) for r in p] == []


def _local_graph(store, doc_id: str) -> LocalGraph:
    return LocalGraph(doc_id, [
        LocalKGEntity(0, "Retrieval-Augmented Generation", "general", ["method"], "Retrieves, then generates.", ["RAG"],
                      0.8, [(0, 0, 30), (1, 0, 3)], entity_id=entity_id(store, "RAG")),
        LocalKGEntity(3, "BERT", "named", ["model"], "A language model.", [], None, [(1, 12, 16)],
                      entity_id=entity_id(store, "BERT"))],
        [LocalKGRelation(0, "can use", 3, "uses", 1, "sentence"), LocalKGRelation(3, "model", 0, "skos:broader", 1,
                                                                                  "taxonomy")])


def test_a_papers_local_kg_round_trips_and_follows_merges_and_deletes(store):
    """A paper's own local KG, apart from the workspace graph, linked to it."""
    index_document(store, "d1")
    _provenance(store, "d1")
    written = _local_graph(store, "d1")
    store.write_local_graph(written)
    assert store.local_graph_of("d1") == written and store.local_graph_of("other") is None
    store.write_sentences([SentenceRecord("d1", 0, SENTENCES[0], "d1-c0", iri="https://example.org/s/0")])
    assert store.sentences_of("d1")[0].iri == "https://example.org/s/0"
    rag, bert = entity_id(store, "RAG"), entity_id(store, "BERT")
    merge_entities(store, rag, [bert])  # the link follows the workspace merge; the local KG stays two entities
    local = store.local_graph_of("d1")
    assert [(e.label, e.entity_id) for e in local.entities] == [("Retrieval-Augmented Generation", rag), ("BERT", rag)]
    assert local.relations == written.relations
    store.delete_graph_of("d1")
    assert store.local_graph_of("d1") is None
