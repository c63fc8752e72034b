"""LLM response cache, LLM call log and embedding cache of the SQLite store, written behind.

Every LLM call adds a cache row and a call-log row, every embedded batch a set of cache rows.
Writing each one in its own transaction costs a commit per call on the event loop thread, which
at a concurrency limit of 128 is what keeps the next request from being sent. So rows are held
in memory and written in one go: inside the next transaction the store commits (a document's
commit carries them for free), or on their own once ``FLUSH_ROWS`` are held or the oldest is
``FLUSH_SECONDS`` old (unless another thread is writing: its commit takes them), and always on
``flush_records()``/``close()``.

Lookups (``cache_get``, ``embedding_get``) see held rows and read the database through a
connection of their own, so the event loop never waits for a transaction the indexing
pipeline's writer thread holds open (WAL: readers and the writer do not block each other).

What a crash can lose is at most those few seconds of cache and call-log rows: those calls
would be paid again on the next run; nothing of the graph depends on them.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..models import Usage
from .base import CachedResponse, CallRecord, batches

FLUSH_ROWS = 4096  # ~6 MB of 384-d vectors at most; document commits take them long before
FLUSH_SECONDS = 2.0


@dataclass
class _Rows:
    cache: dict[str, tuple] = field(default_factory=dict)
    calls: list[tuple] = field(default_factory=list)
    embeddings: dict[tuple[str, str], bytes] = field(default_factory=dict)
    since: float = 0.0  # when the first of them was held

    def start_clock(self) -> None:
        if not len(self):
            self.since = time.monotonic()

    def __len__(self) -> int:
        return len(self.cache) + len(self.calls) + len(self.embeddings)

    def absorb(self, newer: _Rows) -> None:
        """Put rows back in front of ``newer`` ones (a commit that failed)."""
        self.cache = {**self.cache, **newer.cache}
        self.calls = self.calls + newer.calls
        self.embeddings = {**self.embeddings, **newer.embeddings}
        self.since = min(self.since, newer.since) if len(newer) else self.since


class LLMRecords:
    conn: sqlite3.Connection
    path: Path
    _lock: threading.RLock

    def _init_records(self) -> None:
        self._records_lock = threading.Lock()
        self._held = _Rows()
        self._writing: _Rows | None = None  # taken by a transaction, not yet committed
        self._reader: sqlite3.Connection | None = None
        self._reader_lock = threading.Lock()

    # -- LLM cache and call log ------------------------------------------------------------

    def cache_get(self, key: str) -> CachedResponse | None:
        with self._records_lock:
            held = self._held.cache.get(key) or (self._writing.cache.get(key) if self._writing else None)
        if held is not None:
            return CachedResponse(held[3], held[4], held[5], bool(held[6]))
        r = self._lookup("SELECT response, prompt_tokens, completion_tokens, estimated FROM llm_cache WHERE key = ?", (key,))
        return CachedResponse(r[0][0], r[0][1], r[0][2], bool(r[0][3])) if r else None

    def cache_put(self, key: str, model: str, purpose: str, response: CachedResponse) -> None:
        row = (key, model, purpose, response.text, response.prompt_tokens, response.completion_tokens,
               int(response.estimated), time.time())
        with self._records_lock:
            self._held.start_clock()
            self._held.cache[key] = row
        self._maybe_flush()

    def log_call(self, record: CallRecord) -> None:
        row = (time.time(), record.purpose, record.model, record.document_id, record.prompt_tokens,
               record.completion_tokens, int(record.estimated), int(record.cached), record.latency_s, record.status)
        with self._records_lock:
            self._held.start_clock()
            self._held.calls.append(row)
        self._maybe_flush()

    def usage_by_purpose(self, document_id: str | None = None) -> dict[str, Usage]:
        self.flush_records()
        where, params = ("WHERE document_id = ?", (document_id,)) if document_id else ("", ())
        rows = self._read(
            f"""SELECT purpose, SUM(1 - cached), SUM(cached), SUM(CASE WHEN cached = 0 THEN prompt_tokens ELSE 0 END),
                   SUM(CASE WHEN cached = 0 THEN completion_tokens ELSE 0 END), SUM(estimated * (1 - cached))
                FROM llm_calls {where} GROUP BY purpose""",
            params,
        )
        return {r[0]: Usage(r[1] or 0, r[2] or 0, r[3] or 0, r[4] or 0, r[5] or 0) for r in rows}

    def usage_by_document(self) -> dict[str, dict[str, Usage]]:
        self.flush_records()
        out: dict[str, dict[str, Usage]] = {}
        rows = self._read(
            """SELECT document_id, purpose, SUM(1 - cached), SUM(cached),
                   SUM(CASE WHEN cached = 0 THEN prompt_tokens ELSE 0 END),
                   SUM(CASE WHEN cached = 0 THEN completion_tokens ELSE 0 END), SUM(estimated * (1 - cached))
               FROM llm_calls WHERE document_id IS NOT NULL GROUP BY document_id, purpose"""
        )
        for r in rows:
            out.setdefault(r[0], {})[r[1]] = Usage(r[2] or 0, r[3] or 0, r[4] or 0, r[5] or 0, r[6] or 0)
        return out

    # -- embedding cache -----------------------------------------------------------------

    def embedding_get(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        missing = []
        with self._records_lock:
            pending = [self._held.embeddings] + ([self._writing.embeddings] if self._writing else [])
            for h in dict.fromkeys(hashes):
                blob = next((p[(model, h)] for p in pending if (model, h) in p), None)
                if blob is not None:
                    out[h] = np.frombuffer(blob, dtype=np.float32)
                else:
                    missing.append(h)
        for part in batches(missing):
            rows = self._lookup(
                f"SELECT hash, vector FROM embedding_cache WHERE model = ? AND hash IN ({','.join('?' * len(part))})",
                [model, *part],
            )
            out.update({r[0]: np.frombuffer(r[1], dtype=np.float32) for r in rows})
        return out

    def embedding_put(self, model: str, items: dict[str, np.ndarray]) -> None:
        blobs = {(model, h): np.asarray(v, dtype=np.float32).tobytes() for h, v in items.items()}
        with self._records_lock:
            self._held.start_clock()
            self._held.embeddings.update(blobs)
        self._maybe_flush()

    # -- writing held rows -------------------------------------------------------------------

    def flush_records(self) -> None:
        """Write every held row now (in a transaction of its own unless one is open)."""
        with self._lock:
            if len(self._held):
                with self.transaction():  # type: ignore[attr-defined]  # commits the held rows
                    pass

    def _maybe_flush(self) -> None:
        with self._records_lock:
            held = len(self._held)
            due = held >= FLUSH_ROWS or (held > 0 and time.monotonic() - self._held.since >= FLUSH_SECONDS)
        if due and self._lock.acquire(blocking=False):  # another thread writing: its commit takes them
            try:
                self.flush_records()
            finally:
                self._lock.release()

    def _write_held(self, conn: sqlite3.Connection) -> None:
        """Called by the store inside each outermost transaction, just before COMMIT."""
        with self._records_lock:
            if not len(self._held):
                return
            rows, self._held = self._held, _Rows()
            self._writing = rows
        conn.executemany(
            """INSERT OR REPLACE INTO llm_cache(key, model, purpose, response, prompt_tokens, completion_tokens, estimated,
                   created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
            list(rows.cache.values()),
        )
        conn.executemany(
            """INSERT INTO llm_calls(ts, purpose, model, document_id, prompt_tokens, completion_tokens, estimated, cached,
                   latency_s, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            rows.calls,
        )
        conn.executemany(
            "INSERT OR REPLACE INTO embedding_cache(model, hash, vector) VALUES (?, ?, ?)",
            [(model, h, blob) for (model, h), blob in rows.embeddings.items()],
        )

    def _end_write(self, committed: bool) -> None:
        """Called by the store after the transaction that took the held rows ends."""
        with self._records_lock:
            if self._writing is not None and not committed:
                self._writing.absorb(self._held)
                self._held = self._writing
            self._writing = None

    # -- reading -------------------------------------------------------------------------------

    def _read(self, sql: str, params: Sequence = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self.conn.execute(sql, params).fetchall()

    def _lookup(self, sql: str, params: Sequence = ()) -> list[tuple]:
        """A read on the lookup connection: never waits for the store's write lock."""
        with self._reader_lock:
            if self._reader is None:
                self._reader = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
            return self._reader.execute(sql, params).fetchall()

    def _close_records(self) -> None:
        with self._reader_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None
