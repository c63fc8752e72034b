"""LLM response cache, call log and embedding cache of the PostgreSQL store.

Rows are produced on the event loop, which must never wait for the database: they are held in
memory (visible to lookups at once) and written by one background thread, on its own connection,
in one transaction per batch: when ``FLUSH_ROWS`` are held, every ``FLUSH_SECONDS``, and on
``flush_records()``/``close()``. A crash loses at most those seconds of rows (those calls are paid
again on the next run); the graph never depends on them. Several workers share the cache: a
response one of them paid for is a cache hit for the others.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import psycopg

from ...models import Usage
from ..base import EMBEDDING_BATCH, FAILED_ATTEMPT_SQL, LLM_CALL_SQL, CachedResponse, CallRecord

FLUSH_ROWS = 4096
FLUSH_SECONDS = 2.0


class PostgresRecords:
    """``LLMCache``, ``CallLog`` and ``EmbeddingCache`` on PostgreSQL, written behind."""

    def __init__(self, open_conn: Callable[[], psycopg.Connection], pool: Any):
        self._open = open_conn
        self._pool = pool
        self._conn: psycopg.Connection | None = None
        self._lock = threading.Lock()
        self._cache: dict[str, tuple] = {}
        self._calls: list[tuple] = []
        self._embeddings: dict[tuple[str, str], bytes] = {}
        self._writing: tuple[dict, list, dict] | None = None
        self._wake = threading.Event()
        self._flushed = threading.Condition(self._lock)
        self._generation = 0  # batches written so far
        self._closed = False
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None

    # -- LLM cache and call log ------------------------------------------------------------

    def cache_get(self, key: str) -> CachedResponse | None:
        with self._lock:
            held = self._cache.get(key) or (self._writing[0].get(key) if self._writing else None)
        if held is not None:
            return CachedResponse(held[3], held[4], held[5], bool(held[6]))
        rows = self._read("SELECT response, prompt_tokens, completion_tokens, estimated FROM llm_cache WHERE key = %s",
                          (key,))
        return CachedResponse(rows[0][0], rows[0][1], rows[0][2], bool(rows[0][3])) if rows else None

    def cache_put(self, key: str, model: str, purpose: str, response: CachedResponse) -> None:
        row = (key, model, purpose, response.text, response.prompt_tokens, response.completion_tokens,
               bool(response.estimated), time.time())
        with self._lock:
            self._cache[key] = row
        self._held_more()

    def log_call(self, record: CallRecord) -> None:
        row = (time.time(), record.purpose, record.model, record.document_id, record.prompt_tokens,
               record.completion_tokens, bool(record.estimated), bool(record.cached), record.latency_s, record.status,
               record.endpoint)
        with self._lock:
            self._calls.append(row)
        self._held_more()

    # answered calls, cache hits, their tokens, estimated calls, failed attempts (see llm/accounting.py)
    _USAGE = f"""SELECT {{group}}, count(*) FILTER (WHERE NOT cached AND NOT {FAILED_ATTEMPT_SQL}),
                   count(*) FILTER (WHERE cached),
                   coalesce(sum(prompt_tokens) FILTER (WHERE NOT cached), 0),
                   coalesce(sum(completion_tokens) FILTER (WHERE NOT cached), 0),
                   count(*) FILTER (WHERE estimated AND NOT cached), count(*) FILTER (WHERE {FAILED_ATTEMPT_SQL})
                FROM llm_calls {{where}} GROUP BY {{group}}"""

    def usage_by_purpose(self, document_id: str | None = None) -> dict[str, Usage]:
        self.flush_records()
        where, params = (f"WHERE document_id = %s AND {LLM_CALL_SQL}", (document_id,)) if document_id else (f"WHERE {LLM_CALL_SQL}", None)
        rows = self._read(self._USAGE.format(group="purpose", where=where), params)
        return {r[0]: Usage(*(int(v) for v in r[1:])) for r in rows}

    def usage_by_document(self) -> dict[str, dict[str, Usage]]:
        self.flush_records()
        out: dict[str, dict[str, Usage]] = {}
        rows = self._read(self._USAGE.format(group="document_id, purpose", where=f"WHERE document_id IS NOT NULL AND {LLM_CALL_SQL}"))
        for r in rows:
            out.setdefault(r[0], {})[r[1]] = Usage(*(int(v) for v in r[2:]))
        return out

    def usage_by_endpoint(self) -> dict[str, Usage]:
        self.flush_records()
        rows = self._read(self._USAGE.format(group="endpoint", where=f"WHERE endpoint IS NOT NULL AND {LLM_CALL_SQL}"))
        return {r[0]: Usage(*(int(v) for v in r[1:])) for r in rows}

    def embedding_usage_by_endpoint(self) -> dict[str, Usage]:
        self.flush_records()
        rows = self._read(self._USAGE.format(group="endpoint", where=f"WHERE endpoint IS NOT NULL AND purpose = '{EMBEDDING_BATCH}'"))
        return {r[0]: Usage(*(int(v) for v in r[1:])) for r in rows}

    # -- embedding cache -----------------------------------------------------------------

    def embedding_get(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        missing = []
        with self._lock:
            pending = [self._embeddings] + ([self._writing[2]] if self._writing else [])
            for h in dict.fromkeys(hashes):
                blob = next((p[(model, h)] for p in pending if (model, h) in p), None)
                if blob is not None:
                    out[h] = np.frombuffer(blob, dtype=np.float32)
                else:
                    missing.append(h)
        if missing:
            rows = self._read("SELECT hash, vector FROM embedding_cache WHERE model = %s AND hash = ANY(%s)",
                              (model, missing))
            out.update({r[0]: np.frombuffer(bytes(r[1]), dtype=np.float32) for r in rows})
        return out

    def embedding_put(self, model: str, items: dict[str, np.ndarray]) -> None:
        blobs = {(model, h): np.asarray(v, dtype=np.float32).tobytes() for h, v in items.items()}
        with self._lock:
            self._embeddings.update(blobs)
        self._held_more()

    # -- writing held rows (the records thread) ----------------------------------------------

    def _held(self) -> int:
        return len(self._cache) + len(self._calls) + len(self._embeddings)

    def _held_more(self) -> None:
        with self._lock:
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(target=self._loop, name="scholargraph-postgres-records", daemon=True)
                self._thread.start()
            due = self._held() >= FLUSH_ROWS
        if due:
            self._wake.set()

    def flush_records(self) -> None:
        """Write every held row now and wait for it."""
        with self._lock:
            if not self._held() and self._writing is None:
                return
            if self._thread is None or not self._thread.is_alive():
                self._write_held_locked_out()
                return
            target = self._generation + (2 if self._writing is not None else 1)
            self._wake.set()
            while self._generation < target and self._thread.is_alive():
                self._flushed.wait(1.0)
            error, self._error = self._error, None
        if error is not None:
            raise error

    def _write_held_locked_out(self) -> None:
        """Write on the calling thread (no records thread: closing, or never started); lock held."""
        self._lock.release()
        try:
            self._write_batch()
        finally:
            self._lock.acquire()

    def _loop(self) -> None:
        while True:
            self._wake.wait(FLUSH_SECONDS)
            self._wake.clear()
            try:
                self._write_batch()
            except Exception as exc:  # noqa: BLE001 - the rows are kept; the next batch retries
                with self._lock:
                    self._error = exc
            with self._lock:
                self._generation += 1
                self._flushed.notify_all()
                if self._closed and not self._held():
                    return

    def _write_batch(self) -> None:
        with self._lock:
            if not self._held():
                return
            batch = (self._cache, self._calls, self._embeddings)
            self._cache, self._calls, self._embeddings = {}, [], {}
            self._writing = batch
        try:
            conn = self._connection()
            with conn.transaction(), conn.cursor() as cur:
                cur.executemany(
                    """INSERT INTO llm_cache(key, model, purpose, response, prompt_tokens, completion_tokens, estimated,
                           created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
                       ON CONFLICT (key) DO UPDATE SET response = excluded.response, model = excluded.model,
                           purpose = excluded.purpose, prompt_tokens = excluded.prompt_tokens,
                           completion_tokens = excluded.completion_tokens, estimated = excluded.estimated""",
                    [batch[0][k] for k in sorted(batch[0])])
                cur.executemany(
                    """INSERT INTO llm_calls(ts, purpose, model, document_id, prompt_tokens, completion_tokens, estimated,
                           cached, latency_s, status, endpoint)
                       VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""", batch[1])
                cur.executemany(
                    "INSERT INTO embedding_cache(model, hash, vector) VALUES (%s, %s, %s) "
                    "ON CONFLICT (model, hash) DO NOTHING",
                    [(m, h, blob) for (m, h), blob in sorted(batch[2].items())])
        except BaseException:
            with self._lock:  # put them back in front of newer rows
                self._cache = {**batch[0], **self._cache}
                self._calls = batch[1] + self._calls
                self._embeddings = {**batch[2], **self._embeddings}
            raise
        finally:
            with self._lock:
                self._writing = None

    def _connection(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = self._open()
        return self._conn

    def _read(self, sql: str, params: Sequence | None = None) -> list:
        with self._pool.connection() as conn:
            return conn.execute(sql, params).fetchall()

    def close(self) -> None:
        try:
            self.flush_records()
        finally:
            with self._lock:
                self._closed = True
                thread = self._thread
            self._wake.set()
            if thread is not None:
                thread.join(10)
            if self._conn is not None:
                self._conn.close()
