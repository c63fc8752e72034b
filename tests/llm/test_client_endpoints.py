"""Several LLM servers behind one client (llm.endpoints): what a user running a fleet sees."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest
from support.memory_cache import MemoryCache

from scholargraph.config import LLMSettings
from scholargraph.errors import LLMUnavailableError
from scholargraph.llm.client import LLMClient
from scholargraph.testing.llm_server import ScriptedLLMServer


def echo(request: dict[str, Any]) -> str:
    return "answer to " + request["messages"][-1]["content"]


def fleet(*endpoints: dict[str, Any], **overrides: Any) -> LLMSettings:
    values: dict[str, Any] = {"model": "scripted-model", "retries": 4, "backoff_base": 0.01, "backoff_max": 0.05,
                              "timeout": 5.0, "endpoint_cooldown": 0.05, "endpoints": list(endpoints)}
    return LLMSettings(**{**values, **overrides})


def ask_all(settings: LLMSettings, questions: list[str], cache: MemoryCache | None = None,
            check: bool = False) -> tuple[list[str], LLMClient, list[str]]:
    async def go() -> tuple[list[str], LLMClient, list[str]]:
        async with LLMClient(settings, cache=cache) as client:
            down = await client.health_check() if check else []
            results = await asyncio.gather(*(
                client.chat([{"role": "user", "content": q}], purpose="extract") for q in questions))
            return [r.text for r in results], client, down

    return asyncio.run(go())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


QUESTIONS = [f"question {i}" for i in range(24)]


def test_calls_spread_over_the_endpoints_within_each_ones_concurrency_and_none_is_lost_or_sent_twice(llm_server):
    small = llm_server(responder=echo, latency=0.05)
    large = llm_server(responder=echo, latency=0.05)
    settings = fleet({"base_url": small.base_url, "max_concurrency": 2},
                     {"base_url": large.base_url, "max_concurrency": 4})
    answers, client, _ = ask_all(settings, QUESTIONS)
    assert answers == [f"answer to {q}" for q in QUESTIONS]
    assert small.stats.peak_concurrency <= 2 and large.stats.peak_concurrency <= 4
    assert small.stats.calls > 0 and large.stats.calls > 0
    asked = [r["messages"][-1]["content"] for s in (small, large) for r in s.stats.requests]
    assert sorted(asked) == sorted(QUESTIONS), "each question went to exactly one server, once"
    assert client.ledger.by_endpoint[small.base_url].calls + client.ledger.by_endpoint[large.base_url].calls == 24


def test_an_endpoint_that_is_down_is_taken_out_and_its_calls_are_answered_by_the_others(llm_server):
    up = llm_server(responder=echo)
    dead = f"http://127.0.0.1:{free_port()}/v1"
    settings = fleet({"base_url": dead}, {"base_url": up.base_url})
    answers, client, _ = ask_all(settings, QUESTIONS)
    assert answers == [f"answer to {q}" for q in QUESTIONS]
    assert up.stats.calls == len(QUESTIONS)
    assert client.endpoints[0].out and "refused" in client.endpoints[0].down_reason
    assert client.ledger.by_endpoint[dead].failed_attempts >= 1


def test_a_failing_endpoint_comes_back_into_service_when_it_answers_again(llm_server):
    port = free_port()
    other = llm_server(responder=echo)
    settings = fleet({"base_url": f"http://127.0.0.1:{port}/v1"}, {"base_url": other.base_url})

    async def go() -> tuple[int, int]:
        async with LLMClient(settings) as client:
            await asyncio.gather(*(client.chat([{"role": "user", "content": q}], purpose="extract")
                                   for q in QUESTIONS[:6]))
            assert client.endpoints[0].out
            revived = ScriptedLLMServer(responder=echo, port=port).start()
            try:
                for q in QUESTIONS[6:]:  # one at a time, the time out (0.05 s) passes as they run
                    await client.chat([{"role": "user", "content": q}], purpose="extract")
                    await asyncio.sleep(0.02)
                return revived.stats.calls, int(client.endpoints[0].out)
            finally:
                revived.stop()

    revived_calls, still_out = asyncio.run(go())
    assert revived_calls > 0 and not still_out


def test_a_server_answering_5xx_is_taken_out_and_the_call_is_retried_elsewhere(llm_server):
    sick = llm_server(responder=echo)
    sick.fail_next(50, status=503)
    well = llm_server(responder=echo)
    settings = fleet({"base_url": sick.base_url}, {"base_url": well.base_url}, endpoint_failures=2)
    answers, client, _ = ask_all(settings, QUESTIONS[:8])
    assert answers == [f"answer to {q}" for q in QUESTIONS[:8]]
    assert well.stats.calls == 8 and client.ledger.by_endpoint[well.base_url].calls == 8
    assert client.ledger.by_endpoint[sick.base_url].calls == 0
    assert client.ledger.by_endpoint[sick.base_url].failed_attempts == sick.stats.calls
    assert client.endpoints[0].out


def test_a_call_that_times_out_on_a_slow_server_is_answered_by_another(llm_server):
    slow = llm_server(responder=echo, latency=3.0)
    fast = llm_server(responder=echo)
    settings = fleet({"base_url": slow.base_url}, {"base_url": fast.base_url}, timeout=0.5, endpoint_failures=1)
    answers, client, _ = ask_all(settings, QUESTIONS[:4])
    assert answers == [f"answer to {q}" for q in QUESTIONS[:4]]
    assert client.endpoints[0].out and "timed out" in client.endpoints[0].down_reason


def test_two_servers_of_the_same_model_share_cached_replies_and_another_model_does_not_hit_them(llm_server):
    first = llm_server(responder=echo, models=["scripted-model", "other-model"])
    second = llm_server(responder=echo, models=["scripted-model", "other-model"])
    cache = MemoryCache()
    ask_all(fleet({"base_url": first.base_url}), QUESTIONS[:3], cache)
    assert first.stats.calls == 3
    answers, _, _ = ask_all(fleet({"base_url": second.base_url}), QUESTIONS[:3], cache)
    assert answers == [f"answer to {q}" for q in QUESTIONS[:3]] and second.stats.calls == 0, \
        "the same model on another server: the replies come from the cache"
    ask_all(LLMSettings(base_url=second.base_url, model="scripted-model", timeout=5), QUESTIONS[:3], cache)
    assert second.stats.calls == 0, "llm.base_url alone: the same cache"
    ask_all(fleet({"base_url": second.base_url, "model": "other-model"}), QUESTIONS[:3], cache)
    assert second.stats.calls == 3, "another model is asked"


def test_replies_cached_by_an_earlier_version_under_the_server_url_are_still_found(llm_server):
    from scholargraph.llm.client import LLMClient as Client
    from scholargraph.llm.wire import cache_key
    from scholargraph.store.base import CachedResponse

    server = llm_server(responder=echo)
    cache = MemoryCache()
    settings = LLMSettings(base_url=server.base_url, model="scripted-model", timeout=5)
    params = Client(settings)._params("extract", None)  # noqa: SLF001 - the key an older version wrote
    del params["max_tokens"]
    old_key = cache_key(server.base_url, "scripted-model", [{"role": "user", "content": "q"}], params, None)
    cache.cache_put(old_key, "scripted-model", "extract", CachedResponse("from before", 1, 1, False))
    answers, _, _ = ask_all(settings, ["q"], cache)
    assert answers == ["from before"] and server.stats.calls == 0


def test_the_health_check_names_the_endpoints_that_are_down_and_the_run_goes_on_with_the_others(llm_server):
    up = llm_server(responder=echo)
    dead = f"http://127.0.0.1:{free_port()}/v1"
    wrong = llm_server(responder=echo, models=["another-model"])
    settings = fleet({"base_url": up.base_url}, {"base_url": dead}, {"base_url": wrong.base_url})
    answers, client, down = ask_all(settings, QUESTIONS[:4], check=True)
    assert answers == [f"answer to {q}" for q in QUESTIONS[:4]]
    assert len(down) == 2
    assert any(line.startswith(dead) and "cannot reach" in line for line in down), down
    assert any(line.startswith(wrong.base_url) and "not served" in line for line in down), down
    assert up.stats.calls == 4 and wrong.stats.calls == 0


def test_the_health_check_fails_when_no_endpoint_can_be_used_listing_each():
    dead = [f"http://127.0.0.1:{free_port()}/v1" for _ in range(2)]
    settings = fleet(*({"base_url": url} for url in dead))
    with pytest.raises(LLMUnavailableError) as caught:
        ask_all(settings, ["q"], check=True)
    message = str(caught.value)
    assert "none of the 2 LLM endpoints" in message and all(url in message for url in dead)
    assert message.count("Nothing was started") == 1


def test_llama_cpp_slots_are_learned_per_endpoint(llm_server):
    from scholargraph.testing.llm_server import llama_props

    one_slot = llm_server(responder=echo, latency=0.05, props=llama_props(1, 4096))
    plain = llm_server(responder=echo, latency=0.05)
    settings = fleet({"base_url": one_slot.base_url, "max_concurrency": 8}, {"base_url": plain.base_url,
                                                                             "max_concurrency": 2})
    answers, client, _ = ask_all(settings, QUESTIONS[:12], check=True)
    assert len(answers) == 12 and client.concurrency == 3
    assert one_slot.stats.peak_concurrency == 1 and plain.stats.peak_concurrency <= 2
