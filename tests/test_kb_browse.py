"""Facade browsing methods (used by the HTTP server): passages, neighbourhoods, subgraphs, relation
evidence, export, sessions and explicit history."""

import json
import xml.etree.ElementTree as ET

import pytest

from scholargraph import KnowledgeBase
from scholargraph.errors import NotFoundError

TEXT = ("GraphRAG builds a Knowledge Graph over the corpus. LightRAG retrieves neighbours from the Knowledge Graph. "
        "HippoRAG runs Personalized PageRank over the Knowledge Graph. BERT encoders embed entity descriptions.")


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    with KnowledgeBase(tmp_path_factory.mktemp("browse") / "ws") as kb:
        kb.insert(texts=[{"id": "paper-1", "title": "Graph RAG survey", "text": TEXT}])
        yield kb


def entity_id(kb, name):
    return next(e.id for e in kb.entities(search=name) if e.name == name)


def test_passage_names_paper_section_and_text(kb):
    chunk_id = kb.store.chunks_of("paper-1")[0].id
    found = kb.passage(chunk_id)
    assert found.title == "Graph RAG survey" and found.document_id == "paper-1"
    assert "LightRAG retrieves" in found.text
    with pytest.raises(NotFoundError):
        kb.passage("no-such-chunk")


def test_neighbourhood_grows_with_depth_and_respects_limit(kb):
    center = entity_id(kb, "Knowledge Graph")
    one = kb.browse.neighbourhood("Knowledge Graph")
    ids = {n["id"] for n in one.nodes}
    assert one.center == center and center in ids and len(ids) >= 3
    assert all(e["source"] in ids and e["target"] in ids for e in one.edges) and one.edges
    small = kb.browse.neighbourhood(center, limit=2)
    assert len(small.nodes) == 2 and small.truncated
    assert len(kb.browse.neighbourhood(center, depth=2).nodes) >= len(ids)
    with pytest.raises(NotFoundError):
        kb.browse.neighbourhood("Nothing Like This")


def test_subgraph_joins_entities_through_paths(kb):
    view = kb.browse.subgraph(["GraphRAG", "HippoRAG"])
    names = {n["name"] for n in view.nodes}
    assert {"GraphRAG", "HippoRAG"} <= names and view.paths
    assert len(names) > 2  # the path goes through at least one other entity


def test_above_max_graph_relations_the_views_read_only_the_part_they_show(kb, monkeypatch):
    whole = kb.browse.neighbourhood("Knowledge Graph", depth=2), kb.browse.subgraph(["GraphRAG", "HippoRAG"])
    monkeypatch.setattr(kb.settings.query, "max_graph_relations", 0)
    monkeypatch.setattr(kb.store, "all_edges", lambda: pytest.fail("the whole graph was read"))
    part = kb.browse.neighbourhood("Knowledge Graph", depth=2), kb.browse.subgraph(["GraphRAG", "HippoRAG"])
    for got, want in zip(part, whole, strict=True):
        assert {n["id"] for n in got.nodes} == {n["id"] for n in want.nodes}
        assert {e["id"] for e in got.edges} == {e["id"] for e in want.edges}
    assert [len(p) for p in part[1].paths] == [len(p) for p in whole[1].paths]


def test_relation_evidence_quotes_sentences_naming_both_ends(kb):
    edge = next(e for e in kb.browse.neighbourhood("LightRAG").edges)
    found = kb.browse.relation(edge["id"])
    assert found.evidence and found.evidence[0]["title"] == "Graph RAG survey"
    sentences = [s for e in found.evidence for s in e["sentences"]]
    assert sentences and all(found.source["name"].lower() in s.lower() or found.target["name"].lower() in s.lower()
                             for s in sentences)
    with pytest.raises(NotFoundError):
        kb.browse.relation("r_missing")


def test_export_json_and_graphml_hold_the_whole_graph(kb):
    data = json.loads(kb.browse.export_graph("json"))
    stats = kb.stats()
    assert len(data["nodes"]) == stats.entities and len(data["edges"]) == stats.relations
    root = ET.fromstring(kb.browse.export_graph("graphml"))
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    assert len(root.findall(".//g:node", ns)) == stats.entities
    assert len(root.findall(".//g:edge", ns)) == stats.relations


def test_document_and_entity_types(kb):
    doc = kb.document("paper-1")
    assert doc.status == "PROCESSED" and doc.title == "Graph RAG survey"
    assert sum(kb.browse.entity_types().values()) == kb.stats().entities


def test_session_history_and_explicit_history(kb):
    kb.query("What does GraphRAG build?", session="s1")
    assert kb.browse.session_history("s1")[0].question == "What does GraphRAG build?"
    answer = kb.query("And LightRAG?", history=[("What does GraphRAG build?", "A knowledge graph.")])
    assert answer.text and kb.browse.session_history("none") == []
