"""``top_k`` means k in every mode (the budget only bounds the prompt), passage fusion settings,
and the optional rerank hook against a scripted ``/rerank`` endpoint on loopback."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from scholargraph.config import RerankSettings
from scholargraph.errors import ConfigError, LLMError
from scholargraph.llm.rerank import CrossEncoderReranker, EndpointReranker, make_reranker
from scholargraph.query.modes import CORE_MODES
from scholargraph.testing.llm_server import ScriptedLLMServer

Q = "What links aspirin and inflammation?"


def retrieve(engine, question, mode, **kw):
    return asyncio.run(engine.retrieve(question, mode, **kw))


@pytest.mark.parametrize("mode", [m.name for m in CORE_MODES])
@pytest.mark.parametrize("k", [1, 3, 5])
def test_top_k_text_units_whatever_the_budget(make_engine, mode, k):
    r = retrieve(make_engine(max_context_tokens=100, entity_tokens=5, relation_tokens=5), Q, mode, top_k=k)
    chunks = [s for s in r.sources if s.kind == "chunk"]
    assert len(chunks) == k  # the workspace has 5 chunks: k of them, ranked, every time
    assert [s.number for s in chunks] == list(range(1, k + 1))  # text units are the first k results
    assert len({s.chunk_id for s in chunks}) == k
    # what the budget left out of the prompt is named, and only that is missing from the context
    for s in r.sources:
        assert (f"[{s.number}] " in r.context) == (s.number not in r.cut)


def test_ask_json_says_what_was_cut(make_engine):
    class Forty:  # every passage costs 40 tokens: two fit a budget of 100
        name = "forty"

        def count(self, text: str) -> int:
            return 40

    engine = make_engine(max_context_tokens=100)
    engine.context = dataclasses.replace(engine.context, tokenizer=Forty())
    answer = asyncio.run(engine.answer(Q, "naive", top_k=4))
    data = answer.to_json()
    assert data["context_tokens"] == {"budget": 100, "used": 80}
    cut = data["cut_from_context"]
    assert {c["rank"] for c in cut} == {3, 4} and all(c["chunk_id"] and c["title"] for c in cut)
    assert [s.number for s in answer.sources] == [1, 2]  # the answer cites only what its prompt held


def test_naive_is_fused_by_default_and_dense_only_is_selectable(make_engine):
    fused = retrieve(make_engine(), "Which enzyme drives inflammation?", "naive", top_k=5)
    assert fused.details["passages"]["lexical"] and fused.details["passages"]["dense"]
    dense = retrieve(make_engine(passages="dense"), "Which enzyme drives inflammation?", "naive", top_k=5)
    assert dense.details["passages"]["lexical"] == []
    lexical = retrieve(make_engine(passages="lexical"), "Which enzyme drives inflammation?", "naive", top_k=5)
    assert lexical.details["passages"]["dense"] == []
    # full-text only returns what shares a term with the question
    assert {s.chunk_id for s in lexical.sources} == {"c2", "c3"}


def test_lexical_passages_reach_graph_modes(make_engine):
    # "warbler" names no entity the offline keywords match well, but the passage says it
    r = retrieve(make_engine(), "Does the warbler eat voles?", "hybrid", top_k=2)
    assert r.sources[0].kind == "chunk" and r.sources[0].chunk_id == "c5"


# -- rerank hook ------------------------------------------------------------------------------


@pytest.fixture
def rerank_server():
    # a reranker that prefers passages mentioning "prostaglandin"
    server = ScriptedLLMServer(rerank_score=lambda q, d: 10.0 if "prostaglandin" in d else len(d) / 1000)
    with server:
        yield server


def test_rerank_endpoint_reorders_text_units(make_engine, rerank_server):
    settings = RerankSettings(backend="endpoint", url=rerank_server.base_url, model="scripted-reranker", candidates=5)

    async def run():
        reranker = make_reranker(settings)
        try:
            engine = make_engine()
            plain = await engine.retrieve(Q, "naive", top_k=3)
            engine.context = dataclasses.replace(engine.context, reranker=reranker)
            return plain, await engine.retrieve(Q, "naive", top_k=3), await engine.retrieve(Q, "hybrid", top_k=3)
        finally:
            await reranker.aclose()

    plain, ranked, hybrid = asyncio.run(run())
    assert ranked.sources[0].chunk_id == "c2" and len(ranked.sources) == 3
    assert plain.details.get("rerank") is None and ranked.details["rerank"]["reranked"] == 5
    assert hybrid.sources[0].chunk_id == "c2"
    assert rerank_server.stats.rerank_calls == 2 and "rerank_s" in ranked.timings


def test_rerank_endpoint_errors_are_clear(rerank_server):
    async def run():
        reranker = EndpointReranker(RerankSettings(backend="endpoint", url=rerank_server.base_url))
        rerank_server.fail_next(1, status=500)
        with pytest.raises(LLMError, match="HTTP 500"):
            await reranker.scores("q", ["a", "b"])
        assert await reranker.scores("q", []) == []
        assert await reranker.scores("aspirin", ["no", "aspirin yes"]) == [0.002, 0.011]
        await reranker.aclose()
        dead = EndpointReranker(RerankSettings(backend="endpoint", url="http://127.0.0.1:9", timeout=2))
        with pytest.raises(LLMError, match="unreachable"):
            await dead.scores("q", ["a"])
        await dead.aclose()

    asyncio.run(run())


def test_rerank_is_off_by_default_and_settings_are_checked(tmp_path):
    assert make_reranker(RerankSettings()) is None
    with pytest.raises(ValueError, match="needs rerank.url"):
        RerankSettings(backend="endpoint")
    with pytest.raises(ValueError, match="needs rerank.path"):
        RerankSettings(backend="cross-encoder")
    with pytest.raises(ConfigError, match="never downloads"):
        CrossEncoderReranker(RerankSettings(backend="cross-encoder", path=tmp_path / "cross-encoder-ms-marco"))
