"""The read side of ``DocumentStore`` (:mod:`.base`), one role object for both backends over the
backend's :class:`~.units.SqlSeam`; :class:`KeepsDocumentReads` answers the store's part of the
contract from it, once for both. Registering, claiming and releasing documents stay each backend's
own (PostgreSQL workers lease their claims)."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence

from ..models import ChunkFailure, DocStatus, Document
from .base import DocumentRow
from .units import SqlSeam

DOC_COLUMNS = ("id, title, status, source_path, scope, profile, error, created_at, updated_at, content_md5, authors, "
               "year, venue, doi, pmid, metadata")
_DOC_SELECT = (f"SELECT {', '.join('d.' + c.strip() for c in DOC_COLUMNS.split(','))}, "
               "(SELECT count(*) FROM chunks c WHERE c.document_id = d.id) AS n_chunks FROM documents d")
_FAILURE_SELECT = "SELECT document_id, chunk_id, reason, raw, profile, attempts FROM chunk_failures"


def document_row(r: Sequence) -> DocumentRow:
    """A row of ``DOC_COLUMNS`` and the document's chunk count."""
    return DocumentRow(
        id=r[0], title=r[1], status=DocStatus(r[2]), source_path=r[3], scope=r[4], profile=r[5], error=r[6],
        created_at=r[7], updated_at=r[8], content_md5=r[9], authors=json.loads(r[10]), year=r[11], venue=r[12],
        doi=r[13], pmid=r[14], metadata=json.loads(r[15]), chunks=int(r[16]),
    )


class DocumentReads:
    """Documents, their status and their unrepaired chunk failures, read."""

    def __init__(self, sql: SqlSeam):
        self.sql = sql

    def pending_ids(self, only: Collection[str] | None = None) -> list[str]:
        if only is None:
            return [r[0] for r in self.sql.rows("SELECT id FROM documents WHERE status = 'PENDING' "
                                                "ORDER BY size DESC, id", ())]
        rows: list = []  # the named documents alone, not every pending one
        for part in self.sql.parts(sorted(set(only))):
            of_ids, params = self.sql.one_of("id", part)
            rows += self.sql.rows(f"SELECT id, size FROM documents WHERE status = 'PENDING' AND {of_ids}", params)
        return [r[0] for r in sorted(rows, key=lambda r: (-int(r[1]), r[0]))]

    def pending_count(self, only: Collection[str] | None = None) -> int:
        if only is not None:
            return len(self.pending_ids(only))
        return int(self.sql.rows("SELECT COUNT(*) FROM documents WHERE status = 'PENDING'", ())[0][0])

    def document_ids(self, status: DocStatus, limit: int | None = None) -> list[str]:
        # the order of the claim index (status, size DESC, id): a range of it, the first row for limit 1
        rows = self.sql.rows(f"SELECT id FROM documents WHERE status = {self.sql.mark} ORDER BY size DESC, id"
                             + (f" LIMIT {int(limit)}" if limit else ""), (status.value,))
        return [r[0] for r in rows]

    def document_to_process(self, doc_id: str) -> tuple[Document, str] | None:
        rows = self.sql.rows(f"SELECT payload, scope FROM documents WHERE id = {self.sql.mark}", (doc_id,))
        if not rows or not rows[0][0]:
            return None
        return Document.from_dict(json.loads(rows[0][0])), rows[0][1]

    def get_document(self, doc_id: str) -> DocumentRow | None:
        rows = self.sql.rows(f"{_DOC_SELECT} WHERE d.id = {self.sql.mark}", (doc_id,))
        return document_row(rows[0]) if rows else None

    def documents_by_id(self, ids: Iterable[str]) -> dict[str, DocumentRow]:
        out: dict[str, DocumentRow] = {}
        for part in self.sql.parts(set(ids)):
            of_ids, params = self.sql.one_of("d.id", part)
            out.update({r[0]: document_row(r) for r in self.sql.rows(f"{_DOC_SELECT} WHERE {of_ids}", params)})
        return out

    def load_document(self, doc_id: str) -> Document | None:
        rows = self.sql.rows(f"SELECT payload FROM documents WHERE id = {self.sql.mark}", (doc_id,))
        return Document.from_dict(json.loads(rows[0][0])) if rows and rows[0][0] else None

    def list_documents(self, status: DocStatus | None = None) -> list[DocumentRow]:
        if status is None:
            rows = self.sql.rows(f"{_DOC_SELECT} ORDER BY d.created_at, d.id", ())
        else:
            rows = self.sql.rows(f"{_DOC_SELECT} WHERE d.status = {self.sql.mark} ORDER BY d.created_at, d.id",
                                 (status.value,))
        return [document_row(r) for r in rows]

    def status_counts(self) -> dict[str, int]:
        return {r[0]: int(r[1]) for r in self.sql.rows("SELECT status, count(*) FROM documents GROUP BY status", ())}

    def chunk_failures(self, doc_ids: Collection[str] | None = None) -> dict[str, list[ChunkFailure]]:
        order = "ORDER BY document_id, created_at, chunk_id"
        if doc_ids is None:
            rows = self.sql.rows(f"{_FAILURE_SELECT} {order}", ())
        else:
            rows = []
            for part in self.sql.parts(sorted(set(doc_ids))):
                of_docs, params = self.sql.one_of("document_id", part)
                rows += self.sql.rows(f"{_FAILURE_SELECT} WHERE {of_docs} {order}", params)
        out: dict[str, list[ChunkFailure]] = {}
        for r in rows:
            out.setdefault(r[0], []).append(ChunkFailure(r[1], r[2], r[3], r[4], int(r[5])))
        return out

    def chunk_failure_counts(self) -> dict[str, int]:
        return {r[0]: int(r[1]) for r in self.sql.rows(
            "SELECT document_id, count(*) FROM chunk_failures GROUP BY document_id", ())}


class KeepsDocumentReads:
    """A store whose document reads are its ``documents`` role object."""

    documents: DocumentReads

    def pending_ids(self, only: Collection[str] | None = None) -> list[str]:
        return self.documents.pending_ids(only)

    def pending_count(self, only: Collection[str] | None = None) -> int:
        return self.documents.pending_count(only)

    def document_ids(self, status: DocStatus, limit: int | None = None) -> list[str]:
        return self.documents.document_ids(status, limit)

    def document_to_process(self, doc_id: str) -> tuple[Document, str] | None:
        return self.documents.document_to_process(doc_id)

    def get_document(self, doc_id: str) -> DocumentRow | None:
        return self.documents.get_document(doc_id)

    def documents_by_id(self, ids: Iterable[str]) -> dict[str, DocumentRow]:
        return self.documents.documents_by_id(ids)

    def load_document(self, doc_id: str) -> Document | None:
        return self.documents.load_document(doc_id)

    def list_documents(self, status: DocStatus | None = None) -> list[DocumentRow]:
        return self.documents.list_documents(status)

    def status_counts(self) -> dict[str, int]:
        return self.documents.status_counts()

    def chunk_failures(self, doc_ids: Collection[str] | None = None) -> dict[str, list[ChunkFailure]]:
        return self.documents.chunk_failures(doc_ids)

    def chunk_failure_counts(self) -> dict[str, int]:
        return self.documents.chunk_failure_counts()
