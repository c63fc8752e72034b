"""Leases of the documents and maintenance rows a PostgreSQL worker has claimed.

A claim gives the row a lease, ``lease_until`` on the database's clock (the workers' clocks never
matter), which :class:`Heartbeat` renews every third of the lease from a thread of its own on a
connection of its own, for as long as the worker's store is open. A worker that stops renewing
(killed, its machine lost, frozen) loses its documents to the next worker that claims: its
expired leases are claimed like PENDING documents (``FOR UPDATE SKIP LOCKED``). Each claim adds
one to the document's ``lease_token``; the commit of a document checks, with the row locked, that
the token is still the one its worker claimed, so a worker that was only slow commits nothing
twice (``HELD_SQL``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import psycopg

log = logging.getLogger(__name__)

DEFAULT_LEASE_S = 60.0
NOW = "extract(epoch from clock_timestamp())"  # the database's clock, the same for every worker

# documents whose worker stopped renewing their lease, taken over (largest first, like PENDING ones)
TAKE_OVER_SQL = f"""
UPDATE documents d SET claimed_by = %(key)s, lease_token = d.lease_token + 1, lease_until = {NOW} + %(lease)s,
       updated_at = %(now)s
FROM (SELECT id FROM documents WHERE status = 'PROCESSING' AND lease_until < {NOW}
          AND (%(only)s::text[] IS NULL OR id = ANY(%(only)s))
      ORDER BY size DESC, id LIMIT %(limit)s FOR UPDATE SKIP LOCKED) c
WHERE d.id = c.id RETURNING d.id, d.size, d.lease_token"""

CLAIM_SQL = f"""
UPDATE documents d SET status = 'PROCESSING', claimed_by = %(key)s, lease_token = d.lease_token + 1,
       lease_until = {NOW} + %(lease)s, updated_at = %(now)s
FROM (SELECT id FROM documents WHERE status = 'PENDING' AND (%(only)s::text[] IS NULL OR id = ANY(%(only)s))
      ORDER BY size DESC, id LIMIT %(limit)s FOR UPDATE SKIP LOCKED) c
WHERE d.id = c.id RETURNING d.id, d.size, d.lease_token"""

# the row stays locked until the commit: no other worker can take it over meanwhile
HELD_SQL = ("SELECT 1 FROM documents WHERE id = %s AND status = 'PROCESSING' AND claimed_by = %s "
            "AND lease_token = %s FOR UPDATE")

CLAIM_MAINTENANCE_SQL = f"""
UPDATE maintenance m SET claimed_by = %(key)s, lease_until = {NOW} + %(lease)s
FROM (SELECT task, id FROM maintenance
      WHERE task = %(task)s AND (claimed_by IS NULL OR claimed_by = %(key)s OR lease_until < {NOW})
      ORDER BY id LIMIT %(limit)s FOR UPDATE SKIP LOCKED) c
WHERE m.task = c.task AND m.id = c.id RETURNING m.id"""

# dirty graph elements a worker rebuilds, claimed as maintenance rows ('rebuild:<table>') that no other live
# worker holds: two workers that finish at once share the rebuild instead of both doing all of it
CLAIM_DIRTY_SQL = f"""
WITH candidates AS (
    SELECT g.id FROM {{table}} g WHERE g.dirty AND NOT EXISTS (
        SELECT 1 FROM maintenance m WHERE m.task = %(task)s AND m.id = g.id AND m.claimed_by <> %(key)s
            AND m.lease_until >= {NOW})
    ORDER BY g.id LIMIT %(limit)s)
INSERT INTO maintenance(task, id, queued_at, claimed_by, lease_until)
SELECT %(task)s, id, %(now)s, %(key)s, {NOW} + %(lease)s FROM candidates
ON CONFLICT (task, id) DO UPDATE SET claimed_by = excluded.claimed_by, lease_until = excluded.lease_until
    WHERE maintenance.claimed_by = excluded.claimed_by OR maintenance.claimed_by IS NULL
       OR maintenance.lease_until < {NOW}
RETURNING id"""

RELEASE_MINE_SQL = ("UPDATE documents SET status = 'PENDING', claimed_by = NULL, lease_until = NULL, updated_at = %s "
                    "WHERE status = 'PROCESSING' AND claimed_by = %s RETURNING id")
RELEASE_REBUILDS_SQL = "DELETE FROM maintenance WHERE claimed_by = %s AND task LIKE 'rebuild:%%'"
RELEASE_MAINTENANCE_SQL = "UPDATE maintenance SET claimed_by = NULL, lease_until = NULL WHERE claimed_by = %s"
EXPIRED_SQL = f"SELECT id FROM documents WHERE status = 'PROCESSING' AND lease_until < {NOW}"


class Heartbeat:
    """Renews the leases of one worker (``key``) every ``lease_s / 3`` seconds until stopped."""

    def __init__(self, connect: Callable[[], psycopg.Connection], key: int, lease_s: float):
        self._connect, self.key, self.lease_s = connect, key, float(lease_s)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(target=self._run, name="scholargraph-leases", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        conn: psycopg.Connection | None = None
        while not self._stop.wait(self.lease_s / 3):
            try:
                if conn is None or conn.closed or conn.broken:
                    conn = self._connect()
                self.renew(conn)
            except psycopg.Error as exc:  # the next beat tries again on a new connection
                log.warning("could not renew this worker's leases: %s", exc)
                if conn is not None:
                    conn.close()
                conn = None
        if conn is not None:
            conn.close()

    def renew(self, conn: psycopg.Connection) -> None:
        """One beat: every lease this worker holds runs ``lease_s`` from now (``conn`` in autocommit)."""
        conn.execute(f"UPDATE documents SET lease_until = {NOW} + %s WHERE status = 'PROCESSING' AND claimed_by = %s",
                     (self.lease_s, self.key))
        conn.execute(f"UPDATE maintenance SET lease_until = {NOW} + %s WHERE claimed_by = %s", (self.lease_s, self.key))

    def stop(self) -> None:
        with self._lock:
            self._stop.set()
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=10)
