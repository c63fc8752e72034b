"""What a small model copies from the prompt instead of the passage is dropped (extract/echo.py),
checked on a real reply: Qwen2.5-Coder 0.5B answered the keyword list with the instruction line
"3-8 phrases naming the main topics of the whole passage" (tests/fixtures/real_model/)."""

from __future__ import annotations

import json
from pathlib import Path

from support.canned import default_rules

from scholargraph import KnowledgeBase
from scholargraph.extract.echo import drop_echoes
from scholargraph.models import EntityRecord, Extraction, KeywordRecord, RelationRecord
from scholargraph.testing.llm_server import Rule

REAL = json.loads((Path(__file__).parents[1] / "fixtures" / "real_model" / "extract_json_keyword_echo.json").read_text())
INSTRUCTION = "3-8 phrases naming the main topics of the whole passage"


def test_the_real_reply_loses_the_echoed_keyword_and_keeps_the_rest(llm_server, workdir):
    passage = REAL["request_user"].split("Passage:\n", 1)[1]
    server = llm_server(rules=[Rule("extract", "Build a knowledge graph", REAL["reply"]), *default_rules()])
    llm = {"base_url": server.base_url, "model": "scripted-model", "timeout": 5}
    with KnowledgeBase(workdir, llm=llm, extraction={"profile": "academic", "gleaning": 0, "format": "json"}) as kb:
        report = kb.insert(texts=[{"id": "C04-1096", "title": "C04-1096", "text": passage}])
        keywords = {text for _, text in kb.store.iter_keyword_texts()}
        names = {e.name.casefold() for e in kb.entities()}
    assert report.ok and INSTRUCTION not in keywords
    assert "past work of generating referring expressions" in names  # what the passage says is kept
    assert any("copied from the instructions" in w and INSTRUCTION in w for w in report.warnings)


def test_an_echoed_entity_takes_its_relations_but_a_name_the_passage_uses_stays():
    found = Extraction(
        entities=[EntityRecord("name", "Method", "entity|name|type|description", "c1"),
                  EntityRecord("Knowledge Graph", "Concept", "the graph built", "c1"),
                  EntityRecord("GraphRAG", "Method", "a system", "c1")],
        relations=[RelationRecord("name", "GraphRAG", "echo", "c1"),
                   RelationRecord("GraphRAG", "Knowledge Graph", "builds one", "c1")],
        keywords=[KeywordRecord("graph retrieval", "c1"), KeywordRecord("Main topics of the whole passage", "c1")])
    instructions = ("Build a knowledge graph. Reply with records: entity|name|type|description. "
                    "Keywords: 3-8 phrases naming the main topics of the whole passage.")
    kept = drop_echoes(found, instructions, "GraphRAG builds a knowledge graph for graph retrieval.", "c1")
    assert [e.name for e in kept.entities] == ["Knowledge Graph", "GraphRAG"]  # the passage uses "knowledge graph"
    assert [(r.source, r.target) for r in kept.relations] == [("GraphRAG", "Knowledge Graph")]
    assert [k.text for k in kept.keywords] == ["graph retrieval"]
    assert kept.notes and '"name"' in kept.notes[0]
