"""The embedded store: one SQLite file per workspace (WAL), source of truth for everything.

Vectors live in the ``vectors`` table as float32 blobs; an in-process exact index per
namespace is built lazily from it and kept in sync — changes made inside a transaction reach
the index only when the transaction commits, so a rollback never leaves ghosts in memory.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..errors import WorkspaceError
from ..models import Chunk, DocStatus, Document
from .base import DocumentRow, batches
from .graph_sql import GraphTables
from .records import LLMRecords
from .schema import migrate
from .vectors import ExactVectorIndex

DB_NAME = "scholargraph.sqlite"
NAMESPACES = ("chunk", "entity", "relation", "keyword")


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False)


class SQLiteStore(GraphTables, LLMRecords):
    def __init__(self, workdir: Path, create: bool = True):
        self.workdir = Path(workdir)
        self.path = self.workdir / DB_NAME
        if not self.path.exists() and not create:
            raise WorkspaceError(f"no workspace at {self.workdir} (run `scholargraph index PATH --workdir {self.workdir}`)")
        try:
            self.workdir.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
        except (OSError, sqlite3.Error) as exc:
            raise WorkspaceError(f"cannot open workspace database {self.path}: {exc}") from exc
        self.conn.row_factory = sqlite3.Row
        self._lock = threading.RLock()
        self._depth = 0
        self._pending_index_ops: list[tuple[str, str, object]] = []
        self._indexes: dict[str, ExactVectorIndex] = {}
        self._init_records()
        try:
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self.conn.execute("PRAGMA busy_timeout=30000")
            migrate(self.conn, str(self.path))
        except sqlite3.DatabaseError as exc:
            raise WorkspaceError(f"{self.path} is not a usable scholargraph database: {exc}") from exc

    # -- lifecycle -----------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            try:
                self.flush_records()
            finally:
                self._close_records()
                self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Nested calls join the outer transaction; the outermost one commits."""
        with self._lock:
            outer = self._depth == 0
            if outer:
                self.conn.execute("BEGIN IMMEDIATE")
            self._depth += 1
            try:
                yield self.conn
            except BaseException:
                self._depth -= 1
                if outer:
                    self.conn.execute("ROLLBACK")
                    self._pending_index_ops.clear()
                raise
            self._depth -= 1
            if outer:
                self._commit_outer()

    def _commit_outer(self) -> None:
        try:
            self._write_held(self.conn)  # held cache/call-log rows ride along (store.records)
            self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            self._pending_index_ops.clear()
            self._end_write(committed=False)
            raise
        self._end_write(committed=True)
        self._apply_index_ops()

    def _exec(self, sql: str, params: Sequence | dict = ()) -> sqlite3.Cursor:
        with self._lock:
            return self.conn.execute(sql, params)

    def get_meta(self, key: str) -> str | None:
        row = self._exec("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self._exec("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))

    # -- documents -----------------------------------------------------------------------

    def add_pending(self, doc: Document, scope: str, profile: str) -> None:
        now = time.time()
        with self.transaction() as conn:
            conn.execute(
                """INSERT INTO documents(id, title, authors, year, venue, doi, pmid, abstract, source_path, content_md5,
                       metadata, payload, scope, profile, status, error, created_at, updated_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'PENDING', NULL, ?, ?)
                   ON CONFLICT(id) DO UPDATE SET title=excluded.title, authors=excluded.authors, year=excluded.year,
                       venue=excluded.venue, doi=excluded.doi, pmid=excluded.pmid, abstract=excluded.abstract,
                       source_path=excluded.source_path, content_md5=excluded.content_md5, metadata=excluded.metadata,
                       payload=excluded.payload, scope=excluded.scope, profile=excluded.profile, status='PENDING',
                       error=NULL, updated_at=excluded.updated_at""",
                (doc.id, doc.title, _json(doc.authors), doc.year, doc.venue, doc.doi, doc.pmid, doc.abstract,
                 doc.source_path, doc.content_md5, _json(doc.metadata), _json(doc.to_dict()), scope, profile, now, now),
            )

    def add_failed_file(self, doc_id: str, path: str, reason: str) -> None:
        now = time.time()
        self._exec(
            """INSERT INTO documents(id, title, source_path, status, error, created_at, updated_at)
               VALUES (?, ?, ?, 'FAILED', ?, ?, ?)
               ON CONFLICT(id) DO UPDATE SET status='FAILED', error=excluded.error, updated_at=excluded.updated_at""",
            (doc_id, Path(path).name, path, reason, now, now),
        )

    def set_status(self, doc_id: str, status: DocStatus, error: str | None = None) -> None:
        now = time.time()
        processed = now if status == DocStatus.PROCESSED else None
        self._exec(
            "UPDATE documents SET status = ?, error = ?, updated_at = ?, processed_at = COALESCE(?, processed_at) WHERE id = ?",
            (status.value, error, now, processed, doc_id),
        )

    def reset_stale_processing(self) -> list[str]:
        """Documents left PROCESSING by a crash go back to PENDING (their work was never committed)."""
        with self.transaction() as conn:
            ids = [r[0] for r in conn.execute("SELECT id FROM documents WHERE status = 'PROCESSING'")]
            conn.execute("UPDATE documents SET status = 'PENDING', updated_at = ? WHERE status = 'PROCESSING'", (time.time(),))
        return ids

    def _row(self, r: sqlite3.Row) -> DocumentRow:
        return DocumentRow(
            id=r["id"], title=r["title"], status=DocStatus(r["status"]), source_path=r["source_path"], scope=r["scope"],
            profile=r["profile"], error=r["error"], created_at=r["created_at"], updated_at=r["updated_at"],
            chunks=r["n_chunks"], content_md5=r["content_md5"], authors=json.loads(r["authors"]), year=r["year"],
            venue=r["venue"], doi=r["doi"], pmid=r["pmid"], metadata=json.loads(r["metadata"]),
        )

    _DOC_SELECT = """SELECT d.*, (SELECT COUNT(*) FROM chunks c WHERE c.document_id = d.id) AS n_chunks FROM documents d"""

    def get_document(self, doc_id: str) -> DocumentRow | None:
        r = self._exec(f"{self._DOC_SELECT} WHERE d.id = ?", (doc_id,)).fetchone()
        return self._row(r) if r else None

    def documents_by_id(self, ids: Iterable[str]) -> dict[str, DocumentRow]:
        ids = list(set(ids))
        out: dict[str, DocumentRow] = {}
        for part in batches(ids):
            q = f"{self._DOC_SELECT} WHERE d.id IN ({','.join('?' * len(part))})"
            out.update({r["id"]: self._row(r) for r in self._exec(q, part)})
        return out

    def load_document(self, doc_id: str) -> Document | None:
        r = self._exec("SELECT payload FROM documents WHERE id = ?", (doc_id,)).fetchone()
        return Document.from_dict(json.loads(r[0])) if r and r[0] else None

    def document_to_process(self, doc_id: str) -> tuple[Document, str] | None:
        """A document's parsed form and scope, read without waiting for a transaction another
        thread holds open (the lookup connection; WAL readers never wait for the writer)."""
        rows = self._lookup("SELECT payload, scope FROM documents WHERE id = ?", (doc_id,))
        if not rows or not rows[0][0]:
            return None
        return Document.from_dict(json.loads(rows[0][0])), rows[0][1]

    def list_documents(self, status: DocStatus | None = None) -> list[DocumentRow]:
        if status is None:
            rows = self._exec(f"{self._DOC_SELECT} ORDER BY d.created_at, d.id")
        else:
            rows = self._exec(f"{self._DOC_SELECT} WHERE d.status = ? ORDER BY d.created_at, d.id", (status.value,))
        return [self._row(r) for r in rows]

    def pending_largest_first(self) -> list[str]:
        """Ids of PENDING documents, largest first: long papers start early, short ones fill the
        end of a run (a shorter tail of half-idle LLM slots)."""
        rows = self._exec("SELECT id FROM documents WHERE status = 'PENDING' ORDER BY length(payload) DESC, id")
        return [r[0] for r in rows]

    def set_scope(self, doc_id: str, scope: str) -> None:
        self._exec("UPDATE documents SET scope = ? WHERE id = ?", (scope, doc_id))

    def remove_document_row(self, doc_id: str) -> None:
        self._exec("DELETE FROM documents WHERE id = ?", (doc_id,))

    # -- chunks --------------------------------------------------------------------------

    def insert_chunks(self, chunks: Sequence[Chunk], scope: str = "full") -> None:
        with self.transaction() as conn:
            conn.executemany(
                """INSERT OR REPLACE INTO chunks(id, document_id, ordinal, section, char_start, char_end, page_start,
                       page_end, tokens, text, header, scope) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                [(c.id, c.document_id, c.ordinal, c.section, c.char_start, c.char_end, c.page_start, c.page_end,
                  c.tokens, c.text, c.header, scope) for c in chunks],
            )

    @staticmethod
    def _chunk(r: sqlite3.Row) -> Chunk:
        return Chunk(
            id=r["id"], document_id=r["document_id"], ordinal=r["ordinal"], text=r["text"], tokens=r["tokens"],
            section=r["section"], char_start=r["char_start"], char_end=r["char_end"], page_start=r["page_start"],
            page_end=r["page_end"], header=r["header"],
        )

    def chunks_of(self, doc_id: str) -> list[Chunk]:
        rows = self._exec("SELECT * FROM chunks WHERE document_id = ? ORDER BY ordinal", (doc_id,))
        return [self._chunk(r) for r in rows]

    def get_chunks(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        ids = list(dict.fromkeys(chunk_ids))
        out: dict[str, Chunk] = {}
        for part in batches(ids):
            rows = self._exec(f"SELECT * FROM chunks WHERE id IN ({','.join('?' * len(part))})", part)
            out.update({r["id"]: self._chunk(r) for r in rows})
        return out

    def delete_chunks_of(self, doc_id: str) -> list[str]:
        with self.transaction() as conn:
            ids = [r[0] for r in conn.execute("SELECT id FROM chunks WHERE document_id = ?", (doc_id,))]
            conn.execute("DELETE FROM chunks WHERE document_id = ?", (doc_id,))
            self.delete_vectors("chunk", ids)
        return ids

    def count(self, table: str) -> int:
        if table not in {"documents", "chunks", "entities", "relations", "keywords", "mentions", "llm_cache", "llm_calls"}:
            raise ValueError(table)
        self.flush_records()
        return int(self._exec(f"SELECT COUNT(*) FROM {table}").fetchone()[0])

    def status_counts(self) -> dict[str, int]:
        return {r[0]: r[1] for r in self._exec("SELECT status, COUNT(*) FROM documents GROUP BY status")}

    # -- vectors -------------------------------------------------------------------------

    def put_vectors(self, namespace: str, ids: Sequence[str], vectors: np.ndarray) -> None:
        if not len(ids):
            return
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        with self.transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO vectors(namespace, id, vector) VALUES (?, ?, ?)",
                [(namespace, i, v.tobytes()) for i, v in zip(ids, vectors, strict=True)],
            )
            self._pending_index_ops.append(("add", namespace, (list(ids), vectors)))

    def delete_vectors(self, namespace: str, ids: Sequence[str]) -> None:
        if not len(ids):
            return
        with self.transaction() as conn:
            conn.executemany("DELETE FROM vectors WHERE namespace = ? AND id = ?", [(namespace, i) for i in ids])
            self._pending_index_ops.append(("remove", namespace, list(ids)))

    def _apply_index_ops(self) -> None:
        ops, self._pending_index_ops = self._pending_index_ops, []
        for op, namespace, payload in ops:
            index = self._indexes.get(namespace)
            if index is None:
                continue  # not loaded yet: it will be built from the table when first used
            if op == "add":
                ids, vectors = payload
                index.add(ids, vectors)
            else:
                index.remove(payload)

    def iter_vectors(self, namespace: str) -> Iterator[tuple[str, np.ndarray]]:
        for r in self._exec("SELECT id, vector FROM vectors WHERE namespace = ?", (namespace,)).fetchall():
            yield r[0], np.frombuffer(r[1], dtype=np.float32)

    def vector_index(self, namespace: str, dim: int | None = None) -> ExactVectorIndex:
        with self._lock:
            index = self._indexes.get(namespace)
            if index is None:
                dim = dim or int(self.get_meta("embedding_dim") or 0)
                if not dim:
                    raise WorkspaceError("the workspace records no embedding dimension yet; index documents first")
                index = ExactVectorIndex(dim)
                rows = self._exec("SELECT id, vector FROM vectors WHERE namespace = ?", (namespace,)).fetchall()
                if rows:
                    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim)
                    index.add([r[0] for r in rows], matrix)
                self._indexes[namespace] = index
            return index

    def get_vectors(self, namespace: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        index = self.vector_index(namespace)
        return {i: v for i in ids if (v := index.get(i)) is not None}

    # -- conversation sessions -------------------------------------------------------------

    def session_history(self, name: str, limit: int = 6) -> list[tuple[str, str]]:
        rows = self._exec("SELECT question, answer FROM sessions WHERE name = ? ORDER BY turn DESC LIMIT ?", (name, limit))
        return [(r[0], r[1]) for r in reversed(rows.fetchall())]

    def add_session_turn(self, name: str, question: str, answer: str) -> None:
        with self.transaction() as conn:
            turn = conn.execute("SELECT COALESCE(MAX(turn), 0) + 1 FROM sessions WHERE name = ?", (name,)).fetchone()[0]
            conn.execute("INSERT INTO sessions(name, turn, question, answer, created_at) VALUES (?, ?, ?, ?, ?)",
                         (name, turn, question, answer, time.time()))
