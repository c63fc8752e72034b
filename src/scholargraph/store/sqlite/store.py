"""The embedded store: a workspace folder of SQLite files (WAL), the source of truth for everything.

Concurrency model (the one place it is described)
-------------------------------------------------
* ``scholargraph.sqlite`` holds documents, chunks, graph, vectors, sessions. ONE writer thread
  owns its only write connection (:class:`~.writer.Writer`) and takes units of work from
  a queue, one transaction each: ``store.write(work)`` waits for the commit, ``submit`` returns a
  future, ``awrite`` awaits it without blocking the event loop. A store write method called
  alone is a unit of work of its own; called inside one, it joins it. Nothing else writes.
* Reads use one connection per reading thread (:class:`~.writer.Readers`). In WAL mode
  they never wait for the writer: a read sees the last commit (inside a unit of work, on the
  writer thread, it also sees the work's own writes).
* ``llm.sqlite`` holds the LLM response cache, the call log and the embedding cache, with its own
  writer thread (:mod:`.records`): rows are produced on the event loop, held in memory and
  written behind, so they never wait for nor delay a graph commit. A workspace made before the
  split has these tables in ``scholargraph.sqlite``; opening it copies them over (schema v2).
* Vectors live in the ``vectors`` table as float32 blobs; an in-process exact index per
  namespace is built lazily from it. A unit of work's vector changes reach the index after its
  commit (a rollback never leaves ghosts in memory).
* Processes: any number may read a workspace while one indexes (``ask``, ``status``, ``serve``).
  Indexing runs take ``index.lock`` (:mod:`.lock`): a second ``index`` waits for the first
  (or stops with ``--no-wait``), naming the process that holds it; the OS drops the lock of a
  killed process. Writes from other processes (``ask --session``, ``delete``) are serialised by
  SQLite itself (busy timeout 30 s). What a process keeps in memory follows the others' commits:
  each vector namespace has a generation in ``meta`` (bumped by every unit of work that changes
  it) and an index that fell behind is read again; the in-memory graph is keyed by
  ``graph_version()``.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import weakref
from collections.abc import Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar, cast

import numpy as np

from ...errors import WorkspaceError
from ...models import Chunk, ChunkFailure, DocStatus, Document
from ..analysis_role import Citations, Communities, KeepsAnalysis
from ..base import COUNTABLE, NAMESPACES, GraphKind, MaintenanceTask, batches, read_content_version
from ..documents_role import DocumentReads, KeepsDocumentReads
from ..facts_role import KeepsFacts, Meta, Sessions
from ..graph_role import KeepsGraph
from ..mentions_role import KeepsMentions, Mentions
from ..records_role import KeepsRecords
from ..units import RunsUnitsOfWork, SqlSeam
from ..vectors import ExactVectorIndex
from . import lexical
from .graph import SQLiteGraph
from .lock import COMMUNITIES_LOCK_NAME, FileLock
from .records import TABLES as RECORD_TABLES
from .records import SQLiteRecords
from .schema import migrate
from .writer import Readers, Writer, connect

DB_NAME = "scholargraph.sqlite"
_GENERATION = "vectors_generation:"  # meta key prefix, one per namespace
T = TypeVar("T")


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def _in(ids: Sequence) -> str:
    return ",".join("?" * len(ids))


def _shutdown(writer: Writer, readers: Readers, records: SQLiteRecords) -> None:
    try:
        writer.close()
    finally:
        readers.close()
        records.close()


class SQLiteStore(RunsUnitsOfWork, KeepsRecords, KeepsGraph, KeepsMentions, KeepsAnalysis, KeepsFacts,
                  KeepsDocumentReads):
    """Implements :class:`~scholargraph.store.base.Store` on SQLite (see the module docstring)."""

    units: Writer  # runs the units of work (RunsUnitsOfWork answers ``Writes`` from it)
    graph: SQLiteGraph  # entities, relations, keywords and their provenance (KeepsGraph answers from it)
    records: SQLiteRecords  # the LLM cache, call log and embedding cache (KeepsRecords answers from it)

    def __init__(self, workdir: Path, create: bool = True):
        self.workdir = Path(workdir)
        self.path = self.workdir / DB_NAME
        if not self.path.exists() and not create:
            raise WorkspaceError(f"no workspace at {self.workdir} (run `scholargraph index PATH --workdir {self.workdir}`)")
        try:
            self.workdir.mkdir(parents=True, exist_ok=True)
            conn = connect(self.path)
        except (OSError, sqlite3.Error) as exc:
            raise WorkspaceError(f"cannot open workspace database {self.path}: {exc}") from exc
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise WorkspaceError(f"{self.path} is not a usable scholargraph database: {exc}") from exc
        try:
            self.records = SQLiteRecords(self.workdir)
        except BaseException:
            conn.close()
            raise
        try:
            migrate(conn, str(self.path), before_step=self._before_migration_step)
            if lexical.needs_rebuild(conn):  # new or upgraded workspace, or a new tokenisation
                lexical.rebuild(conn)
        except BaseException as exc:
            conn.close()
            self.records.close()
            if isinstance(exc, sqlite3.DatabaseError):
                raise WorkspaceError(f"{self.path} is not a usable scholargraph database: {exc}") from exc
            raise
        self._pending_index_ops: list[tuple[str, str, object]] = []  # writer thread only
        self._indexes: dict[str, ExactVectorIndex] = {}
        self._generations: dict[str, int] = {}  # per loaded index: the vectors generation it reflects
        self._index_lock = threading.RLock()
        self.units = Writer(conn, "workspace", after=self._after_work)
        self._readers = Readers(self.path)
        sql = SqlSeam("?", self._rows, lambda text, params: self._wconn().execute(text, params),
                      lambda text, rows: self._wconn().executemany(text, rows), self.write)
        self.graph = SQLiteGraph(self._rows, self._wconn, self.write, self.delete_vectors)
        self.mentions = Mentions(sql, self.get_entities, self.get_relations)
        self.communities, self.citations = Communities(sql, relation_seq="rowid"), Citations(sql)
        self.meta, self.sessions = Meta(sql), Sessions(sql)
        self.documents = DocumentReads(sql)
        # close() does this; so does the interpreter's exit for a store nobody closed (held cache rows are written)
        self._finalizer = weakref.finalize(self, _shutdown, self.units, self._readers, self.records)

    def _before_migration_step(self, version: int) -> None:
        if version == 1:  # v1 -> v2: the cache and call log move to their own file
            self.records.import_from(self.path)

    # -- units of work and connections ---------------------------------------------------

    def _rows(self, sql: str, params: Sequence | dict = ()) -> list[sqlite3.Row]:
        """A read: on the write connection inside a unit of work, else on this thread's reader."""
        conn = self.units.conn if self.units.in_work() else self._readers.get()
        return conn.execute(sql, params).fetchall()

    def _wconn(self) -> sqlite3.Connection:
        if not self.units.in_work():
            raise RuntimeError("a store write outside a unit of work")
        return self.units.conn

    def _after_work(self, committed: bool) -> None:
        ops, self._pending_index_ops = self._pending_index_ops, []
        if committed:
            self._apply_index_ops(ops)

    def close(self) -> None:
        self._finalizer()

    def indexing_lock(self) -> FileLock:
        return FileLock(self.workdir)

    def communities_lock(self) -> FileLock:
        return FileLock(self.workdir, COMMUNITIES_LOCK_NAME)

    # -- documents -----------------------------------------------------------------------

    def add_pending(self, doc: Document, scope: str, profile: str) -> None:
        now = time.time()
        payload = _json(doc.to_dict())
        self.write(lambda: self._wconn().execute(
            """INSERT INTO documents(id, title, authors, year, venue, doi, pmid, abstract, source_path, content_md5,
                   metadata, payload, size, scope, profile, status, error, created_at, updated_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'PENDING', NULL, ?, ?)
               ON CONFLICT(id) DO UPDATE SET title=excluded.title, authors=excluded.authors, year=excluded.year,
                   venue=excluded.venue, doi=excluded.doi, pmid=excluded.pmid, abstract=excluded.abstract,
                   source_path=excluded.source_path, content_md5=excluded.content_md5, metadata=excluded.metadata,
                   payload=excluded.payload, size=excluded.size, scope=excluded.scope, profile=excluded.profile,
                   status='PENDING', error=NULL, updated_at=excluded.updated_at""",
            (doc.id, doc.title, _json(doc.authors), doc.year, doc.venue, doc.doi, doc.pmid, doc.abstract,
             doc.source_path, doc.content_md5, _json(doc.metadata), payload, len(payload), scope, profile, now, now),
        ))

    def add_failed_file(self, doc_id: str, path: str, reason: str) -> None:
        now = time.time()
        self.write(lambda: self._wconn().execute(
            """INSERT INTO documents(id, title, source_path, status, error, created_at, updated_at)
               VALUES (?, ?, ?, 'FAILED', ?, ?, ?)
               ON CONFLICT(id) DO UPDATE SET status='FAILED', error=excluded.error, updated_at=excluded.updated_at""",
            (doc_id, Path(path).name, path, reason, now, now),
        ))

    def set_status(self, doc_id: str, status: DocStatus, error: str | None = None) -> None:
        now = time.time()
        processed = now if status == DocStatus.PROCESSED else None
        self.write(lambda: self._wconn().execute(
            "UPDATE documents SET status = ?, error = ?, updated_at = ?, processed_at = COALESCE(?, processed_at) WHERE id = ?",
            (status.value, error, now, processed, doc_id),
        ))

    def claim_pending(self, limit: int, only: Collection[str] | None = None) -> list[str]:
        def work() -> list[str]:
            if only is None:
                ids = [r[0] for r in self._rows(
                    "SELECT id FROM documents WHERE status = 'PENDING' ORDER BY size DESC, id LIMIT ?", (limit,))]
            else:
                ids = self.pending_ids(only)[:limit]
            self._set_statuses(ids, DocStatus.PROCESSING, DocStatus.PENDING)
            return ids

        return self.write(work) if limit > 0 else []

    def release(self, doc_ids: Sequence[str]) -> None:
        self.write(lambda: self._set_statuses(list(doc_ids), DocStatus.PENDING, DocStatus.PROCESSING))

    def hold_lease(self, doc_id: str) -> bool:
        """One process indexes a SQLite workspace at a time: a document it claimed stays its own."""
        return True

    def release_claims(self) -> list[str]:
        return []

    def reset_stale_processing(self) -> list[str]:
        """Documents left PROCESSING by a crash go back to PENDING (their work was never committed).
        Only called while holding the indexing lock: no other process is indexing."""
        def work() -> list[str]:
            ids = [r[0] for r in self._rows("SELECT id FROM documents WHERE status = 'PROCESSING' ORDER BY id")]
            self._set_statuses(ids, DocStatus.PENDING, DocStatus.PROCESSING)
            return ids

        return self.write(work)

    def interrupted_ids(self) -> set[str]:
        """PROCESSING documents of a run that ended (no process holds the indexing lock)."""
        if self.indexing_lock().held():
            return set()
        return {r[0] for r in self._rows("SELECT id FROM documents WHERE status = 'PROCESSING'")}

    def _set_statuses(self, ids: list[str], status: DocStatus, current: DocStatus) -> None:
        now = time.time()
        for part in batches(ids):
            self._wconn().execute(f"UPDATE documents SET status = ?, updated_at = ? WHERE status = ? AND id IN ({_in(part)})",
                                  [status.value, now, current.value, *part])

    def delete_document(self, doc_id: str) -> None:
        self.write(lambda: self._wconn().execute("DELETE FROM documents WHERE id = ?", (doc_id,)))

    def record_chunk_failures(self, doc_id: str, profile: str, failures: Sequence[ChunkFailure]) -> None:
        now = time.time()
        self.write(lambda: self._wconn().executemany(
            """INSERT INTO chunk_failures(document_id, chunk_id, profile, reason, raw, attempts, created_at, updated_at)
               VALUES (?, ?, ?, ?, ?, 1, ?, ?)
               ON CONFLICT(document_id, chunk_id) DO UPDATE SET profile = excluded.profile, reason = excluded.reason,
                   raw = excluded.raw, attempts = attempts + 1, updated_at = excluded.updated_at""",
            [(doc_id, f.chunk_id, profile, f.reason, f.raw[:20000], now, now) for f in failures],
        ))

    def clear_chunk_failures(self, doc_id: str, chunk_ids: Sequence[str] | None = None) -> None:
        def work() -> None:
            if chunk_ids is None:
                self._wconn().execute("DELETE FROM chunk_failures WHERE document_id = ?", (doc_id,))
                return
            for part in batches(chunk_ids):
                self._wconn().execute(f"DELETE FROM chunk_failures WHERE document_id = ? AND chunk_id IN ({_in(part)})",
                                      [doc_id, *part])

        self.write(work)

    # -- graph maintenance owed ----------------------------------------------------------

    def queue_maintenance(self, task: MaintenanceTask, ids: Iterable[str]) -> None:
        now = time.time()
        rows = [(task, i, now) for i in dict.fromkeys(ids)]
        if rows:
            self.write(lambda: self._wconn().executemany(
                "INSERT OR IGNORE INTO maintenance(task, id, queued_at) VALUES (?, ?, ?)", rows))

    def pending_maintenance(self, task: MaintenanceTask, limit: int | None = None) -> list[str]:
        sql = "SELECT id FROM maintenance WHERE task = ? ORDER BY id" + (f" LIMIT {int(limit)}" if limit else "")
        return [r[0] for r in self._rows(sql, (task,))]

    def claim_dirty(self, kind: GraphKind, limit: int) -> list[str]:
        return self.dirty_ids(kind, limit)  # one process writes a SQLite workspace at a time

    def release_dirty(self, kind: GraphKind, ids: Sequence[str]) -> None:
        """Nothing to release: SQLite claims nothing."""

    def claim_maintenance(self, task: MaintenanceTask, limit: int) -> list[str]:
        """Every queued id, whatever ``limit``: one process works on a SQLite workspace, and one pass
        keeps the resolution's merges independent of where blocks would end. Citations: at most
        ``limit`` (a run's documents, up to one per CSV row, are resolved a block at a time)."""
        return self.pending_maintenance(task, limit if task == "citations" else None)

    def lock_merges(self) -> None:
        """Nothing to do: one process writes a SQLite workspace at a time."""

    def finish_maintenance(self, task: MaintenanceTask, ids: Iterable[str]) -> None:
        rows = [(task, i) for i in dict.fromkeys(ids)]
        if rows:
            self.write(lambda: self._wconn().executemany("DELETE FROM maintenance WHERE task = ? AND id = ?", rows))

    # -- chunks --------------------------------------------------------------------------

    def insert_chunks(self, chunks: Sequence[Chunk], scope: str = "full") -> None:
        def work() -> None:
            conn = self._wconn()
            lexical.drop_terms(conn, [c.id for c in chunks])  # a chunk stored again is indexed again
            conn.executemany(
                """INSERT OR REPLACE INTO chunks(id, document_id, ordinal, section, char_start, char_end, page_start,
                       page_end, tokens, text, header, scope) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                [(c.id, c.document_id, c.ordinal, c.section, c.char_start, c.char_end, c.page_start, c.page_end,
                  c.tokens, c.text, c.header, scope) for c in chunks],
            )
            lexical.write_terms(conn, chunks)

        self.write(work)

    def lexical_search(self, query: str, k: int, *, documents: Collection[str] | None = None,
                       chunk_ids: Collection[str] | None = None) -> list[tuple[str, float]]:
        conn = self.units.conn if self.units.in_work() else self._readers.get()
        return lexical.search(conn, query, k, documents, chunk_ids)

    @staticmethod
    def _chunk(r: sqlite3.Row) -> Chunk:
        return Chunk(
            id=r["id"], document_id=r["document_id"], ordinal=r["ordinal"], text=r["text"], tokens=r["tokens"],
            section=r["section"], char_start=r["char_start"], char_end=r["char_end"], page_start=r["page_start"],
            page_end=r["page_end"], header=r["header"],
        )

    def chunks_of(self, doc_id: str) -> list[Chunk]:
        return [self._chunk(r) for r in self._rows("SELECT * FROM chunks WHERE document_id = ? ORDER BY ordinal", (doc_id,))]

    def get_chunks(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        out: dict[str, Chunk] = {}
        for part in batches(dict.fromkeys(chunk_ids)):
            out.update({r["id"]: self._chunk(r) for r in self._rows(f"SELECT * FROM chunks WHERE id IN ({_in(part)})", part)})
        return out

    def delete_chunks_of(self, doc_id: str) -> list[str]:
        def work() -> list[str]:
            ids = [r[0] for r in self._rows("SELECT id FROM chunks WHERE document_id = ?", (doc_id,))]
            self._wconn().execute("DELETE FROM chunks WHERE document_id = ?", (doc_id,))
            self.delete_vectors("chunk", ids)
            return ids

        return self.write(work)

    def iter_chunk_texts(self) -> Iterator[tuple[str, str]]:
        for r in self._rows("SELECT id, text FROM chunks"):
            yield r[0], r[1]

    def count(self, what: str) -> int:
        if what not in COUNTABLE:
            raise ValueError(what)
        if what in RECORD_TABLES:
            return self.records.count(what)
        return int(self._rows(f"SELECT COUNT(*) FROM {what}")[0][0])

    def has_rows(self, what: str) -> bool:
        if what not in COUNTABLE:
            raise ValueError(what)
        if what in RECORD_TABLES:
            return self.records.count(what) > 0
        return bool(self._rows(f"SELECT EXISTS (SELECT 1 FROM {what})")[0][0])

    def content_version(self, what: str) -> int:
        return read_content_version(self._rows, what)

    def versioned_rows(self, what: str) -> int:
        return read_content_version(self._rows, what, "row_count")

    # -- vectors -------------------------------------------------------------------------

    def put_vectors(self, namespace: str, ids: Sequence[str], vectors: np.ndarray) -> None:
        if not len(ids):
            return
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)

        def work() -> None:
            self._wconn().executemany(
                "INSERT OR REPLACE INTO vectors(namespace, id, vector) VALUES (?, ?, ?)",
                [(namespace, i, v.tobytes()) for i, v in zip(ids, vectors, strict=True)],
            )
            self._vectors_changed(namespace, ("add", namespace, (list(ids), vectors)))

        self.write(work)

    def begin_vector_rebuild(self) -> None:
        """Nothing to set aside: the SQLite vector index is built in memory when first searched."""

    def end_vector_rebuild(self) -> None:
        """Nothing set aside (``begin_vector_rebuild``)."""

    def delete_vectors(self, namespace: str, ids: Sequence[str]) -> None:
        if not len(ids):
            return

        def work() -> None:
            self._wconn().executemany("DELETE FROM vectors WHERE namespace = ? AND id = ?", [(namespace, i) for i in ids])
            self._vectors_changed(namespace, ("remove", namespace, list(ids)))

        self.write(work)

    def clear_vectors(self) -> None:
        def work() -> None:
            self._wconn().execute("DELETE FROM vectors")
            for namespace in NAMESPACES:
                self._vectors_changed(namespace, ("clear", namespace, None))

        self.write(work)

    # A namespace's generation (in ``meta``) counts the units of work that changed its vectors. An
    # index in memory remembers the generation it reflects; one that falls behind was changed by
    # another process (a `delete`, or an `index` while this one serves queries) and is read again.

    def _vectors_changed(self, namespace: str, op: tuple[str, str, object]) -> None:
        generation = self._wconn().execute(
            "INSERT INTO meta(key, value) VALUES (?, '1') "
            "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1 RETURNING value",
            (f"{_GENERATION}{namespace}",)).fetchone()[0]
        self._pending_index_ops += [op, ("generation", namespace, int(generation))]

    def _generation(self, conn: sqlite3.Connection, namespace: str) -> int:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (f"{_GENERATION}{namespace}",)).fetchone()
        return int(row[0]) if row else 0

    def _apply_index_ops(self, ops: list[tuple[str, str, object]]) -> None:
        with self._index_lock:
            for op, namespace, payload in ops:
                index = self._indexes.get(namespace)
                if index is None:
                    continue  # not loaded yet: it will be built from the table when first used
                if op == "generation":  # one step past the known one, else another process wrote in between
                    known = self._generations.get(namespace)
                    self._generations[namespace] = payload if known == payload - 1 else -1  # type: ignore[assignment,operator]
                elif op == "clear":
                    index.clear()
                elif op == "add":
                    ids, vectors = cast("tuple[list[str], np.ndarray]", payload)
                    index.add(ids, vectors)
                else:
                    index.remove(payload)  # type: ignore[arg-type]

    def iter_vectors(self, namespace: str) -> Iterator[tuple[str, np.ndarray]]:
        for r in self._rows("SELECT id, vector FROM vectors WHERE namespace = ?", (namespace,)):
            yield r[0], np.frombuffer(r[1], dtype=np.float32)

    def vector_index(self, namespace: str, dim: int | None = None) -> ExactVectorIndex:
        reader = self._readers.get()  # committed rows only, even on the writer thread
        index = self._indexes.get(namespace)
        if index is not None and self._generations.get(namespace) == self._generation(reader, namespace):
            return index
        with self._index_lock:
            index = self._indexes.get(namespace)
            if index is not None and self._generations.get(namespace) == self._generation(reader, namespace):
                return index
            dim = dim or (index.dim if index is not None else int(self.get_meta("embedding_dim") or 0))
            if not dim:
                raise WorkspaceError("the workspace records no embedding dimension yet; index documents first")
            reader.execute("BEGIN")  # one snapshot: the rows and the generation they are
            try:
                generation = self._generation(reader, namespace)
                rows = reader.execute("SELECT id, vector FROM vectors WHERE namespace = ?", (namespace,)).fetchall()
            finally:
                reader.execute("COMMIT")
            fresh = ExactVectorIndex(dim)
            if rows:
                matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim)
                fresh.add([r[0] for r in rows], matrix)
            if index is None:
                self._indexes[namespace] = index = fresh
            else:  # read again in place: whoever holds the index sees the other process's changes
                index.replace_with(fresh)
            self._generations[namespace] = generation
            return index

    def get_vectors(self, namespace: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        index = self.vector_index(namespace)
        return {i: v for i in ids if (v := index.get(i)) is not None}
