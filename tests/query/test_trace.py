"""What each mode used, with names, in `retrieve --json` / `ask --json` (``trace``): the subgraph's
matched nodes and paths, the global mode's edges, hybrid's two parts, ppr's seeds, the bio mode's
parsed filters (query/trace.py)."""

from __future__ import annotations

import json

import pytest

from scholargraph import KnowledgeBase
from scholargraph.cli import main

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
def workspace(tmp_path_factory):
    path = tmp_path_factory.mktemp("trace") / "ws"
    with KnowledgeBase(path, extraction={"profile": "offline"}) as kb:
        kb.insert(texts=TEXTS)
    return path


def _json(capsys, argv) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _names(nodes) -> set[str]:
    return {n["name"].lower() for n in nodes}


def test_subgraph_trace_names_matched_nodes_and_paths(workspace, capsys):
    trace = _json(capsys, ["retrieve", QUESTION, "--mode", "subgraph", "--json", "-w", str(workspace)])["trace"]
    assert trace["mode"] == "subgraph"
    assert {"subgraph retrieval", "knowledge graph"} <= _names(trace["matched_nodes"])
    assert trace["paths"] and all(isinstance(n, str) for path in trace["paths"] for n in path)
    assert any("knowledge graph" in [n.lower() for n in path] for path in trace["paths"])
    assert all(e["source"] and e["target"] for e in trace["subgraph"]["edges"])


def test_global_and_hybrid_traces_name_their_edges(workspace, capsys):
    trace = _json(capsys, ["retrieve", QUESTION, "--mode", "global", "--json", "-w", str(workspace)])["trace"]
    assert trace["edges"] and all(e["id"] and e["source"] and e["target"] for e in trace["edges"])
    answer = _json(capsys, ["ask", QUESTION, "--mode", "hybrid", "--json", "-w", str(workspace)])
    assert answer["trace"]["local"]["matched_nodes"] and answer["trace"]["global"]["edges"]


def test_ppr_trace_names_its_seeds(workspace, capsys):
    trace = _json(capsys, ["retrieve", QUESTION, "--mode", "ppr", "--json", "-w", str(workspace)])["trace"]
    assert trace["seeds"]["passages"] and {"knowledge graph"} <= _names(trace["seeds"]["entities"])


def test_bio_trace_shows_the_parsed_filters(workspace, capsys):
    answer = _json(capsys, ["ask", "Which genes are linked to endometriosis?", "--mode", "bio", "--json",
                            "-w", str(workspace)])
    filters = answer["trace"]["filters"]
    assert filters["parsed_by"] == "vocabulary" and "threshold" in answer["trace"]
    assert set(filters) >= {"genes", "diseases", "entity_types", "relation_types"}
