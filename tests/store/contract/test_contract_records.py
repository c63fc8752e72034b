"""LLM cache, call log, embedding cache (LLMCache, CallLog, EmbeddingCache): re-indexing costs nothing
twice, `stats` and `--cost` report what was spent."""

from __future__ import annotations

import numpy as np

from scholargraph.store.base import EMBEDDING_BATCH, CachedResponse, CallRecord


def test_responses_are_cached_and_survive_a_reopen(open_workspace):
    store = open_workspace("ws")
    assert store.cache_get("k") is None
    store.cache_put("k", "model", "extract", CachedResponse("hello", 10, 2, True))
    hit = store.cache_get("k")
    assert (hit.text, hit.prompt_tokens, hit.completion_tokens, hit.estimated) == ("hello", 10, 2, True)
    store.cache_put("k", "model", "extract", CachedResponse("newer", 1, 1, False))
    assert store.cache_get("k").text == "newer"
    store.close()
    assert open_workspace("ws").cache_get("k").text == "newer"


def test_usage_per_purpose_and_per_document(store):
    store.log_call(CallRecord("extract", "m", 10, 2, False, False, 0.1, "d1"))
    store.log_call(CallRecord("extract", "m", 10, 2, False, True, 0.0, "d1"))  # a cache hit: saved, not spent
    store.log_call(CallRecord("glean", "m", 5, 1, True, False, 0.2, "d2"))
    store.log_call(CallRecord("answer", "m", 7, 3, False, False, 0.3, None))
    store.log_call(CallRecord("extract", "m", 0, 0, False, False, 0.1, "d1", status="failed"))  # no answer
    store.log_call(CallRecord("extract", "m", 0, 0, False, False, 0.1, "d1", status="error"))  # as older versions logged one
    store.log_call(CallRecord("extract", "m", 4, 1, True, False, 0.1, "d1", status="error"))  # a stream cut short: a call
    usage = store.usage_by_purpose()
    extract = usage["extract"]
    assert (extract.calls, extract.cached_calls, extract.failed_attempts) == (2, 1, 2)
    assert (extract.prompt_tokens, extract.completion_tokens) == (14, 3)
    assert usage["glean"].estimated_calls == 1 and usage["answer"].prompt_tokens == 7
    assert set(store.usage_by_purpose("d2")) == {"glean"}
    by_doc = store.usage_by_document()
    assert set(by_doc) == {"d1", "d2"} and by_doc["d1"]["extract"].completion_tokens == 3
    assert by_doc["d1"]["extract"].failed_attempts == 2 and by_doc["d1"]["extract"].calls == 2
    assert store.count("llm_calls") == 7 and store.count("llm_cache") == 0


def test_usage_per_endpoint_counts_the_calls_each_server_answered(store):
    a, b = "http://gpu1:8000/v1", "http://gpu2:8000/v1"
    store.log_call(CallRecord("extract", "m", 10, 2, False, False, 0.1, "d1", endpoint=a))
    store.log_call(CallRecord("extract", "m", 20, 4, False, False, 0.1, "d2", endpoint=b))
    store.log_call(CallRecord("glean", "m", 5, 1, False, False, 0.1, "d2", endpoint=b))
    store.log_call(CallRecord("extract", "m", 0, 0, False, False, 0.1, "d1", status="failed", endpoint=a))
    store.log_call(CallRecord("extract", "m", 10, 2, False, True, 0.0, "d1"))  # a cache hit: no endpoint
    by_endpoint = store.usage_by_endpoint()
    assert set(by_endpoint) == {a, b}
    assert (by_endpoint[a].calls, by_endpoint[a].failed_attempts, by_endpoint[a].total_tokens) == (1, 1, 12)
    assert (by_endpoint[b].calls, by_endpoint[b].prompt_tokens, by_endpoint[b].completion_tokens) == (2, 25, 5)


def test_embedding_batches_are_counted_per_endpoint_and_never_as_llm_calls(store):
    a, b = "http://gpu1:8080/v1", "http://gpu2:8080/v1"
    store.log_call(CallRecord("extract", "m", 10, 2, False, False, 0.1, "d1", endpoint=a))
    store.log_call(CallRecord(EMBEDDING_BATCH, "e", 300, 0, False, False, 0.05, endpoint=a))
    store.log_call(CallRecord(EMBEDDING_BATCH, "e", 200, 0, False, False, 0.05, endpoint=b))
    store.log_call(CallRecord(EMBEDDING_BATCH, "e", 0, 0, False, False, 0.05, status="failed", endpoint=b))
    assert set(store.usage_by_purpose()) == {"extract"} and store.usage_by_endpoint()[a].total_tokens == 12
    assert set(store.usage_by_endpoint()) == {a}
    batches = store.embedding_usage_by_endpoint()
    assert (batches[a].calls, batches[a].prompt_tokens) == (1, 300)
    assert (batches[b].calls, batches[b].failed_attempts, batches[b].prompt_tokens) == (1, 1, 200)


def test_embeddings_are_cached_per_model(open_workspace):
    store = open_workspace("ws")
    v = np.arange(4, dtype=np.float32)
    store.embedding_put("model-a", {"h1": v, "h2": v + 1})
    got = store.embedding_get("model-a", ["h1", "h2", "h3"])
    assert sorted(got) == ["h1", "h2"] and got["h2"].tolist() == (v + 1).tolist()
    assert store.embedding_get("model-b", ["h1"]) == {}
    store.flush_records()
    store.close()
    again = open_workspace("ws")
    assert again.embedding_get("model-a", ["h1"])["h1"].tolist() == v.tolist()
