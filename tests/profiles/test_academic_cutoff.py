"""Extraction replies cut for length (the failure real local models hit most):
never cached as complete, asked again with twice the budget, and when still cut the complete
records are kept with a warning, so a later ``--force`` with a healthy server restores the paper."""

from __future__ import annotations

import json
from pathlib import Path

from support.canned import default_rules

from scholargraph import KnowledgeBase
from scholargraph.testing.llm_server import Reply, Rule

TEXT = ("Retrieval-Augmented Generation (RAG) grounds Large Language Models in retrieved evidence. "
        "GraphRAG builds a Knowledge Graph over the corpus. LightRAG retrieves one-hop neighbours.")
WHOLE = json.dumps({"entities": [["Retrieval-Augmented Generation", "Method", "grounds LLMs in evidence"],
                                 ["GraphRAG", "Method", "builds a knowledge graph"],
                                 ["LightRAG", "Method", "retrieves one-hop neighbours"]],
                    "relations": [["GraphRAG", "compared with", "LightRAG", "both are graph RAG systems"]],
                    "keywords": ["graph retrieval", "RAG"]})
CUT = WHOLE[: WHOLE.index('["LightRAG"')] + '["LightR'  # ends inside the third entity


def kb_for(server, workdir, **extraction):
    llm = {"base_url": server.base_url, "model": "scripted-model", "backoff_base": 0.01, "timeout": 5}
    return KnowledgeBase(workdir, llm=llm, extraction={"profile": "academic", "gleaning": 0, **extraction})


def _extraction_requests(server) -> list[dict]:
    return [r for r in server.stats.requests if "Build a knowledge graph" in json.dumps(r)]


def test_a_cut_reply_is_asked_again_with_twice_the_budget(llm_server, workdir):
    budgets: list[int] = []

    def reply(request):
        budgets.append(request["max_tokens"])
        return Reply(CUT, finish_reason="length") if len(budgets) == 1 else WHOLE

    server = llm_server(rules=[Rule("extract", "Build a knowledge graph", reply), *default_rules()])
    with kb_for(server, workdir) as kb:
        report = kb.insert(texts=[TEXT])
        names = {e.name for e in kb.entities()}
        assert report.ok and {"GraphRAG", "LightRAG"} <= names
        assert budgets[1] == 2 * budgets[0]
        again = kb.insert(texts=[TEXT], force=True)  # the whole reply was cached, the cut one was not
        assert again.usage["extract"].cached_calls == 1 and len(budgets) == 2


def test_a_reply_cut_twice_keeps_its_complete_records_and_is_not_cached(llm_server, workdir):
    server = llm_server(rules=[Rule("extract", "Build a knowledge graph", Reply(CUT, finish_reason="length")),
                               *default_rules()])
    with kb_for(server, workdir) as kb:
        report = kb.insert(texts=[TEXT])
        names = {e.name for e in kb.entities()}
        assert "GraphRAG" in names and "LightRAG" not in names
        assert any("cut off" in w for w in report.warnings)
    healthy = llm_server(rules=[Rule("extract", "Build a knowledge graph", WHOLE), *default_rules()])
    with kb_for(healthy, workdir) as kb:
        kb.settings.llm.base_url = healthy.base_url
        report = kb.insert(texts=[TEXT], force=True)
        assert report.usage["extract"].calls == 1  # not a cache hit
        assert "LightRAG" in {e.name for e in kb.entities()}


def test_a_reply_that_stops_inside_a_record_counts_as_cut(llm_server, workdir):
    """finish_reason "stop" but unterminated JSON (a server that miscounts, a proxy that cuts)."""
    calls: list[int] = []

    def reply(request):
        calls.append(request["max_tokens"])
        return CUT if len(calls) == 1 else WHOLE

    server = llm_server(rules=[Rule("extract", "Build a knowledge graph", reply), *default_rules()])
    with kb_for(server, workdir) as kb:
        assert kb.insert(texts=[TEXT]).ok
        assert "LightRAG" in {e.name for e in kb.entities()} and len(calls) == 2


def test_records_cut_in_the_last_record_are_retried(llm_server, workdir):
    records = "entity|GraphRAG|Method|builds a knowledge graph\nentity|LightRAG|Method|retrieves one-hop neighbours\n"
    calls: list[int] = []

    def reply(request):
        calls.append(request["max_tokens"])
        return Reply(records[:60], finish_reason="length") if len(calls) == 1 else records

    server = llm_server(rules=[Rule("extract", "Build a knowledge graph", reply), *default_rules()])
    with kb_for(server, workdir, format="records") as kb:
        assert kb.insert(texts=[TEXT]).ok
        assert {"GraphRAG", "LightRAG"} <= {e.name for e in kb.entities()} and len(calls) == 2


BIORED_LONG = json.loads((Path(__file__).parents[1] / "fixtures" / "real_model" / "extract_json_biored_long.json")
                         .read_text(encoding="utf-8"))


def test_a_sound_reply_as_long_as_the_schema_allows_is_not_cut(llm_server, workdir):
    """Recorded with Qwen2.5-Coder 1.5B on BioRED abstracts (more names per sentence than SciERC):
    every first extraction call, with a budget of 1.5x the chunk (1,024 tokens), was cut and asked
    again; the whole reply took 1,966 tokens. The budget under the schema is now the longest reply
    the schema allows, so one call does."""
    passage = BIORED_LONG["messages"][1]["content"].split("Passage:\n", 1)[1]
    needed = BIORED_LONG["usage"]["completion_tokens"]
    budgets: list[int] = []

    def reply(request):  # as llama.cpp: a reply longer than max_tokens stops there
        budgets.append(request["max_tokens"])
        if request["max_tokens"] < needed:
            return Reply(BIORED_LONG["reply"][: len(BIORED_LONG["reply"]) * request["max_tokens"] // needed],
                         finish_reason="length")
        return BIORED_LONG["reply"]

    server = llm_server(rules=[Rule("extract", "Build a knowledge graph", reply), *default_rules()])
    with kb_for(server, workdir) as kb:
        report = kb.insert(texts=[passage])
        assert report.ok and len(budgets) == 1 and budgets[0] >= needed
        assert {"p62/SQSTM1", "M404V"} <= {e.name for e in kb.entities(limit=100)}
