"""OpenAI-compatible embeddings: base64 vectors, servers that only send floats, bad answers."""

import asyncio

import numpy as np
import pytest

from scholargraph.config import EmbeddingSettings
from scholargraph.errors import ConfigError, LLMError
from scholargraph.llm.embedding_wire import decode_embeddings
from scholargraph.llm.embeddings import OpenAIEmbedder
from scholargraph.testing.llm_server import unit_vector


def _embed(server, texts, dim=8):
    async def run():
        embedder = OpenAIEmbedder(EmbeddingSettings(provider="openai", base_url=server.base_url, model="e", dimension=dim))
        try:
            return await embedder.embed(texts)
        finally:
            await embedder.aclose()

    return asyncio.run(run())


def test_base64_vectors_match_the_float_ones(llm_server):
    server = llm_server(embedding_dim=8)
    vectors = _embed(server, ["alpha", "beta"])
    assert np.allclose(vectors[1], unit_vector("beta", 8), atol=1e-6)
    assert server.stats.embedding_calls == 1


def test_a_server_that_rejects_base64_is_asked_again_for_floats(llm_server):
    server = llm_server(embedding_dim=8, embedding_encodings=("float",))
    vectors = _embed(server, ["alpha", "beta", "gamma"])
    assert np.allclose(vectors[0], unit_vector("alpha", 8), atol=1e-6)
    assert server.stats.embedding_calls == 2  # one refusal, one answer


def test_wrong_dimension_names_the_setting(llm_server):
    server = llm_server(embedding_dim=16)
    with pytest.raises(ConfigError, match="embeddings.dimension is 8"):
        _embed(server, ["alpha"], dim=8)


@pytest.mark.parametrize("payload, message", [
    ({"data": []}, "0 vectors for 1 inputs"),
    ({"error": "x"}, "no 'data' list"),
    ({"data": [{"index": 0, "embedding": "not base64!"}]}, "malformed vector"),
    ({"data": [{"index": 0, "embedding": {"a": 1}}]}, "malformed vector"),
])
def test_malformed_answers_are_clear_errors(payload, message):
    with pytest.raises(LLMError, match=message):
        decode_embeddings(payload, 1, 4, "http://x/v1/embeddings")


def test_vectors_come_back_in_input_order():
    payload = {"data": [{"index": 1, "embedding": [0.0, 1.0]}, {"index": 0, "embedding": [1.0, 0.0]}]}
    assert decode_embeddings(payload, 2, 2, "u").tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_priority_gate_lets_questions_pass_waiting_bulk_batches():
    import asyncio

    from scholargraph.llm.embeddings import PriorityGate

    async def scenario() -> list[str]:
        gate, order = PriorityGate(), []

        async def use(name: str, urgent: bool) -> None:
            async with gate.hold(urgent):
                order.append(name)
                await asyncio.sleep(0.01)

        async with gate.hold(False):  # a bulk batch is being encoded
            waiting = [asyncio.create_task(use(f"bulk{i}", False)) for i in range(3)]
            await asyncio.sleep(0)
            cancelled = asyncio.create_task(use("gone", True))
            question = asyncio.create_task(use("question", True))
            await asyncio.sleep(0)
            cancelled.cancel()
        await asyncio.gather(*waiting, question, cancelled, return_exceptions=True)
        return order

    assert asyncio.run(scenario()) == ["question", "bulk0", "bulk1", "bulk2"]


def test_local_model_serves_questions_during_bulk_embedding_with_the_same_vectors():
    import asyncio

    import numpy as np

    from scholargraph.config import EmbeddingSettings
    from scholargraph.llm.embeddings import LocalEmbedder

    embedder = LocalEmbedder(EmbeddingSettings(batch_size=8))
    long_texts = [f"Paper {i} studies graph retrieval. " * 60 for i in range(8)]  # several windows each
    questions = [f"What does paper {i} study?" for i in range(6)]

    async def together():
        bulk = asyncio.create_task(embedder._embed_uncached(long_texts))
        asked = await asyncio.gather(*(embedder._embed_uncached([q]) for q in questions))
        return await bulk, asked

    bulk, asked = asyncio.run(together())
    alone = asyncio.run(embedder._embed_uncached(long_texts[:3] + questions[:1]))
    assert np.allclose(bulk[:3], alone[:3], atol=1e-5) and np.allclose(asked[0][0], alone[3], atol=1e-5)


def test_priority_gate_never_starves_bulk_work():
    import asyncio

    from scholargraph.llm.embeddings import PriorityGate

    async def scenario() -> list[str]:
        gate, order = PriorityGate(urgent_run=2), []

        async def use(name: str, urgent: bool) -> None:
            async with gate.hold(urgent):
                order.append(name)
                await asyncio.sleep(0)

        async with gate.hold(False):
            tasks = [asyncio.create_task(use("bulk", False))]
            await asyncio.sleep(0)
            tasks += [asyncio.create_task(use(f"q{i}", True)) for i in range(5)]
            await asyncio.sleep(0)
        await asyncio.gather(*tasks)
        return order

    assert asyncio.run(scenario()) == ["q0", "q1", "bulk", "q2", "q3", "q4"]


def test_one_embedder_serves_several_event_loops(llm_server):
    """KnowledgeBase.run starts a loop per call and closes clients after each: the same embedder,
    under a full concurrency limit, must still work in the next loop."""
    server = llm_server(embedding_dim=8)
    settings = EmbeddingSettings(provider="openai", base_url=server.base_url, model="e", dimension=8,
                                 batch_size=1, max_concurrency=1)
    embedder = OpenAIEmbedder(settings)

    async def run(texts):
        try:
            return await embedder.embed(texts)
        finally:
            await embedder.aclose()

    asyncio.run(run(["a1", "a2", "a3"]))
    vectors = asyncio.run(run(["b1", "b2", "b3"]))
    assert np.allclose(vectors[2], unit_vector("b3", 8), atol=1e-6)


def _fleet_embed(urls, texts, dim=8, check=False):
    settings = EmbeddingSettings(provider="openai", model="e", dimension=dim, batch_size=2,
                                 endpoints=[{"base_url": u, "max_concurrency": 1} for u in urls])

    async def run():
        embedder = OpenAIEmbedder(settings)
        try:
            if check:
                await embedder.health_check()
            return await embedder.embed(texts), embedder
        finally:
            await embedder.aclose()

    return asyncio.run(run())


def _dead_url() -> str:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


def test_several_embedding_endpoints_share_the_batches_and_a_dead_one_is_taken_out(llm_server):
    first, second = llm_server(embedding_dim=8), llm_server(embedding_dim=8)
    texts = [f"text {i}" for i in range(12)]
    vectors, embedder = _fleet_embed([first.base_url, second.base_url], texts)
    assert np.allclose(vectors[5], unit_vector("text 5", 8), atol=1e-6)
    assert first.stats.embedding_calls > 0 and second.stats.embedding_calls > 0
    assert sum(embedder.calls.values()) == 6
    dead = _dead_url()
    vectors, embedder = _fleet_embed([dead, first.base_url], texts)  # a batch sent to it goes to the other
    assert len(vectors) == 12 and embedder.endpoints[0].out and dead not in embedder.calls
    vectors, embedder = _fleet_embed([dead, first.base_url], texts, check=True)
    assert len(vectors) == 12 and embedder.endpoints[0].out and dead not in embedder.calls


def test_the_embedding_health_check_fails_only_when_no_endpoint_answers():
    from scholargraph.errors import LLMUnavailableError

    dead = [_dead_url(), _dead_url()]
    with pytest.raises(LLMUnavailableError, match="none of the 2 embedding endpoints") as caught:
        _fleet_embed(dead, ["x"], check=True)
    assert all(url in str(caught.value) for url in dead)


def test_embedding_endpoints_need_the_openai_provider():
    with pytest.raises(ValueError, match="provider = 'openai'"):
        EmbeddingSettings(endpoints=[{"base_url": "http://gpu1:8000/v1"}])
