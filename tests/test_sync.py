"""The sync API's event loop (sync.py, app/workspace.py): one loop kept per knowledge base, so the
HTTP clients made for it serve every sync call until close(), in a script as in a Jupyter cell."""

from __future__ import annotations

import asyncio

import pytest

from scholargraph import KnowledgeBase
from scholargraph.llm import client as llm_client
from scholargraph.sync import KeptLoop
from scholargraph.testing.llm_server import Rule

TEXT = ("GraphRAG builds a knowledge graph over the corpus and summarises its communities. "
        "LightRAG retrieves one-hop neighbours of the entities a question names.")


class _Counted:
    """How many HTTP pools the LLM client made, and how many were closed."""

    def __init__(self, monkeypatch):
        self.made = self.closed = 0
        real = llm_client.LoopPools
        counted = self

        class Pools(real):
            def __init__(self, *args, **kw):
                counted.made += 1
                super().__init__(*args, **kw)

            async def aclose(self) -> None:
                counted.closed += 1
                await super().aclose()

        monkeypatch.setattr(llm_client, "LoopPools", Pools)


def _kb(server, workdir) -> KnowledgeBase:
    llm = {"base_url": server.base_url, "model": "scripted-model", "timeout": 5}
    return KnowledgeBase(workdir, llm=llm, extraction={"profile": "offline"}, progress=False)


def _two_queries(kb: KnowledgeBase) -> list[str]:
    kb.insert(texts=[TEXT])
    return [kb.query(q, mode="naive").text for q in ("What does GraphRAG build?", "What does LightRAG retrieve?")]


@pytest.fixture
def server(llm_server):
    return llm_server(rules=[Rule("answer", "numbered sources", "GraphRAG builds a knowledge graph [1].")])


def test_sync_queries_reuse_one_llm_client_until_close(server, workdir, monkeypatch):
    pools = _Counted(monkeypatch)
    kb = _kb(server, workdir)
    try:
        answers = _two_queries(kb)
        assert pools.made == 1 and pools.closed == 0  # made once, open between the calls
    finally:
        kb.close()
    assert answers == ["GraphRAG builds a knowledge graph [1]."] * 2 and server.stats.by_kind["answer"]["calls"] == 2
    assert pools.closed == 1


def test_inside_a_running_loop_too(server, workdir, monkeypatch):
    """As in a Jupyter cell: the calls run on a worker thread, on the same kept loop each time."""
    pools = _Counted(monkeypatch)

    async def notebook_cell() -> list[str]:
        with _kb(server, workdir) as kb:
            return _two_queries(kb)

    assert len(asyncio.run(notebook_cell())) == 2
    assert pools.made == 1 and pools.closed == 1


def test_a_kept_loop_runs_calls_from_anywhere_until_closed():
    kept = KeptLoop()

    async def loop_id() -> int:
        return id(asyncio.get_running_loop())

    async def nested() -> int:  # a sync call made from a coroutine the kept loop runs
        return kept.run(loop_id())

    async def from_a_cell() -> int:
        return kept.run(loop_id())

    first = kept.run(loop_id())
    assert kept.run(loop_id()) == first and asyncio.run(from_a_cell()) == first
    assert kept.run(nested()) != first  # not on its own loop (that one is busy running the caller)
    closed: list[bool] = []

    async def last() -> None:
        closed.append(True)

    async def from_a_thread() -> int:  # waits for a sync call made on a thread while it holds the loop
        return await asyncio.to_thread(kept.run, loop_id())

    assert kept.run(from_a_thread()) != first  # a loop of its own, no deadlock
    kept.close(last)
    kept.close(last)
    assert closed == [True]
    with pytest.raises(RuntimeError, match="closed"):
        kept.run(loop_id())
