"""Community reports: bottom-up, extractive or written by the (scripted) LLM, and only changed
communities rewritten on update (graph/community_reports.py, graph/community_update.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from planted import GROUPS, SUBGROUPS
from planted_store import planted_store, write_graph
from support.canned import default_rules

from scholargraph.config import CommunitySettings, LLMSettings
from scholargraph.graph.community_update import update_communities
from scholargraph.llm.client import LLMClient
from scholargraph.testing.llm_server import Reply, Rule, ScriptedLLMServer


@pytest.fixture
def store(tmp_path):
    s = planted_store(tmp_path / "ws")
    yield s
    s.close()


def _run(store, llm=None, **kw):
    settings = CommunitySettings(reports="llm" if llm else "extractive")
    return asyncio.run(update_communities(store, settings, llm, **kw))


def test_extractive_reports_bottom_up_with_cited_passages(store):
    run = _run(store)
    assert run.computed and run.levels == {0: GROUPS, 1: GROUPS * SUBGROUPS}
    communities = store.list_communities(None, members=True)
    reports = store.community_reports()
    assert {c.signature for c in communities} == set(reports) and run.reports_written == len(reports)
    by_id = {c.id: c for c in communities}
    for c in communities:
        r = reports[c.signature]
        assert r.method == "extractive" and r.title and r.summary and 1 <= r.rating <= 10
        assert set(r.entities) <= set(c.members) and r.entities[0] in r.title or r.title.startswith(r.entities[0])
        assert r.documents[0] == f"paper{c.members[0][1]}"  # the group's own paper supports it most
        assert r.evidence, "a representative passage"
        for e in r.evidence:
            chunk = store.get_chunks([e["chunk_id"]])[e["chunk_id"]]
            assert e["text"] in " ".join(chunk.text.split()) and chunk.document_id == e["document_id"]
        if c.level == 0:  # a parent is written from its children's reports
            kids = [k for k in communities if k.parent_id == c.id]
            assert sorted(r.children) == sorted(k.signature for k in kids)
            assert all(f"«{reports[k.signature].title}»" in r.summary for k in kids)
        else:
            assert by_id[c.parent_id].level == 0 and not r.children


def test_update_rewrites_only_changed_reports_with_the_llm(store):
    with ScriptedLLMServer(rules=default_rules()) as server:
        llm = LLMClient(LLMSettings(base_url=server.base_url, model="scripted-model", cache=False), cache=store)

        async def go(**kw):
            try:
                return await update_communities(store, CommunitySettings(reports="llm"), llm, **kw)
            finally:
                await llm.aclose()

        first = asyncio.run(go())
        total = len(store.community_reports())
        assert first.llm_reports == first.reports_written == total == server.stats.by_kind["report"]["calls"]
        assert all(r.method == "llm" and r.title.startswith("Topic: ") for r in store.community_reports().values())

        # a new entity joins subgroup (0, 0): its leaf and its group change, nothing else
        write_graph(store, [(f"x{i}", "new_entity", f"e0_0_{i:02d}", 1.0) for i in range(4)])
        server.stats.reset()
        second = asyncio.run(go(force=True))  # 0.7% change: below min_change, so forced
        assert second.computed and second.reports_written == 2 == server.stats.by_kind["report"]["calls"]
        assert second.reports_kept == total - 2
        changed = [c for c in store.list_communities(None, members=True) if "new_entity" in c.members]
        assert {c.level for c in changed} == {0, 1}
        assert len(store.community_reports()) == total  # the two old reports are gone, two new ones came

        server.stats.reset()
        third = asyncio.run(go())  # nothing changed: nothing recomputed, no call
        assert not third.computed and third.reports_written == 0 and server.stats.calls == 0


def test_unusable_model_output_falls_back_to_an_extractive_report(store):
    rules = [Rule("report", r"You write the report of one community", Reply("no json here"))]
    with ScriptedLLMServer(rules=rules) as server:
        llm = LLMClient(LLMSettings(base_url=server.base_url, model="scripted-model", cache=False), cache=store)

        async def go():
            try:
                return await update_communities(store, CommunitySettings(reports="llm"), llm)
            finally:
                await llm.aclose()

        run = asyncio.run(go())
    assert run.reports_written == len(store.community_reports()) and run.llm_reports == 0
    assert len(run.report_fallbacks) == run.reports_written
    assert all(r.method == "extractive" for r in store.community_reports().values())


def test_reports_ask_for_structured_output_and_unusable_replies_are_not_cached(store):
    """A real small model answers prose or half a JSON object now and then: with the cache on, such a
    reply was stored and replayed for ever; the report call now also sends its JSON schema."""
    rules = [Rule("report", r"You write the report of one community", Reply("I think the community is about"))]
    with ScriptedLLMServer(rules=rules) as server:
        llm = LLMClient(LLMSettings(base_url=server.base_url, model="scripted-model"), cache=store)

        async def go():
            try:
                return await update_communities(store, CommunitySettings(reports="llm"), llm, force=True,
                                                 rebuild=True)
            finally:
                await llm.aclose()

        first = asyncio.run(go())
        calls = server.stats.calls
        asyncio.run(go())
    assert first.llm_reports == 0 and server.stats.calls == 2 * calls  # asked again, not replayed
    schema = server.stats.requests[0]["response_format"]["json_schema"]["schema"]
    assert {"title", "summary"} <= set(schema["properties"])


def test_small_changes_keep_the_communities_until_forced(store):
    _run(store)
    write_graph(store, [("y1", "e1_0_00", "e1_0_01", 1.0)])  # one more relation among ~1000
    run = _run(store)
    assert not run.computed and "kept" in run.reason
    assert _run(store, force=True).computed


def test_extractive_reports_are_rewritten_once_an_llm_is_configured(store):
    _run(store)
    total = len(store.community_reports())
    with ScriptedLLMServer(rules=default_rules()) as server:
        llm = LLMClient(LLMSettings(base_url=server.base_url, model="scripted-model", cache=False), cache=store)

        async def go():
            try:
                return await update_communities(store, CommunitySettings(reports="auto"), llm)
            finally:
                await llm.aclose()

        run = asyncio.run(go())
        assert not run.computed and run.reports_written == total == server.stats.by_kind["report"]["calls"]
    assert all(r.method == "llm" for r in store.community_reports().values())


def test_a_looping_report_is_bounded_by_its_schema_and_loses_its_repeats(store):
    """Qwen2.5-Coder 0.5B wrote one summary sentence over and over until max_tokens (a real reply,
    tests/fixtures/real_model/report_looping_summary.json). The schema now bounds every string and
    list, so a server that constrains decoding closes the summary; the repeats are dropped."""
    looping = json.loads((Path(__file__).parents[1] / "fixtures" / "real_model" / "report_looping_summary.json")
                         .read_text())["reply"]
    summary = looping.split('"summary": "', 1)[1]
    summary = summary[: summary.rindex(".") + 1]  # the summary as far as it went, to its last full sentence
    complete = json.dumps({"title": "Perceptual groups", "summary": summary, "rating": 6})  # the JSON closed, as a
    # grammar-bounded server returns it
    rules = [Rule("report", r"You write the report of one community", complete)]
    with ScriptedLLMServer(rules=rules) as server:
        llm = LLMClient(LLMSettings(base_url=server.base_url, model="scripted-model", cache=False), cache=store)

        async def go():
            try:
                return await update_communities(store, CommunitySettings(reports="llm"), llm, force=True,
                                                 rebuild=True)
            finally:
                await llm.aclose()

        run = asyncio.run(go())
    schema = server.stats.requests[0]["response_format"]["json_schema"]["schema"]["properties"]
    assert schema["summary"]["maxLength"] and schema["title"]["maxLength"] and schema["keywords"]["maxItems"] == 8
    written = [r for r in store.community_reports().values() if r.method == "llm"]
    assert run.llm_reports and written
    sentence = "The paper proposes a method utilizing the perceptual groups of objects and n-ary relations among them."
    assert summary.count(sentence) > 3 and all(r.summary.count(sentence) == 1 for r in written)
