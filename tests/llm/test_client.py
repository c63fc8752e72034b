"""LLMClient against the scripted OpenAI-compatible server: what a user sees when servers misbehave."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from typing import Any

import pytest
from support.memory_cache import MemoryCache

from scholargraph.config import LLMSettings
from scholargraph.errors import LLMError, LLMUnavailableError
from scholargraph.llm.client import ChatResult, LLMClient
from scholargraph.models import Usage
from scholargraph.testing.llm_server import Reply, ScriptedLLMServer

MESSAGES = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say hello."}]
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def make_settings(url: str, **overrides: Any) -> LLMSettings:
    values: dict[str, Any] = {
        "base_url": url,
        "model": "scripted-model",
        "retries": 3,
        "backoff_base": 0.01,
        "backoff_max": 0.05,
        "timeout": 5.0,
    }
    return LLMSettings(**{**values, **overrides})


def chat_once(settings: LLMSettings, cache: MemoryCache | None = None, **kwargs: Any) -> tuple[ChatResult, LLMClient]:
    async def go() -> tuple[ChatResult, LLMClient]:
        async with LLMClient(settings, cache=cache) as client:
            return await client.chat(MESSAGES, purpose=kwargs.pop("purpose", "answer"), **kwargs), client

    return asyncio.run(go())


def health_check(settings: LLMSettings) -> None:
    async def go() -> None:
        async with LLMClient(settings) as client:
            await client.health_check()

    asyncio.run(go())


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_chat_returns_text_and_server_reported_usage():
    with ScriptedLLMServer("Hello there.") as server:
        result, client = chat_once(make_settings(server.base_url), purpose="extract")
    assert result.text == "Hello there."
    assert not result.cached and not result.estimated
    assert (result.prompt_tokens, result.completion_tokens) == (
        server.stats.prompt_tokens,
        server.stats.completion_tokens,
    )
    assert client.usage["extract"] == Usage(calls=1, prompt_tokens=result.prompt_tokens, completion_tokens=3)
    assert server.stats.requests[0]["messages"] == MESSAGES
    assert server.stats.requests[0]["temperature"] == 0.0


def test_tokens_are_estimated_when_server_omits_usage():
    with ScriptedLLMServer(Reply("12345678", usage=False)) as server:
        result, client = chat_once(make_settings(server.base_url))
    assert result.estimated
    assert result.completion_tokens == 2  # ceil(8 / 4)
    assert result.prompt_tokens == server.stats.prompt_tokens  # same estimator on both sides
    assert client.usage["answer"].estimated_calls == 1


def test_content_null_is_empty_text():
    body = '{"choices": [{"message": {"role": "assistant", "content": null, "reasoning_content": "hmm"}}]}'
    with ScriptedLLMServer(Reply(raw_body=body)) as server:
        result, _ = chat_once(make_settings(server.base_url))
    assert result.text == ""


def test_retries_429_and_500_then_succeeds():
    with ScriptedLLMServer("ok") as server:
        server.fail_next(1, status=429)
        server.fail_next(1, status=500)
        result, client = chat_once(make_settings(server.base_url))
    assert result.text == "ok"
    assert server.stats.calls == 3
    assert server.stats.errors_injected == 2
    assert client.retried_attempts == 2
    assert client.usage["answer"].calls == 1


def test_retry_after_is_honoured_and_capped(monkeypatch: pytest.MonkeyPatch):
    from scholargraph.llm import client as client_module

    waits: list[float] = []
    real_delay = client_module.backoff_delay

    def recording_delay(*args: Any) -> float:
        waits.append(real_delay(*args))
        return waits[-1]

    monkeypatch.setattr(client_module, "backoff_delay", recording_delay)
    with ScriptedLLMServer("ok") as server:
        server.fail_next(1, status=429, retry_after=0.4)
        started = time.perf_counter()
        chat_once(make_settings(server.base_url, backoff_base=0.001, backoff_max=5))
        assert time.perf_counter() - started >= 0.4  # it did wait what the server asked

        server.fail_next(1, status=503, retry_after=30)
        chat_once(make_settings(server.base_url, backoff_base=0.001, backoff_max=0.2))
    assert waits == [0.4, 0.2]  # Retry-After, then capped by backoff_max


def test_non_retryable_400_raises_with_server_message():
    with ScriptedLLMServer(Reply("maximum context length is 4096 tokens", status=400)) as server:
        with pytest.raises(LLMError) as info:
            chat_once(make_settings(server.base_url))
    message = str(info.value)
    assert "maximum context length is 4096 tokens" in message
    assert "HTTP 400" in message and "scripted-model" in message and server.base_url in message
    assert server.stats.calls == 1


def test_unknown_model_is_unavailable_with_server_message():
    with ScriptedLLMServer("ok", strict_models=True) as server:
        with pytest.raises(LLMUnavailableError, match="not found, try pulling it first"):
            chat_once(make_settings(server.base_url, model="llama9"))


def test_timeouts_are_retried_then_reported():
    with ScriptedLLMServer("ok") as server:
        server.hang_next(2, seconds=1.5)
        with pytest.raises(LLMError) as info:
            chat_once(make_settings(server.base_url, timeout=0.2, retries=1))
    assert "after 2 attempts" in str(info.value) and "timed out after 0.2s" in str(info.value)
    assert not isinstance(info.value, LLMUnavailableError)
    assert server.stats.calls == 2


def test_slow_answer_within_timeout_succeeds():
    with ScriptedLLMServer("ok") as server:
        server.hang_next(1, seconds=0.1)
        result, _ = chat_once(make_settings(server.base_url, timeout=2))
    assert result.text == "ok" and result.latency_s >= 0.1


def test_dropped_connection_is_retried():
    with ScriptedLLMServer("ok") as server:
        server.drop_next(2)
        result, _ = chat_once(make_settings(server.base_url))
    assert result.text == "ok"
    assert server.stats.calls == 3


def test_unreachable_server_is_unavailable_and_names_url():
    url = f"http://127.0.0.1:{closed_port()}/v1"
    with pytest.raises(LLMUnavailableError) as info:
        chat_once(make_settings(url, retries=1))
    message = str(info.value)
    assert url in message and "connection refused" in message and "ollama serve" in message


def test_malformed_json_is_retried_then_reported():
    with ScriptedLLMServer(Reply(raw_body="{not json")) as server:
        with pytest.raises(LLMError) as info:
            chat_once(make_settings(server.base_url, retries=2))
    assert "malformed response from server" in str(info.value)
    assert "after 3 attempts" in str(info.value)
    assert server.stats.calls == 3


def test_malformed_once_then_ok():
    with ScriptedLLMServer("fine") as server:
        server.fail_next(1, status=200, body='{"object": "nothing"}')
        result, _ = chat_once(make_settings(server.base_url))
    assert result.text == "fine" and server.stats.calls == 2


def test_failures_are_logged():
    cache = MemoryCache()
    with ScriptedLLMServer(Reply("bad request", status=400)) as server:
        with pytest.raises(LLMError):
            chat_once(make_settings(server.base_url), cache=cache, document_id="doc1")
    assert [(c.status, c.document_id) for c in cache.calls] == [("failed", "doc1")]


def test_health_check_unknown_model_lists_available_models():
    with ScriptedLLMServer(models=["llama3.2:latest", "qwen2.5:7b"]) as server:
        with pytest.raises(LLMUnavailableError) as info:
            health_check(make_settings(server.base_url, model="mistral"))
    message = str(info.value)
    assert "model 'mistral' is not served by" in message and server.base_url in message
    assert "available: llama3.2:latest, qwen2.5:7b" in message and "ollama pull mistral" in message


def test_health_check_matches_latest_tag():
    with ScriptedLLMServer(models=["llama3.2:latest"]) as server:
        health_check(make_settings(server.base_url, model="llama3.2"))
        health_check(make_settings(server.base_url, model="llama3.2:latest"))


def test_health_check_without_models_endpoint_probes_a_completion():
    with ScriptedLLMServer("pong", serve_models_endpoint=False) as server:
        health_check(make_settings(server.base_url))
    assert server.stats.requests[-1]["max_tokens"] == 1


def test_health_check_unreachable_and_auth():
    url = f"http://127.0.0.1:{closed_port()}/v1"
    with pytest.raises(LLMUnavailableError, match="Nothing was started") as info:
        health_check(make_settings(url))
    assert url in str(info.value)
    with ScriptedLLMServer("ok", api_key="sekret") as server:
        with pytest.raises(LLMUnavailableError, match="set llm.api_key"):
            health_check(make_settings(server.base_url))
        settings = make_settings(server.base_url, api_key="sekret")
        health_check(settings)
        assert chat_once(settings)[0].text == "ok"


def test_cache_hit_makes_no_request():
    cache = MemoryCache()

    async def go() -> tuple[list[ChatResult], LLMClient]:
        async with LLMClient(make_settings(server.base_url), cache=cache) as client:
            first = await client.chat(MESSAGES, purpose="extract", document_id="d1")
            second = await client.chat(MESSAGES, purpose="extract", document_id="d1")
            third = await client.chat(MESSAGES, purpose="extract", use_cache=False)
            return [first, second, third], client

    with ScriptedLLMServer("cached answer") as server:
        (first, second, third), client = asyncio.run(go())
    assert server.stats.calls == 2  # the second call was served from the cache
    assert second.cached and not first.cached and not third.cached
    assert second.text == first.text == "cached answer"
    usage = client.usage["extract"]
    assert (usage.calls, usage.cached_calls) == (2, 1)
    assert usage.prompt_tokens == 2 * first.prompt_tokens  # cached tokens are not spent tokens
    assert client.cached_usage["extract"].prompt_tokens == first.prompt_tokens
    assert [c.cached for c in cache.calls] == [False, True, False]


def test_cache_key_includes_params_and_schema():
    cache = MemoryCache()

    async def go() -> None:
        async with LLMClient(make_settings(server.base_url), cache=cache) as client:
            await client.chat(MESSAGES, purpose="answer")
            await client.chat(MESSAGES, purpose="answer", params={"temperature": 0.7})
            await client.chat(MESSAGES, purpose="answer", schema=SCHEMA)

    with ScriptedLLMServer('{"answer": "x"}') as server:
        asyncio.run(go())
    assert server.stats.calls == 3


def test_structured_output_sends_json_schema():
    with ScriptedLLMServer('{"answer": "hi"}') as server:
        chat_once(make_settings(server.base_url), schema=SCHEMA, schema_name="reply")
        chat_once(make_settings(server.base_url, structured_output=False), schema=SCHEMA)
    sent = server.stats.requests[0]["response_format"]
    assert sent == {"type": "json_schema", "json_schema": {"name": "reply", "schema": SCHEMA, "strict": False}}
    assert "response_format" not in server.stats.requests[1]


def rejecting(formats: set[str]):
    def respond(request: dict) -> Reply:
        fmt = (request.get("response_format") or {}).get("type")
        if fmt in formats:
            return Reply(f"response_format type {fmt} is not supported", status=400)
        return Reply('{"answer": "hi"}')

    return respond


def sent_formats(server: ScriptedLLMServer) -> list[str | None]:
    return [(r.get("response_format") or {}).get("type") for r in server.stats.requests]


def test_structured_output_falls_back_and_remembers():
    async def go() -> tuple[list[str], LLMClient]:
        async with LLMClient(make_settings(server.base_url)) as client:
            first = await client.chat(MESSAGES, purpose="extract", schema=SCHEMA)
            again = MESSAGES + [{"role": "user", "content": "again"}]
            second = await client.chat(again, purpose="extract", schema=SCHEMA)
            return [first.text, second.text], client

    with ScriptedLLMServer(rejecting({"json_schema"})) as server:
        texts, client = asyncio.run(go())
    assert texts == ['{"answer": "hi"}'] * 2
    assert sent_formats(server) == ["json_schema", "json_object", "json_object"]
    assert client.response_format_mode == "json_object"

    with ScriptedLLMServer(rejecting({"json_schema", "json_object"})) as server:
        asyncio.run(go())
    assert sent_formats(server) == ["json_schema", "json_object", None, None]


LLAMA_CPP_SCHEMA_ERROR = ("Unable to generate parser for this template. Automatic parser generation failed: JSON schema "
                          "error at #/properties/entities/items/items: schema must be an object")  # real llama.cpp reply


def test_a_schema_llama_cpp_cannot_compile_degrades_instead_of_failing():
    def respond(request: dict) -> Reply:
        if (request.get("response_format") or {}).get("type") == "json_schema":
            return Reply(LLAMA_CPP_SCHEMA_ERROR, status=400)
        return Reply('{"answer": "hi"}')

    async def go() -> str:
        async with LLMClient(make_settings(server.base_url)) as client:
            return (await client.chat(MESSAGES, purpose="extract", schema=SCHEMA)).text

    with ScriptedLLMServer(respond) as server:
        assert asyncio.run(go()) == '{"answer": "hi"}'
    assert sent_formats(server) == ["json_schema", "json_object"]


def test_bounded_concurrency():
    async def go() -> LLMClient:
        async with LLMClient(make_settings(server.base_url, max_concurrency=4)) as client:
            calls = [client.chat([{"role": "user", "content": f"q{i}"}], purpose="extract") for i in range(20)]
            results = await asyncio.gather(*calls)
            assert len(results) == 20
            return client

    with ScriptedLLMServer("ok", latency=0.2) as server:
        client = asyncio.run(go())
    assert server.stats.peak_concurrency == 4
    assert client.peak_in_flight == 4 and client.in_flight == 0


def test_a_question_does_not_wait_behind_queued_extraction_calls():
    """An index run keeps every slot busy; a question asked meanwhile takes the next free slot."""

    async def go() -> list[str]:
        finished: list[str] = []
        async with LLMClient(make_settings(server.base_url, max_concurrency=1)) as client:

            async def call(name: str, purpose: str) -> None:
                await client.chat([{"role": "user", "content": name}], purpose=purpose)
                finished.append(name)

            bulk = [asyncio.create_task(call(f"chunk {i}", "extract")) for i in range(6)]
            await asyncio.sleep(0.02)  # the first extraction call holds the only slot, five wait
            await asyncio.gather(call("question", "answer"), *bulk)
        return finished

    with ScriptedLLMServer("ok", latency=0.05) as server:
        finished = asyncio.run(go())
    assert finished.index("question") <= 1, finished


def test_streaming_yields_pieces_and_records_usage():
    cache = MemoryCache()

    async def collect(client: LLMClient) -> list[str]:
        return [piece async for piece in client.stream_chat(MESSAGES, purpose="answer")]

    async def go() -> tuple[list[str], list[str], LLMClient]:
        async with LLMClient(make_settings(server.base_url), cache=cache) as client:
            return await collect(client), await collect(client), client

    text = "The quick brown fox jumps over the lazy dog."
    with ScriptedLLMServer(text) as server:
        pieces, again, client = asyncio.run(go())
    assert "".join(pieces) == text and len(pieces) > 1
    assert again == [text]  # served from the cache, at once
    assert server.stats.calls == 1
    assert server.stats.requests[0]["stream"] is True
    assert server.stats.requests[0]["stream_options"] == {"include_usage": True}
    usage = client.usage["answer"]
    assert (usage.calls, usage.cached_calls, usage.estimated_calls) == (1, 1, 0)
    assert usage.completion_tokens == server.stats.completion_tokens


def test_streaming_without_usage_estimates_and_retries_before_first_byte():
    async def go() -> tuple[str, LLMClient]:
        async with LLMClient(make_settings(server.base_url)) as client:
            return "".join([p async for p in client.stream_chat(MESSAGES, purpose="answer")]), client

    with ScriptedLLMServer(Reply("abcd efgh", usage=False)) as server:
        server.fail_next(1, status=502)
        text, client = asyncio.run(go())
    assert text == "abcd efgh"
    assert server.stats.calls == 2
    assert client.usage["answer"].estimated_calls == 1
    assert client.usage["answer"].completion_tokens == 3  # ceil(9 / 4)


def test_stream_closed_early_releases_its_slot():
    async def go() -> LLMClient:
        async with LLMClient(make_settings(server.base_url, max_concurrency=1)) as client:
            async with contextlib.aclosing(client.stream_chat(MESSAGES, purpose="answer")) as stream:
                async for _ in stream:
                    break
            assert client.in_flight == 0
            await client.chat(MESSAGES, purpose="answer")  # would deadlock if the slot leaked
            return client

    with ScriptedLLMServer("one two three four five six") as server:
        client = asyncio.run(go())
    assert client.usage["answer"].calls == 2


def test_usage_since_snapshot():
    async def go() -> dict[str, Usage]:
        async with LLMClient(make_settings(server.base_url)) as client:
            await client.chat(MESSAGES, purpose="extract")
            snapshot = client.usage_snapshot()
            await client.chat(MESSAGES, purpose="answer")
            return client.usage_since(snapshot)

    with ScriptedLLMServer("ok") as server:
        delta = asyncio.run(go())
    assert list(delta) == ["answer"] and delta["answer"].calls == 1


def test_client_survives_several_event_loops():
    async def ask(client: LLMClient, close: bool) -> str:
        result = await client.chat(MESSAGES, purpose="answer")
        if close:
            await client.aclose()
        return result.text

    with ScriptedLLMServer("ok") as server:
        client = LLMClient(make_settings(server.base_url))
        assert asyncio.run(ask(client, close=True)) == "ok"
        assert asyncio.run(ask(client, close=True)) == "ok"  # a closed client reopens on the next call
    assert client.usage["answer"].calls == 2


def test_unknown_purpose_and_missing_configuration():
    with pytest.raises(ValueError, match="unknown LLM call purpose"):
        asyncio.run(LLMClient(make_settings("http://127.0.0.1:9/v1")).chat(MESSAGES, purpose="nonsense"))
    with pytest.raises(LLMUnavailableError, match="llm.base_url"):
        asyncio.run(LLMClient(LLMSettings(model="m")).chat(MESSAGES, purpose="answer"))


def test_stream_broken_midway_is_an_error():
    good = '{"choices": [{"delta": {"content": "Hello"}}]}'
    cache = MemoryCache()

    async def go() -> list[str]:
        pieces: list[str] = []
        async with LLMClient(make_settings(server.base_url), cache=cache) as client:
            async for piece in client.stream_chat(MESSAGES, purpose="answer"):
                pieces.append(piece)
        return pieces

    with ScriptedLLMServer(Reply(raw_body=f"data: {good}\n\ndata: {{broken\n\n")) as server:
        with pytest.raises(LLMError, match="broke after 5 characters"):
            asyncio.run(go())
    assert server.stats.calls == 1  # content had been delivered: not retried
    assert [c.status for c in cache.calls] == ["error"] and cache.entries == {}


def test_stream_options_rejection_is_remembered():
    def respond(request: dict) -> Reply:
        if "stream_options" in request:
            return Reply("Unrecognized request argument supplied: stream_options", status=400)
        return Reply("streamed")

    async def go() -> list[str]:
        async with LLMClient(make_settings(server.base_url)) as client:
            texts = []
            for question in ("a", "b"):
                messages = [{"role": "user", "content": question}]
                texts.append("".join([p async for p in client.stream_chat(messages, purpose="answer")]))
            return texts

    with ScriptedLLMServer(respond) as server:
        assert asyncio.run(go()) == ["streamed", "streamed"]
    assert ["stream_options" in r for r in server.stats.requests] == [True, False, False]
