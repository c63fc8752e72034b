"""What a small local server (llama.cpp: few slots, a bounded context, replies cut at max_tokens)
does to the client: cut replies are never cached, no more requests are sent than the server has
slots, a prompt that cannot fit is refused with the sizes, and every call has a completion budget."""

from __future__ import annotations

import asyncio

import pytest
from support.memory_cache import MemoryCache

from scholargraph.config import LLMSettings
from scholargraph.errors import PromptTooLongError
from scholargraph.llm.client import LLMClient
from scholargraph.testing.llm_server import Reply, llama_props

MESSAGES = [{"role": "user", "content": "List three colours."}]


def client_for(server, cache=None, **settings) -> LLMClient:
    cfg = LLMSettings(base_url=server.base_url, model="scripted-model", backoff_base=0.01, backoff_max=0.02,
                      timeout=10, **settings)
    return LLMClient(cfg, cache=cache)


async def _chat_twice(client: LLMClient, purpose: str = "answer") -> tuple:
    async with client:
        first = await client.chat(MESSAGES, purpose=purpose)
        second = await client.chat(MESSAGES, purpose=purpose)
    return first, second


def test_a_reply_cut_for_length_is_never_cached(llm_server):
    server = llm_server(default_reply=Reply("red, green, bl", finish_reason="length"))
    cache = MemoryCache()
    first, second = asyncio.run(_chat_twice(client_for(server, cache)))
    assert first.cut_off and first.finish_reason == "length"
    assert not second.cached and server.stats.calls == 2 and not cache.entries


def test_a_whole_reply_is_cached(llm_server):
    server = llm_server(default_reply="red, green, blue")
    first, second = asyncio.run(_chat_twice(client_for(server, MemoryCache())))
    assert not first.cut_off and second.cached and server.stats.calls == 1


def test_a_streamed_answer_cut_for_length_is_not_cached(llm_server):
    server = llm_server(default_reply=Reply("The answer is cut", finish_reason="length"))
    cache = MemoryCache()

    async def run() -> None:
        async with client_for(server, cache) as client:
            for _ in range(2):
                assert "".join([p async for p in client.stream_chat(MESSAGES, purpose="answer")])

    asyncio.run(run())
    assert server.stats.calls == 2 and not cache.entries


def test_every_call_has_a_completion_budget(llm_server):
    """Without one, a small model that repeats itself writes until the context is full (the first
    real-model run: five 120 s timeouts on one paper)."""
    server = llm_server(default_reply="ok")
    asyncio.run(_chat_twice(client_for(server, None), purpose="keywords"))
    asyncio.run(_chat_twice(client_for(server, None, max_tokens=77), purpose="answer"))
    budgets = [r["max_tokens"] for r in server.stats.requests]
    assert budgets[0] > 0 and budgets[0] <= 512 and budgets[-1] == 77


def test_no_more_requests_than_the_server_has_slots(llm_server):
    server = llm_server(default_reply="ok", latency=0.05, props=llama_props(slots=1, context_per_slot=8192))
    client = client_for(server, None, max_concurrency=8)

    async def run() -> None:
        async with client:
            await client.health_check()
            await asyncio.gather(*(client.chat([{"role": "user", "content": f"q{i}"}], purpose="answer")
                                   for i in range(6)))

    asyncio.run(run())
    assert client.concurrency == 1 and server.stats.peak_concurrency == 1 and server.stats.calls == 6


def test_servers_without_props_keep_the_configured_concurrency(llm_server):
    server = llm_server(default_reply="ok", latency=0.05)
    client = client_for(server, None, max_concurrency=4)

    async def run() -> None:
        async with client:
            await client.health_check()
            await asyncio.gather(*(client.chat([{"role": "user", "content": f"q{i}"}], purpose="answer")
                                   for i in range(8)))

    asyncio.run(run())
    assert client.concurrency == 4 and server.stats.peak_concurrency > 1


def test_a_prompt_longer_than_the_context_is_refused_with_the_sizes(llm_server):
    server = llm_server(default_reply="ok", props=llama_props(slots=2, context_per_slot=512))
    client = client_for(server, None)
    long_prompt = [{"role": "user", "content": "word " * 3000}]

    async def run() -> None:
        async with client:
            await client.health_check()
            await client.chat(long_prompt, purpose="answer")

    with pytest.raises(PromptTooLongError, match=r"512-token context"):
        asyncio.run(run())
    assert server.stats.calls == 0  # refused before it was sent


def test_the_budget_shrinks_to_what_the_context_leaves(llm_server):
    server = llm_server(default_reply="ok", props=llama_props(slots=1, context_per_slot=1024))
    client = client_for(server, None)
    prompt = [{"role": "user", "content": "word " * 500}]

    async def run() -> None:
        async with client:
            await client.health_check()
            await client.chat(prompt, purpose="answer")

    asyncio.run(run())
    sent = server.stats.requests[0]["max_tokens"]
    assert 64 <= sent < 1024 - 500
