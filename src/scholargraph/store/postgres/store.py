"""The PostgreSQL + pgvector store, for knowledge bases shared by people, processes and machines.

Selected with ``store.backend = "postgres"`` and ``store.dsn`` (or ``--db postgresql://...``). The
schema is created and migrated by the tool (:mod:`.schema`); the database needs the
pgvector extension (``CREATE EXTENSION vector``).

Concurrency model
-----------------
* Units of work are transactions: ``store.write(work)`` runs ``work()`` in one transaction on the
  process's writer connection (one writer thread, :class:`~.conn.UnitsOfWork`); a unit
  of work that deadlocks with another worker's is rolled back and run again.
* Reads use pooled connections (psycopg_pool) in autocommit mode and see the last commit.
* Several indexing processes, on one machine or many, share a database: each claims PENDING
  documents with ``FOR UPDATE SKIP LOCKED`` and marks them with its worker key and a lease that a
  thread of the worker renews (:mod:`.leases`). A worker that stops renewing (``kill -9``,
  a lost machine, a frozen process) loses its documents to the next claim of any running worker
  once the leases run out; a lease token checked at commit keeps a worker that was only slow from
  committing a document another one took over. The worker also holds a session advisory lock on
  its key for as long as its store is open, so a run that starts after a worker died puts that
  worker's documents back to PENDING at once (``reset_stale_processing``). The indexing lock only
  keeps two runs of one process apart.
* Communities are computed by one worker at a time (``communities_lock``: a session advisory lock
  per schema); a worker that finishes while others still index leaves them to the last one. The
  entities to resolve are claimed in blocks by every worker that has finished its documents
  (``claim_maintenance``), and merges take turns (``lock_merges``).
* The LLM cache, call log and embedding cache are tables of the same database, written behind
  by their own thread and connection (:mod:`.records`): the event loop never waits for
  them and they never hold a graph transaction open.
* Vectors: one table per namespace, searched in the database; a namespace gets its HNSW index
  (cosine) when it reaches ``hnsw_min_rows`` vectors (exact scans below: inserts stay cheap).
"""

from __future__ import annotations

import functools
import json
import secrets
import threading
import time
from collections.abc import Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from ...errors import WorkspaceError
from ...models import Chunk, ChunkFailure, DocStatus, Document
from ...text.lexical import query_terms_lexical
from ..analysis_role import Citations, Communities, KeepsAnalysis
from ..base import COUNTABLE, GraphKind, MaintenanceTask, read_content_version
from ..documents_role import DocumentReads, KeepsDocumentReads
from ..facts_role import KeepsFacts, Meta, Sessions
from ..graph_role import KeepsGraph
from ..mentions_role import KeepsMentions, Mentions
from ..records_role import KeepsRecords
from ..units import RunsUnitsOfWork, SqlSeam
from . import lexical
from .conn import UnitsOfWork, connect, cursor_over, redacted, register_vector
from .graph import PostgresGraph
from .leases import (
    CLAIM_DIRTY_SQL,
    CLAIM_MAINTENANCE_SQL,
    CLAIM_SQL,
    DEFAULT_LEASE_S,
    EXPIRED_SQL,
    HELD_SQL,
    RELEASE_MAINTENANCE_SQL,
    RELEASE_MINE_SQL,
    RELEASE_REBUILDS_SQL,
    TAKE_OVER_SQL,
    Heartbeat,
)
from .records import PostgresRecords
from .schema import (
    HNSW_MIN_ROWS,
    NAMESPACES,
    ddl_lock,
    ensure_extension,
    migrate,
    vector_index_ddl,
    vector_table,
    vector_tables_ddl,
)
from .vectors import EF_SEARCH_DEFAULT, PgVectorIndex, normalised

T = TypeVar("T")
DEFAULT_POOL_SIZE = 8
# The namespaces a rebuild of dirty elements writes, and the table of those elements.
REBUILT_NAMESPACES = {"entity": "entities", "relation": "relations"}
REBUILD_SHARE = 4  # an indexed namespace is set aside when a rebuild rewrites at least a quarter of it
INDEX_ASIDE = "vector_index_aside:"  # meta key prefix: the namespace's HNSW index waits for a rebuild's end
ASIDE = -2  # ``_rows_seen``: the namespace's index is set aside (not counted, not built by a put)
CONNECT_TIMEOUT_S = 10
_CHUNK_COLUMNS = "id, document_id, ordinal, text, tokens, section, char_start, char_end, page_start, page_end, header"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


class _RunLock:
    """One indexing run at a time per store (process); other processes and machines are never
    excluded: PostgreSQL workers share the database through ``claim_pending``."""

    def __init__(self, lock: threading.Lock):
        self._lock = lock
        self._held = False

    def acquire(self, blocking: bool = False) -> bool:
        if self._held:
            raise RuntimeError("this indexing lock is already held")
        self._held = self._lock.acquire(blocking=blocking)
        return self._held

    def release(self) -> None:
        if self._held:
            self._held = False
            self._lock.release()

    def holder(self) -> str:
        return "another indexing run of this process"


class _DatabaseLock:
    """A session advisory lock of the whole database (every worker, every machine), held on its own
    connection: PostgreSQL drops it when that connection ends, however the worker ends."""

    def __init__(self, dsn: str, name: str):
        self._dsn, self._name = dsn, name
        self._conn: psycopg.Connection | None = None

    def acquire(self, blocking: bool = False) -> bool:
        if self._conn is not None:
            raise RuntimeError(f"the {self._name} lock is already held")
        conn = connect(self._dsn, connect_timeout=CONNECT_TIMEOUT_S)
        fn = "pg_advisory_lock" if blocking else "pg_try_advisory_lock"
        # per schema: several knowledge bases in one database do not wait for one another
        row = conn.execute(f"SELECT {fn}(hashtextextended(%s || current_schema(), 0))",
                           (f"scholargraph-{self._name}:",)).fetchone()
        if not blocking and not (row and row[0]):
            conn.close()
            return False
        self._conn = conn
        return True

    def release(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            conn.close()  # ends the session: the lock goes with it

    def holder(self) -> str:
        return f"another worker updating the {self._name}"


class PostgresStore(RunsUnitsOfWork, KeepsRecords, KeepsGraph, KeepsMentions, KeepsAnalysis, KeepsFacts,
                    KeepsDocumentReads):
    """Implements :class:`~scholargraph.store.base.Store` on PostgreSQL (see the module docstring)."""

    units: UnitsOfWork  # runs the units of work (RunsUnitsOfWork answers ``Writes`` from it)
    graph: PostgresGraph  # entities, relations, keywords and their provenance (KeepsGraph answers from it)
    records: PostgresRecords  # the LLM cache, call log and embedding cache (KeepsRecords answers from it)

    def __init__(self, workdir: Path, dsn: str, *, create: bool = True, pool_size: int = DEFAULT_POOL_SIZE,
                 hnsw_min_rows: int = HNSW_MIN_ROWS, ef_search: int = EF_SEARCH_DEFAULT,
                 lease_s: float = DEFAULT_LEASE_S, lexical_common_rows: int = lexical.COMMON_ROWS):
        self.workdir = Path(workdir)
        self.dsn = dsn
        self.where = redacted(dsn)
        self.ef_search = int(ef_search)  # set on every connection; larger k raises it per query
        try:
            conn = connect(dsn, connect_timeout=CONNECT_TIMEOUT_S)
        except psycopg.Error as exc:
            raise WorkspaceError(f"cannot connect to PostgreSQL at {self.where}: {str(exc).strip()}") from exc
        try:
            ensure_extension(conn, self.where)
            migrate(conn, self.where, create=create)
            if lexical.needs_rebuild(conn):  # new or upgraded database, or a new tokenisation
                lexical.rebuild(conn)
        except psycopg.Error as exc:
            raise WorkspaceError(f"cannot prepare the scholargraph schema in {self.where}: {exc}") from exc
        finally:
            conn.close()
        if create:
            self.workdir.mkdir(parents=True, exist_ok=True)  # settings (scholargraph.toml) live there
        self.pool = ConnectionPool(dsn, min_size=1, max_size=max(2, pool_size), open=True, configure=self._configure,
                                   kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S},
                                   name="scholargraph")
        self.units = UnitsOfWork(self._open_writer, after=self._after_work)
        self.records = PostgresRecords(self._open_writer, self.pool)
        sql = SqlSeam("%s", self._rows, self._exec, self._many, self.write, arrays=True, ordered=True,
                      take_turns=lambda name: self._exec(
                          "SELECT pg_advisory_xact_lock(hashtextextended('scholargraph-' || %s, 0))", (name,)))
        self.graph = PostgresGraph(self._rows, self._exec, self._many, self.write)
        self.mentions = Mentions(sql, self.get_entities, self.get_relations)
        self.communities, self.citations = Communities(sql), Citations(sql)
        self.meta, self.sessions = Meta(sql), Sessions(sql)
        self.documents = DocumentReads(sql)
        self.worker_key = secrets.randbits(62)
        self.lease_s = float(lease_s)
        self._heartbeat = Heartbeat(self._open_writer, self.worker_key, self.lease_s)
        self._tokens: dict[str, int] = {}  # claimed document -> its lease token (checked at commit)
        self.taken_over: list[str] = []  # documents this worker took over from one whose lease ran out
        self._liveness: psycopg.Connection | None = None
        self._liveness_lock = threading.Lock()
        self._dim: int | None = None
        self._run_lock = threading.Lock()
        self.hnsw_min_rows = hnsw_min_rows
        self._rows_seen: dict[str, int] = {}  # namespace -> vectors (at least) while it has no HNSW index
        self.lexical_common_rows = int(lexical_common_rows)  # a term in more chunks picks no passages
        self._term_statistics = lexical.TermStatistics()

    def _after_work(self, committed: bool) -> None:
        if not committed:
            self._dim = None  # vector tables made by the rolled-back work do not exist
            self._rows_seen.clear()

    def _configure(self, conn: psycopg.Connection) -> None:
        register_vector(conn)
        conn.execute(f"SET hnsw.ef_search = {self.ef_search}")

    def _open_writer(self) -> psycopg.Connection:
        conn = connect(self.dsn, connect_timeout=CONNECT_TIMEOUT_S)
        self._configure(conn)
        return conn

    # -- units of work and connections ---------------------------------------------------

    def _rows(self, sql: str, params: Sequence | dict | None = None, ef_search: int | None = None,
              binary: bool = False) -> list:
        """A read (or a write returning rows): on the unit of work's connection inside one, else
        pooled. ``binary``: the rows travel in binary (vectors: no text to parse per float)."""
        if self.units.in_work():
            return self._fetch(self.units.conn, sql, params, ef_search, binary)
        try:
            with self.pool.connection() as conn:
                return self._fetch(conn, sql, params, ef_search, binary)
        except PoolTimeout as exc:
            raise WorkspaceError(f"PostgreSQL at {self.where} gave no connection in time: {exc}") from exc

    @staticmethod
    def _fetch(conn: psycopg.Connection, sql: str, params: Any, ef_search: int | None, binary: bool = False) -> list:
        if ef_search is None:
            cur = conn.execute(sql, params, binary=binary)
            return cur.fetchall() if cur.description else []
        with conn.transaction():
            conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(ef_search),))
            return conn.execute(sql, params).fetchall()

    def _wconn(self) -> psycopg.Connection:
        if not self.units.in_work():
            raise RuntimeError("a store write outside a unit of work")
        assert self.units.conn is not None
        return self.units.conn

    def _exec(self, sql: str, params: Sequence | None = None) -> psycopg.Cursor:
        return self._wconn().execute(sql, params)

    def _many(self, sql: str, rows: Sequence[Sequence]) -> None:
        if rows:
            with self._wconn().cursor() as cur:
                cur.executemany(sql, rows)

    def close(self) -> None:
        try:
            self._heartbeat.stop()
            self.units.close()
            self.records.close()
        finally:
            self.pool.close()
            with self._liveness_lock:
                if self._liveness is not None:
                    self._liveness.close()  # releases the worker's advisory lock
                    self._liveness = None

    def indexing_lock(self) -> _RunLock:
        return _RunLock(self._run_lock)

    def communities_lock(self) -> _DatabaseLock:
        return _DatabaseLock(self.dsn, "communities")

    # -- documents -----------------------------------------------------------------------

    def add_pending(self, doc: Document, scope: str, profile: str) -> None:
        """A document another worker is processing, or has processed and still holds chunks for, is left
        alone: two workers registering the same file at once never process it twice."""
        now = time.time()
        payload = _json(doc.to_dict())
        self.write(lambda: self._exec(
            """INSERT INTO documents(id, title, authors, year, venue, doi, pmid, abstract, source_path, content_md5,
                   metadata, payload, size, scope, profile, status, error, created_at, updated_at)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 'PENDING', NULL, %s, %s)
               ON CONFLICT (id) DO UPDATE SET title=excluded.title, authors=excluded.authors, year=excluded.year,
                   venue=excluded.venue, doi=excluded.doi, pmid=excluded.pmid, abstract=excluded.abstract,
                   source_path=excluded.source_path, content_md5=excluded.content_md5, metadata=excluded.metadata,
                   payload=excluded.payload, size=excluded.size, scope=excluded.scope, profile=excluded.profile,
                   status='PENDING', error=NULL, claimed_by=NULL, updated_at=excluded.updated_at
               WHERE documents.status IN ('PENDING', 'FAILED')
                  OR (documents.status = 'PROCESSED'
                      AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.document_id = documents.id))""",
            (doc.id, doc.title, _json(doc.authors), doc.year, doc.venue, doc.doi, doc.pmid, doc.abstract,
             doc.source_path, doc.content_md5, _json(doc.metadata), payload, len(payload), scope, profile, now, now)))

    def add_failed_file(self, doc_id: str, path: str, reason: str) -> None:
        now = time.time()
        self.write(lambda: self._exec(
            """INSERT INTO documents(id, title, source_path, status, error, created_at, updated_at)
               VALUES (%s, %s, %s, 'FAILED', %s, %s, %s)
               ON CONFLICT (id) DO UPDATE SET status='FAILED', error=excluded.error, updated_at=excluded.updated_at""",
            (doc_id, Path(path).name, path, reason, now, now)))

    def set_status(self, doc_id: str, status: DocStatus, error: str | None = None) -> None:
        now = time.time()
        processed = now if status == DocStatus.PROCESSED else None
        if status != DocStatus.PROCESSING:
            self._tokens.pop(doc_id, None)
        self.write(lambda: self._exec(
            "UPDATE documents SET status = %s, error = %s, updated_at = %s, processed_at = COALESCE(%s, processed_at), "
            "claimed_by = CASE WHEN %s = 'PROCESSING' THEN claimed_by END WHERE id = %s",
            (status.value, error, now, processed, status.value, doc_id)))

    def _worker_alive(self) -> int:
        """Hold this worker's advisory lock (on its own connection, for as long as the store is open)."""
        with self._liveness_lock:
            if self._liveness is None or self._liveness.closed or self._liveness.broken:
                conn = connect(self.dsn, connect_timeout=CONNECT_TIMEOUT_S)
                conn.execute("SELECT pg_advisory_lock(%s)", (self.worker_key,))
                self._liveness = conn
        return self.worker_key

    def claim_pending(self, limit: int, only: Collection[str] | None = None) -> list[str]:
        """PENDING documents, after those whose worker stopped renewing their lease (taken over)."""
        if limit <= 0:
            return []
        key = self._worker_alive()
        self._heartbeat.start()
        wanted = None if only is None else list(only)

        def work() -> list[tuple[str, int, int]]:
            params: dict[str, Any] = {"key": key, "lease": self.lease_s, "now": time.time(), "only": wanted,
                                      "limit": limit}
            taken = self._rows(TAKE_OVER_SQL, params)
            left = limit - len(taken)
            claimed = self._rows(CLAIM_SQL, {**params, "limit": left}) if left > 0 else []
            if taken:
                self.taken_over += sorted(r[0] for r in taken)
            return [(r[0], int(r[1]), int(r[2])) for r in taken + claimed]

        rows = self.write(work)
        self._tokens.update((doc_id, token) for doc_id, _, token in rows)
        return [r[0] for r in sorted(rows, key=lambda r: (-r[1], r[0]))]

    def hold_lease(self, doc_id: str) -> bool:
        """Inside a unit of work: whether this worker still holds its claim of ``doc_id`` (no other worker
        took it over after its lease ran out); the row stays locked until the commit."""
        token = self._tokens.get(doc_id)
        return token is not None and bool(self._rows(HELD_SQL, (doc_id, self.worker_key, token)))

    def release(self, doc_ids: Sequence[str]) -> None:
        """Give back documents this worker claimed (never one another worker has taken over since)."""
        for doc_id in doc_ids:
            self._tokens.pop(doc_id, None)
        self.write(lambda: self._exec(
            "UPDATE documents SET status = 'PENDING', claimed_by = NULL, lease_until = NULL, updated_at = %s "
            "WHERE status = 'PROCESSING' AND id = ANY(%s) AND (claimed_by = %s OR claimed_by IS NULL)",
            (time.time(), list(doc_ids), self.worker_key)))

    def release_claims(self) -> list[str]:
        """Give back every document and maintenance row this worker holds (a worker stopping cleanly)."""
        self._tokens.clear()

        def work() -> list[str]:
            self._exec(RELEASE_REBUILDS_SQL, (self.worker_key,))
            self._exec(RELEASE_MAINTENANCE_SQL, (self.worker_key,))
            return sorted(r[0] for r in self._rows(RELEASE_MINE_SQL, (time.time(), self.worker_key)))

        return self.write(work)

    def reset_stale_processing(self) -> list[str]:
        """Documents PROCESSING under a worker whose advisory lock is gone (or no worker), or under this
        one (called while holding its indexing lock: no run of this process is going on), go back."""
        def work() -> list[str]:
            expired = [r[0] for r in self._rows(EXPIRED_SQL)]  # a worker that stopped renewing its leases
            if expired:
                self._exec("UPDATE documents SET status = 'PENDING', claimed_by = NULL, lease_until = NULL "
                           "WHERE id = ANY(%s)", (expired,))
            owners = [r[0] for r in self._rows("SELECT DISTINCT claimed_by FROM documents WHERE status = 'PROCESSING'")]
            gone = [k for k in owners if k is None or k == self.worker_key
                    or self._rows("SELECT pg_try_advisory_xact_lock(%s)", (k,))[0][0]]
            if not gone:
                return sorted(expired)
            keys = [k for k in gone if k is not None]
            rows = self._rows(
                "UPDATE documents SET status = 'PENDING', claimed_by = NULL, lease_until = NULL, updated_at = %s "
                "WHERE status = 'PROCESSING' AND (claimed_by = ANY(%s) OR (%s AND claimed_by IS NULL)) RETURNING id",
                (time.time(), keys, None in gone))
            return sorted({r[0] for r in rows} | set(expired))

        return self.write(work)

    def interrupted_ids(self) -> set[str]:
        """PROCESSING documents whose worker is gone (its advisory lock is free, or it stopped renewing
        their leases); changes nothing."""
        rows = self._rows("SELECT id, claimed_by FROM documents WHERE status = 'PROCESSING'")
        owners = {k for _, k in rows}
        live = {k for k in owners if k is not None and (
            (k == self.worker_key and self._run_lock.locked())
            or (k != self.worker_key and not self._rows("SELECT pg_try_advisory_xact_lock(%s)", (k,))[0][0]))}
        expired = {r[0] for r in self._rows(EXPIRED_SQL)} if rows else set()
        return {doc_id for doc_id, k in rows if k not in live} | expired

    def delete_document(self, doc_id: str) -> None:
        self.write(lambda: self._exec("DELETE FROM documents WHERE id = %s", (doc_id,)))

    def record_chunk_failures(self, doc_id: str, profile: str, failures: Sequence[ChunkFailure]) -> None:
        now = time.time()
        rows = {f.chunk_id: (doc_id, f.chunk_id, profile, f.reason, f.raw[:20000], now, now) for f in failures}
        self.write(lambda: self._many(
            "INSERT INTO chunk_failures(document_id, chunk_id, profile, reason, raw, attempts, created_at, updated_at) "
            "VALUES (%s, %s, %s, %s, %s, 1, %s, %s) ON CONFLICT (document_id, chunk_id) DO UPDATE SET "
            "profile = excluded.profile, reason = excluded.reason, raw = excluded.raw, "
            "attempts = chunk_failures.attempts + 1, updated_at = excluded.updated_at",
            sorted(rows.values())))

    def clear_chunk_failures(self, doc_id: str, chunk_ids: Sequence[str] | None = None) -> None:
        if chunk_ids is None:
            self.write(lambda: self._exec("DELETE FROM chunk_failures WHERE document_id = %s", (doc_id,)))
        else:
            self.write(lambda: self._exec("DELETE FROM chunk_failures WHERE document_id = %s AND chunk_id = ANY(%s)",
                                          (doc_id, list(chunk_ids))))

    # -- graph maintenance owed ----------------------------------------------------------

    def queue_maintenance(self, task: MaintenanceTask, ids: Iterable[str]) -> None:
        now = time.time()
        rows = [(task, i, now) for i in sorted(set(ids))]
        if rows:
            self.write(lambda: self._many(
                "INSERT INTO maintenance(task, id, queued_at) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING", rows))

    def pending_maintenance(self, task: MaintenanceTask, limit: int | None = None) -> list[str]:
        sql = "SELECT id FROM maintenance WHERE task = %s ORDER BY id" + (f" LIMIT {int(limit)}" if limit else "")
        return [r[0] for r in self._rows(sql, (task,))]

    def claim_maintenance(self, task: MaintenanceTask, limit: int) -> list[str]:
        """Up to ``limit`` queued ids no other live worker holds, leased to this one until finished."""
        key = self._worker_alive()
        self._heartbeat.start()
        params = {"key": key, "lease": self.lease_s, "task": task, "limit": int(limit)}
        return sorted(r[0] for r in self.write(lambda: self._rows(CLAIM_MAINTENANCE_SQL, params)))

    def claim_dirty(self, kind: GraphKind, limit: int) -> list[str]:
        if kind not in ("entities", "relations"):
            raise ValueError(kind)
        key = self._worker_alive()
        self._heartbeat.start()
        params = {"key": key, "lease": self.lease_s, "task": f"rebuild:{kind}", "limit": int(limit), "now": time.time()}
        sql = CLAIM_DIRTY_SQL.replace("{table}", kind)
        return sorted(r[0] for r in self.write(lambda: self._rows(sql, params)))

    def release_dirty(self, kind: GraphKind, ids: Sequence[str]) -> None:
        if ids:
            self.write(lambda: self._exec("DELETE FROM maintenance WHERE task = %s AND id = ANY(%s)",
                                          (f"rebuild:{kind}", list(ids))))

    def lock_merges(self) -> None:
        """Inside a unit of work: entity merges of every worker take turns until it commits."""
        self._exec("SELECT pg_advisory_xact_lock(hashtextextended('scholargraph-merge:' || current_schema(), 0))")

    def finish_maintenance(self, task: MaintenanceTask, ids: Iterable[str]) -> None:
        ids = sorted(set(ids))
        if ids:
            self.write(lambda: self._exec("DELETE FROM maintenance WHERE task = %s AND id = ANY(%s)", (task, ids)))

    # -- chunks --------------------------------------------------------------------------

    def insert_chunks(self, chunks: Sequence[Chunk], scope: str = "full") -> None:
        rows = sorted((c.id, c.document_id, c.ordinal, c.section, c.char_start, c.char_end, c.page_start, c.page_end,
                       c.tokens, c.text, c.header, scope) for c in chunks)
        def work() -> None:
            self._many(
                """INSERT INTO chunks(id, document_id, ordinal, section, char_start, char_end, page_start, page_end, tokens,
                       text, header, scope) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
                   ON CONFLICT (id) DO UPDATE SET document_id=excluded.document_id, ordinal=excluded.ordinal,
                       section=excluded.section, char_start=excluded.char_start, char_end=excluded.char_end,
                       page_start=excluded.page_start, page_end=excluded.page_end, tokens=excluded.tokens,
                       text=excluded.text, header=excluded.header, scope=excluded.scope""", rows)
            self._many("UPDATE chunks SET terms = %s::tsvector WHERE id = %s",
                       lexical.terms_rows(self._wconn(), chunks))

        self.write(work)

    @staticmethod
    def _chunk(r: Sequence) -> Chunk:
        return Chunk(id=r[0], document_id=r[1], ordinal=r[2], text=r[3], tokens=r[4], section=r[5], char_start=r[6],
                     char_end=r[7], page_start=r[8], page_end=r[9], header=r[10])

    def chunks_of(self, doc_id: str) -> list[Chunk]:
        return [self._chunk(r) for r in self._rows(
            f"SELECT {_CHUNK_COLUMNS} FROM chunks WHERE document_id = %s ORDER BY ordinal", (doc_id,))]

    def get_chunks(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        rows = self._rows(f"SELECT {_CHUNK_COLUMNS} FROM chunks WHERE id = ANY(%s)", (list(dict.fromkeys(chunk_ids)),))
        return {r[0]: self._chunk(r) for r in rows}

    def delete_chunks_of(self, doc_id: str) -> list[str]:
        def work() -> list[str]:
            ids = [r[0] for r in self._rows("DELETE FROM chunks WHERE document_id = %s RETURNING id", (doc_id,))]
            self.delete_vectors("chunk", ids)
            return ids

        return self.write(work)

    def iter_chunk_texts(self) -> Iterator[tuple[str, str]]:
        with cursor_over(self.pool, "SELECT id, text FROM chunks ORDER BY id") as cur:
            for r in cur:
                yield r[0], r[1]

    def search_chunk_text(self, query: str, k: int) -> list[tuple[str, float]]:
        """Full-text search over chunk texts (tsvector, English stemming): (chunk id, rank), best first."""
        if not query.strip() or k <= 0:
            return []
        rows = self._rows(
            """SELECT id, ts_rank_cd(tsv, q) AS r FROM chunks, websearch_to_tsquery('english', %s) q
               WHERE tsv @@ q ORDER BY r DESC, id LIMIT %s""", (query, k))
        return [(r[0], float(r[1])) for r in rows]

    def lexical_search(self, query: str, k: int, *, documents: Collection[str] | None = None,
                       chunk_ids: Collection[str] | None = None) -> list[tuple[str, float]]:
        terms = query_terms_lexical(query)
        if not terms or k <= 0 or (documents is not None and not documents) or (chunk_ids is not None and not chunk_ids):
            return []
        if documents is not None or chunk_ids is not None:  # a given scope: every chunk of it is ranked
            sql, params = lexical.search_sql(documents, chunk_ids)
            return [(r[0], float(r[1])) for r in self._rows(sql, (lexical.any_term(terms), *params, k))]
        plan = lexical.plan_search(terms, self._term_statistics.chunks_holding(self._rows), self.lexical_common_rows)
        rows = self._rows(lexical.bounded_search_sql(), (plan.rank, plan.match, lexical.CANDIDATES, k))
        if not rows and plan.fallback is not None:
            rows = self._rows(lexical.bounded_search_sql(), (plan.rank, plan.fallback, lexical.CANDIDATES, k))
        return [(r[0], float(r[1])) for r in rows]

    def count(self, what: str) -> int:
        return int(self._rows(f"SELECT count(*) FROM {self._countable(what)}")[0][0])

    def has_rows(self, what: str) -> bool:
        return bool(self._rows(f"SELECT EXISTS (SELECT 1 FROM {self._countable(what)})")[0][0])

    def _countable(self, what: str) -> str:
        """``what`` checked against the countable tables, with the records written behind flushed first."""
        if what not in COUNTABLE:
            raise ValueError(what)
        if what in ("llm_cache", "llm_calls"):
            self.records.flush_records()
        return what

    def content_version(self, what: str) -> int:
        return read_content_version(self._rows, what)

    def versioned_rows(self, what: str) -> int:
        return read_content_version(self._rows, what, "row_count")

    # -- vectors -------------------------------------------------------------------------

    def _vector_dim(self) -> int | None:
        """The dimension the vector tables were made for (None: not made yet)."""
        if self._dim is None:
            value = self.get_meta("vector_tables_dim")
            self._dim = int(value) if value else None
        return self._dim

    def _ensure_vector_tables(self, dim: int) -> None:
        """(Re)make the vector tables for ``dim`` (inside a unit of work); refused while they hold vectors of
        another dimension."""
        if self._vector_dim() == dim:
            return
        ddl_lock(self._wconn())
        rows = self._rows("SELECT value FROM meta WHERE key = 'vector_tables_dim'")
        current = int(rows[0][0]) if rows else None
        if current == dim:
            self._dim = dim
            return
        if current is not None:
            held = sum(int(self._rows(f"SELECT count(*) FROM {vector_table(ns)}")[0][0]) for ns in NAMESPACES)
            if held:
                raise WorkspaceError(f"the knowledge base holds {current}-d vectors; cannot store {dim}-d ones "
                                     "(run `scholargraph reembed` to change the embedding model)")
        for statement in vector_tables_ddl(dim):
            self._exec(statement)
        self._exec("INSERT INTO meta(key, value) VALUES ('vector_tables_dim', %s) "
                   "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (str(dim),))
        self._dim = None  # known once committed (a rollback must not leave it set)

    def put_vectors(self, namespace: str, ids: Sequence[str], vectors: np.ndarray) -> None:
        if not len(ids):
            return
        table = vector_table(namespace)
        matrix = normalised(vectors)
        if matrix.shape[0] != len(ids):
            raise ValueError(f"got {len(ids)} ids but {matrix.shape[0]} vectors")
        last = {str(i): row for row, i in enumerate(ids)}  # a repeated id keeps its last vector

        def work() -> None:
            self._ensure_vector_tables(matrix.shape[1])
            fresh = self._new_rows(namespace, list(last))
            # an unchanged vector is not written again: a rebuild re-embeds texts that mostly did not change
            # (a name and the start of a description), and each rewrite is a new HNSW entry
            self._many(f"INSERT INTO {table}(id, embedding) VALUES (%s, %s) "
                       f"ON CONFLICT (id) DO UPDATE SET embedding = excluded.embedding "
                       f"WHERE {table}.embedding IS DISTINCT FROM excluded.embedding",
                       [(i, matrix[row]) for i, row in sorted(last.items())])
            self._maybe_index(namespace, fresh)

        self.write(work)

    def _new_rows(self, namespace: str, ids: list[str]) -> int:
        """How many of ``ids`` the namespace does not hold yet, while it has no HNSW index (the
        rebuild puts again the vectors of elements it rebuilt: those add no row, and counted as
        added they would make every later put count the whole namespace)."""
        if self._rows_seen.get(namespace) is None or self._rows_seen[namespace] < 0:
            return len(ids)  # not counted yet (counted whole next), or indexed (not counted)
        held = self._rows(f"SELECT count(*) FROM {vector_table(namespace)} WHERE id = ANY(%s)", (ids,))
        return len(ids) - int(held[0][0])

    def _maybe_index(self, namespace: str, added: int) -> None:
        """Build the namespace's HNSW index once it holds ``hnsw_min_rows`` vectors (in a unit of work)."""
        seen = self._rows_seen.get(namespace)
        if seen is None:
            has_index = self._has_vector_index(namespace)
            seen = -1 if has_index else int(self._rows(f"SELECT count(*) FROM {vector_table(namespace)}")[0][0])
        elif seen >= 0:
            seen += added
        if 0 <= seen and seen >= self.hnsw_min_rows:
            seen = int(self._rows(f"SELECT count(*) FROM {vector_table(namespace)}")[0][0])
            if seen >= self.hnsw_min_rows and self._rows("SELECT 1 FROM meta WHERE key = %s", (f"{INDEX_ASIDE}{namespace}",)):
                seen = ASIDE  # a rebuild in progress (this worker's or another's) builds it at its end
            elif seen >= self.hnsw_min_rows:
                ddl_lock(self._wconn())
                self._exec(vector_index_ddl(namespace))
                seen = -1
        self._rows_seen[namespace] = seen

    def begin_vector_rebuild(self) -> None:
        """A namespace the rebuild will fill or mostly rewrite is written without its HNSW index,
        built once by ``end_vector_rebuild``: inserting 20,000 relation vectors one batch at a time into
        an HNSW index took 12× as long as inserting them without it and building the index after
        (`docs/scale.md`). Marked in ``meta`` so every worker holds off, and a worker that dies leaves
        the build to the next rebuild."""
        if self._vector_dim() is None:
            return
        for namespace, table in REBUILT_NAMESPACES.items():
            dirty = int(self._rows(f"SELECT count(*) FROM {table} WHERE dirty")[0][0])
            if not dirty:
                continue
            held = int(self._rows(f"SELECT count(*) FROM {vector_table(namespace)}")[0][0])
            indexed = self._has_vector_index(namespace)
            if (held + dirty >= self.hnsw_min_rows and not indexed) or (
                    indexed and dirty >= self.hnsw_min_rows and dirty * REBUILD_SHARE >= held):
                self.write(functools.partial(self._set_index_aside, namespace))

    def _has_vector_index(self, namespace: str) -> bool:
        return bool(self._rows("SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = %s",
                               (f"{vector_table(namespace)}_hnsw",)))

    def _set_index_aside(self, namespace: str) -> None:
        ddl_lock(self._wconn())
        self._exec(f"DROP INDEX IF EXISTS {vector_table(namespace)}_hnsw")
        self._exec("INSERT INTO meta(key, value) VALUES (%s, '1') ON CONFLICT (key) DO NOTHING",
                   (f"{INDEX_ASIDE}{namespace}",))
        self._rows_seen[namespace] = ASIDE

    def end_vector_rebuild(self) -> None:
        for namespace in REBUILT_NAMESPACES:
            if self.get_meta(f"{INDEX_ASIDE}{namespace}"):
                self.write(functools.partial(self._build_set_aside, namespace))

    def _build_set_aside(self, namespace: str) -> None:
        ddl_lock(self._wconn())  # another worker may have built it meanwhile
        if not self._rows("SELECT 1 FROM meta WHERE key = %s", (f"{INDEX_ASIDE}{namespace}",)):
            self._rows_seen.pop(namespace, None)
            return
        held = int(self._rows(f"SELECT count(*) FROM {vector_table(namespace)}")[0][0])
        if held >= self.hnsw_min_rows:
            self._exec(vector_index_ddl(namespace))
        self._exec("DELETE FROM meta WHERE key = %s", (f"{INDEX_ASIDE}{namespace}",))
        self._rows_seen[namespace] = -1 if held >= self.hnsw_min_rows else held

    def delete_vectors(self, namespace: str, ids: Sequence[str]) -> None:
        table = vector_table(namespace)
        if len(ids) and self._vector_dim() is not None:
            self.write(lambda: self._exec(f"DELETE FROM {table} WHERE id = ANY(%s)", (list(ids),)))

    def clear_vectors(self) -> None:
        def work() -> None:
            if self._rows("SELECT 1 FROM meta WHERE key = 'vector_tables_dim'"):
                for ns in NAMESPACES:  # an emptied namespace indexes again from zero: cheap inserts meanwhile
                    self._exec(f"DROP INDEX IF EXISTS {vector_table(ns)}_hnsw")
                self._exec(f"TRUNCATE {', '.join(vector_table(ns) for ns in NAMESPACES)}")
                self._rows_seen.clear()

        self.write(work)

    def iter_vectors(self, namespace: str) -> Iterator[tuple[str, np.ndarray]]:
        if self._vector_dim() is None:
            return
        with cursor_over(self.pool, f"SELECT id, embedding FROM {vector_table(namespace)} ORDER BY id") as cur:
            yield from ((r[0], r[1]) for r in cur)

    def vector_index(self, namespace: str, dim: int | None = None) -> PgVectorIndex:
        dim = dim or int(self.get_meta("embedding_dim") or 0)
        if not dim:
            raise WorkspaceError("the workspace records no embedding dimension yet; index documents first")
        if self._vector_dim() != dim:
            self.write(lambda: self._ensure_vector_tables(dim))
        return PgVectorIndex(self._rows, dim, namespace, self.ef_search, lambda: self._has_hnsw(namespace))

    def _has_hnsw(self, namespace: str) -> bool:
        return bool(self._rows("SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = %s",
                               (f"{vector_table(namespace)}_hnsw",)))

    def get_vectors(self, namespace: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not len(ids) or self._vector_dim() is None:
            return {}
        rows = self._rows(f"SELECT id, embedding FROM {vector_table(namespace)} WHERE id = ANY(%s)", (list(ids),),
                          binary=True)
        return {r[0]: r[1] for r in rows}
