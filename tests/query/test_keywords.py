"""Clues and dual-level keywords (thesis 000 §3.3.1): offline terms, the LLM call, its fallbacks."""

from __future__ import annotations

import asyncio
import json

import pytest
from query_workspace import names

from scholargraph.config import LLMSettings
from scholargraph.errors import ModelOutputError
from scholargraph.llm.client import LLMClient
from scholargraph.prompts import load_prompt
from scholargraph.query.keywords import Clue, offline_keywords, parse_keywords, query_terms
from scholargraph.testing.llm_server import Reply, Rule

Q2 = "What links aspirin and inflammation?"
KEYWORD_RULE = r"search keywords for a knowledge graph"


def test_query_terms_are_content_phrases():
    assert query_terms("Which methods use contrastive learning?") == ["methods", "contrastive learning"]
    assert query_terms(Q2) == ["aspirin", "inflammation"]
    terms = query_terms("How does the IL1B gene affect endometriosis in mouse models?")
    assert terms[:4] == ["IL1B gene", "IL1B", "endometriosis", "mouse models"]
    assert query_terms("What is it?") == []


def test_offline_keywords_use_clues_and_the_question():
    clues = [Clue("k1", "prostaglandin synthesis", 0.7), Clue("k2", "cyclooxygenase", 0.6)]
    high, low = offline_keywords(Q2, clues)
    assert high[:2] == ["prostaglandin synthesis", "cyclooxygenase"] and high[-1] == Q2.rstrip("?")
    assert low == ["aspirin", "inflammation", "prostaglandin synthesis", "cyclooxygenase"]
    high, low = offline_keywords(Q2, [])
    assert high == [Q2.rstrip("?")] and low == ["aspirin", "inflammation"]


@pytest.mark.parametrize("raw, high, low", [
    ('{"high_level": ["drug action"], "low_level": ["aspirin", "COX-2"]}', ["drug action"], ["aspirin", "COX-2"]),
    ('```json\n{"high_level_keywords": ["a"], "low_level_keywords": ["b"]}\n```', ["a"], ["b"]),
    ('Sure! {"high_level": "x, y", "low_level": ["z", "z", " "]}', ["x", "y"], ["z"]),
    ('{"high_level": [], "low_level": ["only low"]}', [], ["only low"]),
])
def test_parse_keywords_tolerates_common_shapes(raw, high, low):
    assert parse_keywords(raw) == (high, low)


@pytest.mark.parametrize("raw", ["not json at all", '{"answer": 42}', "[1, 2]", '{"high_level": [], "low_level": []}'])
def test_parse_keywords_rejects_unusable_output(raw):
    with pytest.raises(ModelOutputError):
        parse_keywords(raw)


def test_prompt_is_short_and_names_its_seed_section():
    prompt = load_prompt("keywords")
    text = "\n".join(m["content"] for m in prompt.messages(question="q?", clues="a; b"))
    assert len(text.split()) < 150  # the thesis budgets < 500 tokens per query for retrieval
    assert '{"high_level": [...], "low_level": [...]}' in text
    from importlib import resources

    header = resources.files("scholargraph.prompts").joinpath("keywords.txt").read_text().splitlines()[:3]
    assert any("3.3.1" in line for line in header)


# -- the LLM call, through the scripted server -------------------------------------------


def llm_for(server) -> LLMClient:
    return LLMClient(LLMSettings(base_url=server.base_url, model="scripted-model", retries=0, timeout=5))


def run_with(llm, coro_fn):
    async def go():
        try:
            return await coro_fn()
        finally:
            await llm.aclose()

    return asyncio.run(go())


def test_llm_keywords_are_used_and_their_cost_reported(llm_server, make_engine, store):
    seen = []

    def reply(request):
        seen.append("\n".join(m["content"] for m in request["messages"]))
        return json.dumps({"high_level": ["enzyme inhibition"], "low_level": ["cyclooxygenase", "swelling"]})

    server = llm_server(rules=[Rule("keywords", KEYWORD_RULE, reply)])
    llm = llm_for(server)
    engine = make_engine(llm=llm)
    r = run_with(llm, lambda: engine.retrieve(Q2, "hybrid"))
    assert server.stats.by_kind["keywords"]["calls"] == 1
    assert "Clues: prostaglandin synthesis aspirin" in seen[0] and "Question: What links aspirin and inflammation?" in seen[0]
    assert r.keywords["source"] == "llm"
    assert r.keywords["high_level"] == ["enzyme inhibition"]
    assert r.keywords["low_level"] == ["cyclooxygenase", "swelling"]
    assert names(store, r.details["local"]["matched"]) == {"cyclooxygenase", "swelling"}
    usage = r.usage["keywords"]
    assert usage.calls == 1 and usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert r.timings["keywords_llm_s"] > 0


def test_no_clues_sends_the_question_alone(llm_server, make_engine):
    seen = []

    def reply(request):
        seen.append("\n".join(m["content"] for m in request["messages"]))
        return '{"high_level": ["pharmacology"], "low_level": ["aspirin"]}'

    server = llm_server(rules=[Rule("keywords", KEYWORD_RULE, reply)])
    llm = llm_for(server)
    r = run_with(llm, lambda: make_engine(llm=llm).retrieve(Q2, "subgraph", clues=False))
    assert "Clues: (none)" in seen[0]
    assert r.keywords["clues"] == [] and r.keywords["low_level"] == ["aspirin"]


@pytest.mark.parametrize("reply", ["I think the keywords are aspirin and inflammation.", '{"keywords": ["x"]}'])
def test_malformed_keyword_json_falls_back_with_a_note(llm_server, make_engine, reply):
    server = llm_server(rules=[Rule("keywords", KEYWORD_RULE, reply)])
    llm = llm_for(server)
    r = run_with(llm, lambda: make_engine(llm=llm).retrieve(Q2, "hybrid"))
    assert r.keywords["source"] == "offline"
    assert r.keywords["low_level"][:2] == ["aspirin", "inflammation"]
    assert any("keyword model output unusable" in n for n in r.notes)
    assert r.usage["keywords"].calls == 1  # the call was made and paid for
    assert r.sources


def test_failed_keyword_call_falls_back_with_a_note(llm_server, make_engine):
    server = llm_server(rules=[Rule("keywords", KEYWORD_RULE, Reply("boom", status=400))])
    llm = llm_for(server)
    r = run_with(llm, lambda: make_engine(llm=llm).retrieve(Q2, "hybrid"))
    assert r.keywords["source"] == "offline"
    assert any("keyword LLM call failed" in n for n in r.notes)
    assert r.sources


def test_answer_usage_has_keywords_and_answer_and_citations_may_name_entities(llm_server, make_engine):
    seen = []

    def answer(request):
        text = request["messages"][-1]["content"]
        first_entity = text.split("### Entities\n[", 1)[1].split("]", 1)[0]
        seen.append(int(first_entity))
        return f"Aspirin inhibits cyclooxygenase [{first_entity}], which drives inflammation [99]."

    server = llm_server(rules=[
        Rule("keywords", KEYWORD_RULE, '{"high_level": ["enzyme inhibition"], "low_level": ["aspirin", "inflammation"]}'),
        Rule("answer", r"Sources:", answer),
    ])
    llm = llm_for(server)
    a = run_with(llm, lambda: make_engine(llm=llm).answer(Q2, "hybrid"))
    assert set(a.usage) == {"keywords", "answer"}
    assert a.usage["keywords"].calls == 1 and a.usage["answer"].calls == 1
    # text units are numbered first, entities after them: the citation names an entity source
    # the answer numbers what it cites from [1]; the source keeps its context number
    assert a.cited == [1] and a.removed_citations == [99] and "cyclooxygenase [1]" in a.text
    cited = a.sources[0]
    assert cited.number == 1 and cited.context_number == seen[0] and cited.kind == "entity" and cited.chunk_id == "c1"
    data = a.to_json()
    assert data["usage"]["llm_calls"] == 2 and set(data["usage"]["by_purpose"]) == {"keywords", "answer"}
    assert data["sources"][0]["kind"] == "entity" and data["sources"][0]["document_id"] == "doc1"
    assert {"retrieval_s", "generation_s", "keywords_llm_s"} <= set(a.timings)


def test_a_keyword_reply_cut_inside_its_json_is_used_but_not_cached(llm_server):
    """A truncated keyword reply during `ask` used to be repaired silently and cached: the next ask of
    the same question got the cut keywords again without asking the model."""
    from support.memory_cache import MemoryCache

    from scholargraph.llm.accounting import CutReply
    from scholargraph.query.keywords import make_keywords

    cut = '{"high_level": ["graph retrieval"], "low_level": ["GraphRAG", "Light'
    with pytest.raises(CutReply) as caught:
        parse_keywords(cut)
    assert caught.value.value == (["graph retrieval"], ["GraphRAG"])

    server = llm_server(rules=[Rule("keywords", "high_level", cut)])
    cache = MemoryCache()
    client = LLMClient(LLMSettings(base_url=server.base_url, model="scripted-model"), cache=cache)

    async def ask_twice():
        async with client:
            return [await make_keywords("How does GraphRAG compare with LightRAG?", [], client) for _ in range(2)]

    first, second = asyncio.run(ask_twice())
    assert first.source == "llm" and "GraphRAG" in first.low_level
    assert server.stats.calls == 2 and not cache.entries
