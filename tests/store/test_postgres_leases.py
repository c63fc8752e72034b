"""Leases of claimed documents and maintenance rows on PostgreSQL: a worker that
stops renewing its leases loses its documents to the next claim of a running worker, a worker that
was only slow commits nothing another worker took over, and the entities to resolve are shared out
in blocks that no two live workers hold at once."""

from __future__ import annotations

import time

import psycopg

from scholargraph.models import Document, Section
from scholargraph.store import open_store


def _doc(i: int) -> Document:
    return Document(id=f"d{i}", title=f"Paper {i}", sections=[Section("body", f"text of paper {i} " * (5 + i))])


def _expire(dsn: str, worker: int, table: str = "documents") -> None:
    """As if ``worker`` had stopped renewing its leases long ago."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"UPDATE {table} SET lease_until = 0 WHERE claimed_by = %s", (worker,))


def test_a_running_worker_takes_over_the_documents_whose_lease_ran_out(tmp_path, pg_dsn):
    dsn = pg_dsn()
    slow = open_store(tmp_path / "slow", "postgres", dsn=dsn)
    other = open_store(tmp_path / "other", "postgres", dsn=dsn)
    try:
        for i in range(3):
            slow.add_pending(_doc(i), "full", "none")
        held = slow.claim_pending(2)
        assert len(held) == 2
        assert other.claim_pending(10) == ["d0"]  # the live worker's claims are not touched
        _expire(dsn, slow.worker_key)
        taken = other.claim_pending(10)
        assert sorted(taken) == sorted(held)  # taken over while both workers run, not at a next run's start
        assert sorted(other.taken_over) == sorted(held)
        # the slow worker's commit is fenced: the documents are no longer its own
        assert not any(slow.write(lambda d=d: slow.hold_lease(d)) for d in held)
        assert all(other.write(lambda d=d: other.hold_lease(d)) for d in taken)
        slow.release(held)  # giving back what it lost changes nothing for the new holder
        assert other.status_counts() == {"PROCESSING": 3}
    finally:
        slow.close()
        other.close()


def test_a_live_worker_keeps_its_documents_by_renewing_their_leases(tmp_path, pg_dsn):
    dsn = pg_dsn()
    live = open_store(tmp_path / "live", "postgres", dsn=dsn, lease_s=1.5)
    other = open_store(tmp_path / "other", "postgres", dsn=dsn)
    try:
        live.add_pending(_doc(1), "full", "none")
        assert live.claim_pending(1) == ["d1"]
        time.sleep(4)  # more than twice the lease: only its renewals keep it
        assert other.claim_pending(10) == []
        assert live.write(lambda: live.hold_lease("d1"))
    finally:
        live.close()
        other.close()


def test_a_worker_stopping_gives_back_what_it_holds(tmp_path, pg_dsn):
    dsn = pg_dsn()
    worker = open_store(tmp_path / "w", "postgres", dsn=dsn)
    other = open_store(tmp_path / "other", "postgres", dsn=dsn)
    try:
        for i in range(2):
            worker.add_pending(_doc(i), "full", "none")
        worker.queue_maintenance("resolve", ["e1", "e2"])
        assert len(worker.claim_pending(2)) == 2 and worker.claim_maintenance("resolve", 10) == ["e1", "e2"]
        assert other.claim_maintenance("resolve", 10) == []
        assert worker.release_claims() == ["d0", "d1"]
        assert sorted(other.claim_pending(10)) == ["d0", "d1"]
        assert other.claim_maintenance("resolve", 10) == ["e1", "e2"]
    finally:
        worker.close()
        other.close()


def test_entities_to_resolve_are_shared_in_blocks_and_a_dead_workers_block_is_taken_over(tmp_path, pg_dsn):
    dsn = pg_dsn()
    first = open_store(tmp_path / "first", "postgres", dsn=dsn)
    second = open_store(tmp_path / "second", "postgres", dsn=dsn)
    try:
        first.queue_maintenance("resolve", [f"e{i:02d}" for i in range(10)])
        a, b = first.claim_maintenance("resolve", 4), second.claim_maintenance("resolve", 4)
        assert len(a) == len(b) == 4 and not set(a) & set(b)  # no block done twice
        first.finish_maintenance("resolve", a)
        rest = second.claim_maintenance("resolve", 10)
        assert sorted(set(b) | set(rest)) == sorted(set(first.pending_maintenance("resolve")))
        assert first.claim_maintenance("resolve", 10) == []  # all held by the live second worker
        _expire(dsn, second.worker_key, "maintenance")  # the second worker died without finishing
        assert first.claim_maintenance("resolve", 10) == sorted(set(b) | set(rest))
    finally:
        first.close()
        second.close()


def test_workers_that_finish_together_share_the_rebuild_of_dirty_entities(tmp_path, pg_dsn):
    """Both workers used to rebuild every dirty element at the end of their run, the same ones in the
    same order (waiting on each other's row locks): now each batch goes to one live worker."""
    dsn = pg_dsn()
    first = open_store(tmp_path / "first", "postgres", dsn=dsn)
    second = open_store(tmp_path / "second", "postgres", dsn=dsn)
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("INSERT INTO entities(id, name, dirty, updated_at) "
                         "SELECT 'e' || lpad(i::text, 2, '0'), 'E' || i, TRUE, 0 FROM generate_series(0, 9) i")
        a, b = first.claim_dirty("entities", 4), second.claim_dirty("entities", 4)
        assert len(a) == len(b) == 4 and not set(a) & set(b)
        assert sorted(second.claim_dirty("entities", 10)) == sorted(set(b) | {"e08", "e09"})
        first.write(lambda: first.release_dirty("entities", a))  # rebuilt (still dirty here: nothing stored)
        assert first.claim_dirty("entities", 10) == sorted(a)  # released, and the rest are the second's
        second.release_claims()  # the second stops: what it held is anyone's
        assert first.claim_dirty("entities", 20) == [f"e{i:02d}" for i in range(10)]
    finally:
        first.close()
        second.close()
