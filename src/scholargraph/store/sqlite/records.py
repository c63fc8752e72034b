"""LLM response cache, LLM call log and embedding cache of a SQLite workspace: their own file
(``llm.sqlite``) with its own writer thread, so they never wait for, nor delay, a graph commit.

Every LLM call adds a cache row and a call-log row, every embedded batch a set of cache rows.
They are produced on the event loop, which must never wait for a disk write: rows are held in
memory (visible to lookups at once) and written by the file's writer thread in one transaction,
once ``FLUSH_ROWS`` are held or the oldest is ``FLUSH_SECONDS`` old, whenever the writer has been
idle ``FLUSH_SECONDS``, and always on ``flush_records()``/``close()``. The event loop only appends
to a dict and, at most, puts one item on the writer's queue.

What a crash can lose is at most those few seconds of rows: those calls would be paid again on
the next run; nothing of the graph depends on them.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...errors import WorkspaceError
from ...models import Usage
from ..base import EMBEDDING_BATCH, FAILED_ATTEMPT_SQL, LLM_CALL_SQL, CachedResponse, CallRecord, batches
from .schema import migrate_records
from .writer import Readers, Writer, connect

RECORDS_DB_NAME = "llm.sqlite"
FLUSH_ROWS = 4096  # ~6 MB of 384-d vectors at most
FLUSH_SECONDS = 2.0
TABLES = ("llm_cache", "llm_calls", "embedding_cache")
# answered calls, cache hits, their tokens, estimated calls, failed attempts (see llm/accounting.py)
_USAGE = f"""SELECT {{group}}, SUM(CASE WHEN cached = 0 AND NOT {FAILED_ATTEMPT_SQL} THEN 1 ELSE 0 END), SUM(cached),
                SUM(CASE WHEN cached = 0 THEN prompt_tokens ELSE 0 END),
                SUM(CASE WHEN cached = 0 THEN completion_tokens ELSE 0 END), SUM(estimated * (1 - cached)),
                SUM(CASE WHEN {FAILED_ATTEMPT_SQL} THEN 1 ELSE 0 END)
             FROM llm_calls {{where}} GROUP BY {{group}}"""


def _usage(row: Sequence) -> Usage:
    return Usage(*(int(v or 0) for v in row))


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
        """Put rows back in front of ``newer`` ones (a write that failed)."""
        self.cache = {**self.cache, **newer.cache}
        self.calls = self.calls + newer.calls
        self.embeddings = {**self.embeddings, **newer.embeddings}
        self.since = min(self.since, newer.since) if len(newer) else self.since


class SQLiteRecords:
    """The LLM cache, call log and embedding cache (``LLMCache``, ``CallLog``, ``EmbeddingCache``)."""

    def __init__(self, workdir: Path):
        self.path = Path(workdir) / RECORDS_DB_NAME
        try:
            conn = connect(self.path)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            migrate_records(conn, str(self.path))
        except sqlite3.DatabaseError as exc:
            raise WorkspaceError(f"{self.path} is not a usable scholargraph cache database: {exc}") from exc
        self._lock = threading.Lock()
        self._held = _Rows()
        self._writing: _Rows | None = None  # taken by the writer, not yet committed
        self._flush_queued = False
        self._writer = Writer(conn, "records", after=self._written, tick=self._due_work, tick_seconds=FLUSH_SECONDS)
        self._readers = Readers(self.path)

    def import_from(self, old_db: Path) -> None:
        """Copy the cache and call-log tables of a workspace made before they had their own file
        (idempotent: an interrupted migration is simply done again)."""
        conn = self._writer.conn
        conn.execute("ATTACH DATABASE ? AS old", (str(old_db),))
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("""INSERT OR REPLACE INTO llm_cache(key, model, purpose, response, prompt_tokens,
                                completion_tokens, estimated, created_at)
                            SELECT key, model, purpose, response, prompt_tokens, completion_tokens, estimated,
                                created_at FROM old.llm_cache""")
            conn.execute("""INSERT OR REPLACE INTO llm_calls(id, ts, purpose, model, document_id, prompt_tokens,
                                completion_tokens, estimated, cached, latency_s, status)
                            SELECT id, ts, purpose, model, document_id, prompt_tokens, completion_tokens, estimated,
                                cached, latency_s, status FROM old.llm_calls""")
            conn.execute("""INSERT OR REPLACE INTO embedding_cache(model, hash, vector)
                            SELECT model, hash, vector FROM old.embedding_cache""")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        finally:
            conn.execute("DETACH DATABASE old")

    # -- LLM cache and call log ------------------------------------------------------------

    def cache_get(self, key: str) -> CachedResponse | None:
        with self._lock:
            held = self._held.cache.get(key) or (self._writing.cache.get(key) if self._writing else None)
        if held is not None:
            return CachedResponse(held[3], held[4], held[5], bool(held[6]))
        r = self._read("SELECT response, prompt_tokens, completion_tokens, estimated FROM llm_cache WHERE key = ?", (key,))
        return CachedResponse(r[0][0], r[0][1], r[0][2], bool(r[0][3])) if r else None

    def cache_put(self, key: str, model: str, purpose: str, response: CachedResponse) -> None:
        row = (key, model, purpose, response.text, response.prompt_tokens, response.completion_tokens,
               int(response.estimated), time.time())
        with self._lock:
            self._held.start_clock()
            self._held.cache[key] = row
        self._held_more()

    def log_call(self, record: CallRecord) -> None:
        row = (time.time(), record.purpose, record.model, record.document_id, record.prompt_tokens,
               record.completion_tokens, int(record.estimated), int(record.cached), record.latency_s, record.status,
               record.endpoint)
        with self._lock:
            self._held.start_clock()
            self._held.calls.append(row)
        self._held_more()

    def usage_by_purpose(self, document_id: str | None = None) -> dict[str, Usage]:
        self.flush_records()
        where, params = (f"WHERE document_id = ? AND {LLM_CALL_SQL}", (document_id,)) if document_id else (f"WHERE {LLM_CALL_SQL}", ())
        rows = self._read(
            _USAGE.format(group="purpose", where=where),
            params,
        )
        return {r[0]: _usage(r[1:]) for r in rows}

    def usage_by_document(self) -> dict[str, dict[str, Usage]]:
        self.flush_records()
        out: dict[str, dict[str, Usage]] = {}
        rows = self._read(_USAGE.format(group="document_id, purpose", where=f"WHERE document_id IS NOT NULL AND {LLM_CALL_SQL}"))
        for r in rows:
            out.setdefault(r[0], {})[r[1]] = _usage(r[2:])
        return out

    def usage_by_endpoint(self) -> dict[str, Usage]:
        self.flush_records()
        rows = self._read(_USAGE.format(group="endpoint", where=f"WHERE endpoint IS NOT NULL AND {LLM_CALL_SQL}"))
        return {r[0]: _usage(r[1:]) for r in rows}

    def embedding_usage_by_endpoint(self) -> dict[str, Usage]:
        self.flush_records()
        rows = self._read(_USAGE.format(group="endpoint", where=f"WHERE endpoint IS NOT NULL AND purpose = '{EMBEDDING_BATCH}'"))
        return {r[0]: _usage(r[1:]) for r in rows}

    def count(self, table: str) -> int:
        if table not in TABLES:
            raise ValueError(table)
        self.flush_records()
        return int(self._read(f"SELECT COUNT(*) FROM {table}")[0][0])

    # -- embedding cache -----------------------------------------------------------------

    def embedding_get(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        missing = []
        with self._lock:
            pending = [self._held.embeddings] + ([self._writing.embeddings] if self._writing else [])
            for h in dict.fromkeys(hashes):
                blob = next((p[(model, h)] for p in pending if (model, h) in p), None)
                if blob is not None:
                    out[h] = np.frombuffer(blob, dtype=np.float32)
                else:
                    missing.append(h)
        for part in batches(missing):
            rows = self._read(
                f"SELECT hash, vector FROM embedding_cache WHERE model = ? AND hash IN ({','.join('?' * len(part))})",
                [model, *part],
            )
            out.update({r[0]: np.frombuffer(r[1], dtype=np.float32) for r in rows})
        return out

    def embedding_put(self, model: str, items: dict[str, np.ndarray]) -> None:
        blobs = {(model, h): np.asarray(v, dtype=np.float32).tobytes() for h, v in items.items()}
        with self._lock:
            self._held.start_clock()
            self._held.embeddings.update(blobs)
        self._held_more()

    # -- writing held rows (the writer thread) -----------------------------------------------

    def flush_records(self) -> None:
        """Write every held row now and wait for it."""
        with self._lock:
            if not len(self._held) and self._writing is None:
                return
        self._writer.write(self._write_held)

    def _held_more(self) -> None:
        """After a put: hand the writer a flush when one is due (never writes on this thread)."""
        with self._lock:
            held = len(self._held)
            due = held >= FLUSH_ROWS or (held > 0 and time.monotonic() - self._held.since >= FLUSH_SECONDS)
            if due:
                if self._flush_queued:
                    return
                self._flush_queued = True
        if due:
            self._writer.submit(self._write_held)
        else:
            self._writer.start()  # its idle tick writes the rows that wait too long

    def _due_work(self):
        with self._lock:
            return self._write_held if len(self._held) else None

    def _write_held(self) -> None:
        conn = self._writer.conn
        with self._lock:
            self._flush_queued = False
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
                   latency_s, status, endpoint) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            rows.calls,
        )
        conn.executemany(
            "INSERT OR REPLACE INTO embedding_cache(model, hash, vector) VALUES (?, ?, ?)",
            [(model, h, blob) for (model, h), blob in rows.embeddings.items()],
        )

    def _written(self, committed: bool) -> None:
        with self._lock:
            if self._writing is not None and not committed:
                self._writing.absorb(self._held)
                self._held = self._writing
            self._writing = None

    # -- reading ---------------------------------------------------------------------------

    def _read(self, sql: str, params: Sequence = ()) -> list[sqlite3.Row]:
        return self._readers.get().execute(sql, params).fetchall()

    def close(self) -> None:
        try:
            self.flush_records()
        finally:
            self._writer.close()
            self._readers.close()
