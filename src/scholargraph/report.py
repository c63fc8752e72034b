"""What an indexing run reports: the documents it processed, skipped or failed, and one outcome per
input file — every path given (or found in a directory given) appears once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .models import DocStatus, Usage

if TYPE_CHECKING:
    from .store.base import DocumentRow

# outcomes of one input file, worst first (a file of several papers takes the worst of theirs)
# ("skipped": read, but it holds no papers, e.g. a JSON map of file names to titles)
FILE_OUTCOMES = ("failed", "pending", "being indexed by another worker", "incomplete", "indexed",
                 "indexed by another worker", "duplicate", "already indexed", "skipped")


@dataclass
class FileOutcome:
    path: str
    outcome: str = "indexed"
    documents: list[str] = field(default_factory=list)
    duplicate_of: str | None = None  # duplicate: the path whose paper this file repeats
    error: str | None = None  # failed: why
    reason: str | None = None  # skipped: why

    def to_json(self) -> dict:
        out = {"path": self.path, "outcome": self.outcome, "documents": self.documents}
        if self.reason is not None:
            out["reason"] = self.reason
        if self.duplicate_of is not None:
            out["duplicate_of"] = self.duplicate_of
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass
class IndexReport:
    profile: str
    added: list[str] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    failed: list[dict] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: list[FileOutcome] = field(default_factory=list)
    chunks: int = 0
    chunk_failures: int = 0  # chunks of this run's papers still without usable model output
    incomplete: list[str] = field(default_factory=list)  # papers processed with such chunks
    usage: dict[str, Usage] = field(default_factory=dict)
    seconds: float = 0.0
    stopped: str | None = None

    def to_json(self) -> dict:
        from .models import usage_to_json

        return {
            "profile": self.profile, "processed": self.added, "skipped": self.skipped, "failed": self.failed,
            "resumed": self.resumed, "warnings": self.warnings, "notes": self.notes,
            "files": [f.to_json() for f in self.files], "chunks": self.chunks,
            "chunk_failures": self.chunk_failures, "incomplete": self.incomplete, "usage": usage_to_json(self.usage),
            "seconds": round(self.seconds, 3), "stopped": self.stopped,
        }

    @property
    def ok(self) -> bool:
        """Nothing failed, nothing is missing, nothing left for later."""
        return not self.failed and self.stopped is None and not self.chunk_failures


class FileLedger:
    """Which input file led to which document, and how each document fared, for ``report.files``."""

    def __init__(self) -> None:
        self._files: dict[str, FileOutcome] = {}
        self._first_path: dict[str, str] = {}  # document id -> the first path of this run that holds it
        # path -> id -> (outcome, duplicate_of | error): one map per file, no tuple key per document, and
        # the outcomes without a detail shared (a CSV of 1M rows: ~70 B per row less than tuple keys and values)
        self._document_outcome: dict[str, dict[str, tuple[str, str | None]]] = {}
        self._plain: dict[str, tuple[str, None]] = {}

    def failed_file(self, path: str, reason: str) -> None:
        self._files[path] = FileOutcome(path, "failed", error=reason)

    def skipped_file(self, path: str, reason: str) -> None:
        self._files[path] = FileOutcome(path, "skipped", reason=reason)

    def document(self, path: str, doc_id: str, outcome: str, detail: str | None = None) -> None:
        """``outcome`` of a document registered from ``path``: queued (to process), already indexed,
        or duplicate (``detail``: the other path)."""
        entry = self._files.setdefault(path, FileOutcome(path))
        of_file = self._document_outcome.setdefault(entry.path, {})
        if doc_id not in of_file:  # a dict lookup, not a scan of the file's documents (1M CSV rows)
            entry.documents.append(doc_id)
        first = self._first_path.setdefault(doc_id, path)
        if first != path:
            outcome, detail = "duplicate", first
        of_file[doc_id] = (outcome, detail) if detail is not None else self._plain.setdefault(outcome, (outcome, None))

    def first_path(self, doc_id: str) -> str | None:
        return self._first_path.get(doc_id)

    def queued_ids(self) -> set[str]:
        """Documents of this run's files that were to be processed (by this worker or another)."""
        return {doc_id for of_file in self._document_outcome.values()
                for doc_id, (outcome, _) in of_file.items() if outcome == "queued"}

    def outcomes(self, report: IndexReport, pending: set[str], others: dict[str, DocumentRow] | None = None
                 ) -> list[FileOutcome]:
        """One outcome per file, in the order the files were read. ``others``: documents of this
        run's files that this run did not process (workers sharing a database), as they stand now."""
        others = others or {}
        failed = {f["id"]: f["error"] for f in report.failed if "id" in f}
        processed, incomplete = set(report.added), set(report.incomplete)
        out = []
        for path, entry in self._files.items():
            if entry.outcome in ("failed", "skipped") and not entry.documents:
                out.append(entry)
                continue
            worst, detail = "already indexed", None
            for doc_id in entry.documents:
                outcome, extra = self._document_outcome[path][doc_id]
                if outcome == "queued":
                    outcome, extra = _queued_outcome(doc_id, failed, incomplete, processed, pending, others.get(doc_id))
                if FILE_OUTCOMES.index(outcome) < FILE_OUTCOMES.index(worst):
                    worst, detail = outcome, extra
            entry.outcome = worst
            if worst == "duplicate":
                entry.duplicate_of = detail
            elif worst == "failed":
                entry.error = detail
            out.append(entry)
        return out


def _queued_outcome(doc_id: str, failed: dict[str, str], incomplete: set[str], processed: set[str], pending: set[str],
                    row: DocumentRow | None) -> tuple[str, str | None]:
    """What became of a document this run registered (or found registered) to be processed."""
    if doc_id in failed:
        return "failed", failed[doc_id]
    if doc_id in incomplete:
        return "incomplete", None
    if doc_id in processed:
        return "indexed", None
    if doc_id in pending:
        return "pending", None
    if row is None:  # this run's own (stopped or repaired)
        return "indexed", None
    if row.status == DocStatus.PROCESSING:
        return "being indexed by another worker", None
    if row.status == DocStatus.FAILED:
        return "failed", row.error
    return "indexed by another worker", None
