"""A small paper, the scripted server with the canned localkg answers, and a stage context on it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from fixtures.localkg_papers import small_paper
from support.canned_localkg import localkg_rules

from scholargraph.config import EmbeddingSettings, LLMSettings
from scholargraph.llm.client import LLMClient
from scholargraph.llm.embeddings import make_embedder
from scholargraph.profiles.localkg.calls import StageContext
from scholargraph.profiles.localkg.document import Paper, read_paper
from scholargraph.profiles.localkg.settings import LocalKGSettings


@pytest.fixture
def paper() -> Paper:
    return read_paper(*small_paper())


@pytest.fixture
def lkg_server(llm_server):
    """``lkg_server(*extra_rules)``: the canned localkg answers, after ``extra_rules`` (they win)."""
    return lambda *extra: llm_server(rules=[*extra, *localkg_rules()])


@pytest.fixture
def run_stage():
    """``run_stage(server, fn, **settings)``: ``await fn(ctx)`` with a fresh StageContext on the server
    (LLM and embeddings from the scripted server); returns (result, ctx)."""

    def run(server, fn: Callable[[StageContext], Awaitable[Any]], **settings: Any) -> tuple[Any, StageContext]:
        async def main():
            llm = LLMClient(LLMSettings(base_url=server.base_url, model="scripted-model", retries=0,
                                        backoff_base=0.01, backoff_max=0.02, timeout=10))
            embedder = make_embedder(EmbeddingSettings(provider="openai", base_url=server.base_url, model="emb",
                                                       dimension=384))
            ctx = StageContext(llm, embedder.embed, LocalKGSettings(**settings), "p1")
            try:
                return await fn(ctx), ctx
            finally:
                await llm.aclose()
                await embedder.aclose()

        return asyncio.run(main())

    return run
