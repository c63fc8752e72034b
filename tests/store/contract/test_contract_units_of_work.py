"""Units of work (Writes): a document's commit is all or nothing; writers never lose each other's rows."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest
from contract_helpers import DIM, chunk, doc

from scholargraph.models import DocStatus


def test_a_failing_unit_of_work_leaves_nothing(store):
    index = store.vector_index("chunk")

    def commit() -> None:
        store.add_pending(doc("d1"), "full", "x")
        store.insert_chunks([chunk("d1")])
        store.put_vectors("chunk", ["d1-c0"], np.ones((1, DIM), np.float32))
        assert store.get_document("d1") is not None  # reads inside the work see its writes
        raise RuntimeError("crash mid-commit")

    with pytest.raises(RuntimeError, match="crash mid-commit"):
        store.write(commit)
    assert store.get_document("d1") is None and store.get_chunks(["d1-c0"]) == {}
    assert len(index) == 0 and list(store.iter_vectors("chunk")) == []


def test_units_of_work_return_values_and_nest(store):
    def outer() -> str:
        store.add_pending(doc("d1"), "full", "x")
        return store.write(lambda: store.claim_pending(1)[0])  # joins the outer unit of work

    assert store.write(outer) == "d1"
    assert store.submit(lambda: store.get_document("d1").status).result() == DocStatus.PROCESSING


def test_awrite_keeps_the_event_loop_free(store):
    async def main() -> list[str]:
        ticks: list[str] = []

        async def ticker() -> None:
            for _ in range(3):
                ticks.append("tick")
                await asyncio.sleep(0)

        def slow() -> str:
            store.add_pending(doc("d1"), "full", "x")
            return "written"

        results = await asyncio.gather(store.awrite(slow), ticker())
        return [results[0], *ticks]

    assert asyncio.run(main()) == ["written", "tick", "tick", "tick"]
    assert store.get_document("d1").status == DocStatus.PENDING


def test_many_threads_writing_at_once_lose_nothing(store):
    def worker(n: int) -> None:
        for i in range(20):
            store.add_pending(doc(f"t{n}-{i}"), "full", "x")
            store.add_session_turn(f"s{n}", "q", "a")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.count("documents") == 120
    assert all(len(store.session_history(f"s{n}", limit=100)) == 20 for n in range(6))


def test_the_indexing_lock_can_be_taken_and_given_back(store):
    lock = store.indexing_lock()
    assert lock.acquire()
    assert isinstance(lock.holder(), str)
    lock.release()
    again = store.indexing_lock()
    assert again.acquire()
    again.release()


def test_counts(store):
    assert {what: store.count(what) for what in ("documents", "chunks", "entities", "relations", "keywords")} == dict.fromkeys(
        ("documents", "chunks", "entities", "relations", "keywords"), 0)
    with pytest.raises(ValueError):
        store.count("sqlite_master")
