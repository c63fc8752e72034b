"""The summary mode: corpus-level answers from community reports, citing reports that resolve to
papers, sections and pages (query/summary.py), extractive and with the scripted LLM."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "graph"))
from planted_store import planted_store  # noqa: E402
from query_workspace import BagOfWordsEmbedder, WordTokenizer  # noqa: E402
from support.canned import default_rules  # noqa: E402

from scholargraph.config import CommunitySettings, LLMSettings, Settings  # noqa: E402
from scholargraph.llm.client import LLMClient  # noqa: E402
from scholargraph.query.engine import QueryEngine  # noqa: E402
from scholargraph.testing.llm_server import ScriptedLLMServer  # noqa: E402

QUESTION = "What are the main research directions in this collection and how do they connect?"


@pytest.fixture
def store(tmp_path):
    s = planted_store(tmp_path / "ws")
    s.set_meta("embedding_dim", str(BagOfWordsEmbedder.dim))
    yield s
    s.close()


def _engine(store, llm=None, **communities):
    settings = Settings(workdir=store.workdir, communities=CommunitySettings(**communities))
    return QueryEngine(store, settings, BagOfWordsEmbedder(), WordTokenizer(), llm)


def _check_sources(store, answer, level):
    assert answer.mode == "summary" and answer.sources and answer.cited
    levels = {c.signature: c.level for c in store.list_communities()}
    reports = store.community_reports()
    titles = {r.title for r in reports.values()}
    for s in answer.sources:
        assert s.kind == "community" and s.title in titles
        assert s.supporting, "each report leads to its passages"
        for p in s.supporting:  # ... each in a paper, section and page
            assert p.document_id.startswith("paper") and p.title.startswith("Paper about group")
            assert p.section.startswith("Results") and p.page_start >= 1 and p.chunk_id
    assert {levels[sig] for sig in answer_signatures(answer, reports)} == {level}
    return reports


def answer_signatures(answer, reports):
    by_title = {r.title: sig for sig, r in reports.items()}
    return {by_title[s.title] for s in answer.sources}


def test_extractive_summary_computes_communities_and_cites_reports(store):
    answer = asyncio.run(_engine(store, summary_reports=3).answer(QUESTION, "summary"))
    assert answer.extractive and answer.text.startswith("Extractive overview")
    assert len(answer.sources) == 3 and answer.cited == [1, 2, 3]
    assert any("communities computed now" in n for n in answer.notes)
    _check_sources(store, answer, level=1)  # 12 communities at level 1: the finest that fits
    for n in answer.cited:
        assert f"[{n}]" in answer.text
    data = answer.to_json()
    assert data["sources"][0]["supporting"][0]["page_start"] >= 1


def test_summary_at_a_chosen_level_with_the_scripted_llm(store):
    with ScriptedLLMServer(rules=default_rules()) as server:
        llm = LLMClient(LLMSettings(base_url=server.base_url, model="scripted-model", cache=False), cache=store)

        async def go():
            try:
                return await _engine(store, llm, summary_level=0, summary_reports=4).answer(QUESTION, "summary")
            finally:
                await llm.aclose()

        answer = asyncio.run(go())
        assert server.stats.by_kind["map"]["calls"] == 4 and server.stats.by_kind["reduce"]["calls"] == 1
        # a server with structured output is held to the map reply's shape (a small local model needs it)
        maps = [r for r in server.stats.requests if r.get("response_format", {}).get("json_schema", {}).get("name")
                == "map_points"]
        assert len(maps) == 4 and maps[0]["response_format"]["json_schema"]["schema"]["required"] == ["points"]
        assert server.stats.by_kind["report"]["calls"] == len(store.community_reports())  # written first, by the LLM
    assert not answer.extractive and answer.text.startswith("The collection covers")
    assert answer.cited == [1, 2, 3, 4] and not answer.removed_citations
    reports = _check_sources(store, answer, level=0)
    assert all(reports[s].method == "llm" for s in answer_signatures(answer, reports))
    assert answer.usage["map"].calls == 4 and answer.usage["answer"].calls == 1


def test_unknown_level_is_a_clear_error(store):
    from scholargraph.errors import ConfigError

    with pytest.raises(ConfigError, match="no community level 7; levels: 0, 1"):
        asyncio.run(_engine(store, summary_level=7).answer(QUESTION, "summary"))


def test_empty_workspace_says_so(tmp_path):
    from scholargraph.store import open_store

    store = open_store(tmp_path / "empty")
    store.set_meta("embedding_dim", str(BagOfWordsEmbedder.dim))
    try:
        answer = asyncio.run(_engine(store).answer(QUESTION, "summary"))
    finally:
        store.close()
    assert not answer.sources and "No community report" in answer.text


def test_hybrid_adds_reports_to_broad_questions_only(store):
    from scholargraph.models import Source
    from scholargraph.plugins.base import QueryContext
    from scholargraph.query.retrieval import Retrieval
    from scholargraph.query.summary import add_reports, is_broad

    assert is_broad(QUESTION) and is_broad("What are the trends across these papers?")
    assert not is_broad("Which enzyme does aspirin inhibit?")
    asyncio.run(_engine(store).answer(QUESTION, "summary"))  # communities and reports exist
    settings = Settings(workdir=store.workdir, communities=CommunitySettings(hybrid_reports=2))
    ctx = QueryContext(store, settings, BagOfWordsEmbedder(), WordTokenizer())

    def retrieval(question):
        chunk = Source(1, "chunk", "c0_0", "paper0", "Paper about group 0", "Results 0", 1, 1, "text")
        return Retrieval(question, "hybrid", [chunk], "[1] Paper about group 0\ntext")

    broad = retrieval(QUESTION)
    asyncio.run(add_reports(ctx, QUESTION, broad))
    assert [s.kind for s in broad.sources] == ["chunk", "community", "community"]
    assert [s.number for s in broad.sources] == [1, 2, 3] and "[3] Community report" in broad.context
    narrow = retrieval("Which entity interacts with e0_0_01?")
    asyncio.run(add_reports(ctx, narrow.question, narrow))
    assert len(narrow.sources) == 1


def test_above_max_graph_relations_summary_computes_no_communities_while_a_question_waits(store):
    from scholargraph.config import QuerySettings
    from scholargraph.errors import ConfigError

    def engine(limit):
        settings = Settings(workdir=store.workdir, query=QuerySettings(max_graph_relations=limit))
        return QueryEngine(store, settings, BagOfWordsEmbedder(), WordTokenizer(), None)

    relations = store.count("relations")
    with pytest.raises(ConfigError, match=r"max_graph_relations \(10\).*scholargraph communities") as caught:
        asyncio.run(engine(10).answer(QUESTION, "summary"))
    assert f"{relations:,} relations" in str(caught.value)
    assert not store.list_communities(), "nothing was computed"
    asyncio.run(_engine(store).answer(QUESTION, "summary"))  # computed once (what `scholargraph communities` does)
    answer = asyncio.run(engine(10).answer(QUESTION, "summary"))
    assert answer.sources and not any("computed now" in n for n in answer.notes)
