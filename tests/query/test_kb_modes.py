"""Every query mode through KnowledgeBase on a real offline-profile workspace (real embedding model)."""

from __future__ import annotations

import pytest

from scholargraph import KnowledgeBase
from scholargraph.query.modes import CORE_MODES

MODES = [m.name for m in CORE_MODES]

TEXTS = [
    {"title": "Retrieval-Augmented Generation for Science", "text":
        "Retrieval-Augmented Generation (RAG) grounds large language models in retrieved evidence. "
        "Graph-based RAG builds a knowledge graph of entities and relations from the corpus. "
        "RAG with a knowledge graph answers multi-hop questions better than naive retrieval."},
    {"title": "Knowledge Graphs in Biomedicine", "text":
        "Knowledge graphs connect genes, diseases and drugs. BERT encoders embed entity descriptions. "
        "RAG systems use knowledge graphs to answer questions about the IL1B gene in endometriosis."},
    {"title": "Graph retrieval", "text":
        "Subgraph retrieval uses shortest paths between matched entities in the knowledge graph."},
]
QUESTION = "How does subgraph retrieval use the knowledge graph for RAG?"


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    with KnowledgeBase(tmp_path_factory.mktemp("kbmodes") / "ws", extraction={"profile": "offline"}) as kb:
        kb.insert(texts=TEXTS)
        yield kb


@pytest.mark.parametrize("mode", MODES)
def test_each_mode_retrieves_sources_that_point_at_papers(kb, mode):
    r = kb.retrieve(QUESTION, mode=mode)
    assert r.mode == mode and r.sources
    assert all(s.document_id and s.chunk_id and s.title for s in r.sources)
    assert [s.number for s in r.sources] == list(range(1, len(r.sources) + 1))
    if mode != "naive":
        assert {s.kind for s in r.sources} >= {"entity", "relation", "chunk"}
        assert "### Text units" in r.context
        assert r.keywords["source"] == "offline" and r.keywords["low_level"]


def test_default_mode_is_hybrid_and_answers_without_an_llm(kb):
    answer = kb.query(QUESTION)
    assert answer.mode == "hybrid" and answer.extractive and answer.cited
    kinds = {s.number: s.kind for s in answer.sources}  # passages, then the graph evidence (relations)
    assert kinds[answer.cited[0]] == "chunk" and all(kinds[n] in ("chunk", "relation") for n in answer.cited)
    data = answer.to_json()
    assert data["usage"]["llm_calls"] == 0 and "retrieval_s" in data["timings"]


def test_subgraph_finds_the_path_through_the_knowledge_graph(kb):
    r = kb.retrieve(QUESTION, mode="subgraph")
    names = {s.text.split(" (")[0].lower() for s in r.sources if s.kind == "entity"}
    assert {"subgraph retrieval", "knowledge graph"} <= names
    assert names & {"rag", "retrieval-augmented generation"}  # "RAG" is matched by its alias
    assert r.details["paths"]
