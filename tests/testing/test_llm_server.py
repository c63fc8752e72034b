"""The scripted OpenAI-compatible server, spoken to with a plain HTTP client."""

from __future__ import annotations

import asyncio
import json
import math
import threading
import time

import httpx
import pytest

from scholargraph.testing.llm_server import Reply, Rule, ScriptedLLMServer, unit_vector


def chat_body(text: str, **extra: object) -> dict:
    return {"model": "scripted-model", "messages": [{"role": "user", "content": text}], **extra}


def post_chat(server: ScriptedLLMServer, text: str, **extra: object) -> httpx.Response:
    return httpx.post(f"{server.base_url}/chat/completions", json=chat_body(text, **extra), timeout=10)


def test_models_endpoint_lists_models():
    with ScriptedLLMServer(models=["a", "b:latest"]) as server:
        data = httpx.get(f"{server.base_url}/models").json()
    assert [m["id"] for m in data["data"]] == ["a", "b:latest"]
    assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")


def test_chat_completion_shape_and_usage():
    with ScriptedLLMServer(lambda request: request["messages"][-1]["content"].upper()) as server:
        data = post_chat(server, "echo me").json()
    assert data["object"] == "chat.completion" and data["model"] == "scripted-model"
    assert data["choices"][0]["message"] == {"role": "assistant", "content": "ECHO ME"}
    assert data["usage"] == {"prompt_tokens": 2, "completion_tokens": 2, "total_tokens": 4}
    assert server.stats.calls == 1 and server.stats.requests[0]["messages"][0]["content"] == "echo me"


def test_rules_pick_replies_and_kinds():
    rules = [
        Rule("extract", r"Extract entities", '{"entities": []}'),
        Rule("keywords", r"keywords?:", lambda request: Reply("a, b", usage=False)),
    ]
    with ScriptedLLMServer(rules=rules, default_reply="fallback") as server:
        assert post_chat(server, "Please Extract entities from:\ntext").json()["choices"][0]["message"]["content"] == (
            '{"entities": []}'
        )
        keywords = post_chat(server, "list keywords: x").json()
        assert "usage" not in keywords
        assert post_chat(server, "something else").json()["choices"][0]["message"]["content"] == "fallback"
        stats = server.stats.to_json()
    assert {k: v["calls"] for k, v in stats["by_kind"].items()} == {"extract": 1, "keywords": 1, "other": 1}
    assert stats["by_kind"]["other"]["completion_tokens"] == 2
    assert stats["prompt_tokens"] == sum(v["prompt_tokens"] for v in stats["by_kind"].values())
    json.dumps(stats)


def test_error_replies_and_raw_bodies():
    replies = iter([Reply("bad things", status=400, headers={"X-Test": "1"}), Reply(raw_body="{not json")])
    with ScriptedLLMServer(lambda request: next(replies)) as server:
        error = post_chat(server, "x")
        raw = post_chat(server, "y")
    assert error.status_code == 400 and error.json()["error"]["message"] == "bad things"
    assert error.headers["x-test"] == "1"
    assert raw.status_code == 200 and raw.text == "{not json"


def test_broken_responder_is_a_500():
    def explode(request: dict) -> str:
        raise KeyError("oops")

    with ScriptedLLMServer(explode) as server:
        response = post_chat(server, "x")
    assert response.status_code == 500 and "oops" in response.json()["error"]["message"]
    assert server.stats.responder_errors == ["KeyError('oops')"]


def test_streaming_sends_sse_chunks_and_usage():
    with ScriptedLLMServer("one two three") as server:
        body = chat_body("hi", stream=True, stream_options={"include_usage": True})
        with httpx.stream("POST", f"{server.base_url}/chat/completions", json=body) as response:
            assert response.headers["content-type"] == "text/event-stream"
            lines = [line for line in response.iter_lines() if line]
    assert lines[-1] == "data: [DONE]"
    events = [json.loads(line.removeprefix("data: ")) for line in lines[:-1]]
    text = "".join(e["choices"][0]["delta"].get("content") or "" for e in events if e["choices"])
    assert text == "one two three"
    assert events[-1]["usage"] == {"prompt_tokens": 1, "completion_tokens": 4, "total_tokens": 5}
    assert events[-2]["choices"][0]["finish_reason"] == "stop"


def test_streaming_without_include_usage_has_no_usage_chunk():
    with ScriptedLLMServer("one two") as server:
        with httpx.stream("POST", f"{server.base_url}/chat/completions", json=chat_body("hi", stream=True)) as r:
            lines = [line for line in r.iter_lines() if line.startswith("data: {")]
    assert all("usage" not in json.loads(line[6:]) for line in lines)


def test_embeddings_are_deterministic_unit_vectors():
    with ScriptedLLMServer(embedding_dim=16) as server:
        url = f"{server.base_url}/embeddings"
        first = httpx.post(url, json={"model": "e", "input": ["alpha", "beta"]}).json()
        again = httpx.post(url, json={"model": "e", "input": "alpha"}).json()
        wide = httpx.post(url, json={"model": "e", "input": "alpha", "dimensions": 32}).json()
    vectors = [d["embedding"] for d in first["data"]]
    assert len(vectors) == 2 and len(vectors[0]) == 16
    assert math.isclose(sum(x * x for x in vectors[0]), 1.0, rel_tol=1e-5)
    assert again["data"][0]["embedding"] == vectors[0] == unit_vector("alpha", 16)
    assert vectors[0] != vectors[1]
    assert len(wide["data"][0]["embedding"]) == 32
    assert server.stats.embedding_calls == 3 and server.stats.embedding_inputs == 4


def test_fail_next_with_retry_after():
    with ScriptedLLMServer("ok") as server:
        server.fail_next(2, status=429, retry_after=2)
        first, second, third = (post_chat(server, "x") for _ in range(3))
    assert (first.status_code, second.status_code, third.status_code) == (429, 429, 200)
    assert first.headers["retry-after"] == "2"
    assert server.stats.errors_injected == 2 and server.stats.calls == 3


def test_drop_next_closes_without_answer():
    with ScriptedLLMServer("ok") as server:
        server.drop_next(1)
        with pytest.raises(httpx.RemoteProtocolError):
            post_chat(server, "x")
        assert post_chat(server, "x").status_code == 200


def test_hang_next_outlasts_a_client_timeout():
    with ScriptedLLMServer("ok") as server:
        server.hang_next(1, seconds=1.0)
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(f"{server.base_url}/chat/completions", json=chat_body("x"), timeout=0.2)
        assert post_chat(server, "x").status_code == 200


def test_latency_model():
    with ScriptedLLMServer(Reply("a" * 40), latency=0.05, latency_per_completion_token=0.01) as server:
        started = time.perf_counter()
        post_chat(server, "x")
        elapsed = time.perf_counter() - started
    assert elapsed >= 0.15  # 0.05 s + 10 tokens * 0.01 s were applied


def test_api_key_is_required_when_set():
    with ScriptedLLMServer(api_key="k") as server:
        assert httpx.get(f"{server.base_url}/models").status_code == 401
        assert httpx.get(f"{server.base_url}/models", headers={"Authorization": "Bearer k"}).status_code == 200


def test_serves_many_requests_at_once():
    """128 requests are in flight together: each responder waits until all 128 have arrived (a
    server that answered one connection at a time would break the barrier instead)."""
    everyone_in = threading.Barrier(128, timeout=60)

    def respond(request: dict) -> str:
        everyone_in.wait()
        return "ok"

    async def burst(n: int) -> None:
        limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
        async with httpx.AsyncClient(limits=limits, timeout=120) as client:
            calls = [client.post(f"{server.base_url}/chat/completions", json=chat_body(f"q{i}")) for i in range(n)]
            responses = await asyncio.gather(*calls)
            assert [r.json()["choices"][0]["message"]["content"] for r in responses] == ["ok"] * n

    with ScriptedLLMServer(respond) as server:
        asyncio.run(burst(128))
    assert server.stats.peak_concurrency == 128
    assert server.stats.responder_errors == []


def test_concurrency_timeline_shows_idle_and_busy_slices():
    from scholargraph.testing.llm_server import ServerStats

    stats = ServerStats()
    stats.first_start, stats.last_end = 0.0, 4.0
    stats.spans = [(0.0, 1.0), (0.0, 1.0), (2.0, 4.0)]  # two requests, a pause, one long request
    assert stats.concurrency_timeline(buckets=4) == [2.0, 0.0, 1.0, 1.0]


def test_stats_reset_and_stop_is_prompt():
    server = ScriptedLLMServer("ok").start()
    with httpx.Client() as client:  # leaves a keep-alive connection open
        client.post(f"{server.base_url}/chat/completions", json=chat_body("x"))
        assert server.stats.calls == 1
        server.stats.reset()
        assert server.stats.to_json()["calls"] == 0 and server.stats.requests == []
        server.stop()  # returns although the client keeps its connection open (a hang trips the test timeout)
        with pytest.raises(httpx.TransportError):  # that connection was closed, and no new one is accepted
            client.post(f"{server.base_url}/chat/completions", json=chat_body("x"))
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{server.base_url}/models")


def test_max_parallel_makes_requests_wait_their_turn():
    """A single local GPU server works on one request at a time: the others queue (in flight for
    the client, never worked on together)."""
    working = {"now": 0, "most": 0}
    lock = threading.Lock()

    def respond(request: dict) -> Reply:
        with lock:
            working["now"] += 1
            working["most"] = max(working["most"], working["now"])
        time.sleep(0.05)
        with lock:
            working["now"] -= 1
        return Reply("ok", delay=0.0)

    async def burst(n: int) -> list[str]:
        async with httpx.AsyncClient(timeout=60) as client:
            calls = [client.post(f"{server.base_url}/chat/completions", json=chat_body(f"q{i}")) for i in range(n)]
            return [r.json()["choices"][0]["message"]["content"] for r in await asyncio.gather(*calls)]

    with ScriptedLLMServer(respond, max_parallel=1) as server:
        assert asyncio.run(burst(6)) == ["ok"] * 6
    assert working["most"] == 1
    assert server.stats.peak_concurrency == 6  # all six were waiting or being answered together
