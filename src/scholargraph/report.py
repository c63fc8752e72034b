"""What an indexing run reports: the documents it processed, skipped or failed, and one outcome per
input file — every path given (or found in a directory given) appears once.

A run of many records (a CSV of 1M rows) must not hold one entry per record: each list of the
report, and each file's list of documents, keeps its first ``REPORT_IDS`` items and counts the
others (``IndexReport.left_out``, ``FileOutcome.documents_total``); the JSON says so (``truncated``)
and where the full list is (``FULL_LIST``, read from the store)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .digests import DigestMap
from .models import DocStatus, Usage

if TYPE_CHECKING:
    from .store.base import DocumentRow

# outcomes of one input file, worst first (a file of several papers takes the worst of theirs)
# ("skipped": read, but it holds no papers, e.g. a JSON map of file names to titles)
FILE_OUTCOMES = ("failed", "pending", "being indexed by another worker", "incomplete", "indexed",
                 "indexed by another worker", "duplicate", "already indexed", "skipped")
REPORT_IDS = 1000  # items a run report lists per list and per file; the others are counted, not kept
FULL_LIST = "`scholargraph status --json` lists every document with its status and source_path"
BOUNDED = ("added", "skipped", "failed", "incomplete", "warnings")  # the report's lists of one item per record
JSON_NAMES = {"added": "processed"}  # the list's name in the report's JSON, where it differs


def report_ids() -> int:
    """``REPORT_IDS``, read when used (tests set it small)."""
    return REPORT_IDS


@dataclass
class FileOutcome:
    path: str
    outcome: str = "indexed"
    documents: list[str] = field(default_factory=list)
    duplicate_of: str | None = None  # duplicate: the path whose paper this file repeats
    error: str | None = None  # failed: why
    reason: str | None = None  # skipped: why
    documents_total: int | None = None  # set when ``documents`` lists only the first of more

    def to_json(self) -> dict:
        out: dict[str, Any] = {"path": self.path, "outcome": self.outcome, "documents": self.documents}
        if self.documents_total is not None and self.documents_total > len(self.documents):
            out["truncated"] = {"documents": {"listed": len(self.documents), "total": self.documents_total},
                                "full_list": FULL_LIST}
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
    left_out: dict[str, int] = field(default_factory=dict)  # list name (BOUNDED) -> items counted, not kept

    def keep(self, name: str, item: Any) -> None:
        """``item`` added to the list ``name`` (one of ``BOUNDED``), or only counted once it holds
        ``REPORT_IDS`` items."""
        items = getattr(self, name)
        if len(items) < report_ids():
            items.append(item)
        else:
            self.left_out[name] = self.left_out.get(name, 0) + 1

    def merge(self, name: str, other: IndexReport, first: bool = False) -> None:
        """``other``'s list ``name`` added to this one's (``first``: before it), within the bound."""
        items = getattr(other, name) + getattr(self, name) if first else getattr(self, name) + getattr(other, name)
        limit = report_ids()
        left = self.left_out.get(name, 0) + other.left_out.get(name, 0) + max(0, len(items) - limit)
        setattr(self, name, items[:limit])
        if left:
            self.left_out[name] = left

    def total(self, name: str) -> int:
        """How many items the list ``name`` had, kept or not."""
        return len(getattr(self, name)) + self.left_out.get(name, 0)

    def to_json(self) -> dict:
        from .models import usage_to_json

        out = {
            "profile": self.profile, "processed": self.added, "skipped": self.skipped, "failed": self.failed,
            "resumed": self.resumed, "warnings": self.warnings, "notes": self.notes,
            "files": [f.to_json() for f in self.files], "chunks": self.chunks,
            "chunk_failures": self.chunk_failures, "incomplete": self.incomplete, "usage": usage_to_json(self.usage),
            "seconds": round(self.seconds, 3), "stopped": self.stopped,
        }
        truncated = {JSON_NAMES.get(name, name): {"listed": len(getattr(self, name)), "total": self.total(name)}
                     for name in BOUNDED if self.left_out.get(name)}
        if truncated:  # a small run's report is exactly the lists
            out["truncated"] = {**truncated, "full_list": FULL_LIST}
        return out

    @property
    def ok(self) -> bool:
        """Nothing failed, nothing is missing, nothing left for later."""
        return not self.failed and self.stopped is None and not self.chunk_failures


@dataclass
class _FileDocuments:
    """One input file's documents: the first ``REPORT_IDS`` by id with their outcome (as registered,
    then as processed), the others counted, with the worst of their outcomes."""

    outcomes: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    worst_beyond: tuple[str, str | None] | None = None  # of the documents not listed

    def set(self, doc_id: str, outcome: tuple[str, str | None]) -> None:
        if doc_id in self.outcomes:
            self.outcomes[doc_id] = outcome
        elif self.worst_beyond is None or _rank(outcome) < _rank(self.worst_beyond):
            self.worst_beyond = outcome

    def worst(self) -> tuple[str, str | None]:
        worst: tuple[str, str | None] = ("already indexed", None)
        for outcome in [*self.outcomes.values(), *([self.worst_beyond] if self.worst_beyond else [])]:
            if _rank(outcome) < _rank(worst):
                worst = outcome
        return worst


QUEUED = ("queued", None)  # a listed document's outcome until it is processed or the run ends


def _rank(outcome: tuple[str, str | None]) -> int:
    return FILE_OUTCOMES.index(outcome[0])


class FileLedger:
    """Which input file led to which document, and how each document fared, for ``report.files``.
    Per document of the run it keeps an 8-byte digest (the first file holding it, for duplicates
    across files); ids only for the first ``REPORT_IDS`` documents of each file and for documents
    registered to be processed and not processed yet (those in flight, or taken by other workers)."""

    def __init__(self) -> None:
        self._files: dict[str, FileOutcome] = {}
        self._paths: list[str] = []  # the input paths that registered documents, in order
        self._path_index: dict[str, int] = {}
        self._first_path = DigestMap()  # document id -> index in _paths of the first path of this run holding it
        self._documents: dict[str, _FileDocuments] = {}
        self._unsettled: dict[str, str] = {}  # document registered to be processed, not processed by this run -> path
        self._plain: dict[str, tuple[str, None]] = {}  # the outcomes without a detail, shared
        # files register documents in the parsing thread while the event loop settles processed ones
        self._lock = threading.Lock()

    def failed_file(self, path: str, reason: str) -> None:
        self._files[path] = FileOutcome(path, "failed", error=reason)

    def skipped_file(self, path: str, reason: str) -> None:
        self._files[path] = FileOutcome(path, "skipped", reason=reason)

    def _outcome(self, outcome: str, detail: str | None) -> tuple[str, str | None]:
        return (outcome, detail) if detail is not None else self._plain.setdefault(outcome, (outcome, None))

    def document(self, path: str, doc_id: str, outcome: str, detail: str | None = None) -> None:
        """``outcome`` of a document registered from ``path``: queued (to process), already indexed,
        or duplicate (``detail``: the other path)."""
        with self._lock:
            self._document(path, doc_id, outcome, detail)

    def _document(self, path: str, doc_id: str, outcome: str, detail: str | None) -> None:
        entry = self._files.setdefault(path, FileOutcome(path))
        of_file = self._documents.setdefault(path, _FileDocuments())
        index = self._path_index.setdefault(path, len(self._paths))
        if index == len(self._paths):
            self._paths.append(path)
        seen = self._first_path.get(doc_id)
        if seen is None:
            self._first_path.setdefault(doc_id, index)
        elif self._paths[seen] != path:  # the same paper twice in this run
            outcome, detail = "duplicate", self._paths[seen]
        if seen is None or (outcome == "duplicate" and doc_id not in of_file.outcomes):  # a new document of the file
            entry.documents_total = (entry.documents_total or 0) + 1
            if len(entry.documents) < report_ids():
                entry.documents.append(doc_id)
                of_file.outcomes[doc_id] = QUEUED
        if outcome == "queued":  # its outcome is known once processed (``settled``) or at the end (``outcomes``)
            self._unsettled[doc_id] = path
            if doc_id in of_file.outcomes:
                of_file.outcomes[doc_id] = QUEUED
        else:
            of_file.set(doc_id, self._outcome(outcome, detail))

    def settled(self, doc_id: str, outcome: str, detail: str | None = None) -> None:
        """What became of a document this run processed: indexed, incomplete or failed (``detail``:
        why); the first outcome stays (a document processed again in the same run is one retried)."""
        with self._lock:
            path = self._unsettled.pop(doc_id, None)
            if path is not None:
                self._documents[path].set(doc_id, self._outcome(outcome, detail))

    def first_path(self, doc_id: str) -> str | None:
        index = self._first_path.get(doc_id)
        return self._paths[index] if index is not None else None

    def unsettled_ids(self) -> set[str]:
        """Documents of this run's files that were to be processed and that this run did not process
        (left pending, or taken by another worker)."""
        with self._lock:
            return set(self._unsettled)

    def unsettled_count(self) -> int:
        return len(self._unsettled)

    def ids_held(self) -> int:
        """Document ids the ledger holds (not the per-document digests)."""
        return sum(len(d.outcomes) for d in self._documents.values()) + len(self._unsettled)

    def outcomes(self, pending: set[str], others: dict[str, DocumentRow] | None = None) -> list[FileOutcome]:
        """One outcome per file, in the order the files were read. ``pending``: the unsettled
        documents still PENDING; ``others``: those another worker took (workers sharing a database),
        as they stand now."""
        others = others or {}
        for doc_id, path in self._unsettled.items():
            self._documents[path].set(doc_id, self._outcome(*_unsettled_outcome(doc_id, pending, others.get(doc_id))))
        out = []
        for path, entry in self._files.items():
            if entry.outcome in ("failed", "skipped") and not entry.documents:
                out.append(entry)
                continue
            if entry.documents_total == len(entry.documents):
                entry.documents_total = None  # every document listed
            worst, detail = self._documents[path].worst()
            entry.outcome = worst
            if worst == "duplicate":
                entry.duplicate_of = detail
            elif worst == "failed":
                entry.error = detail
            out.append(entry)
        return out


def _unsettled_outcome(doc_id: str, pending: set[str], row: DocumentRow | None) -> tuple[str, str | None]:
    """What became of a document this run registered (or found registered) to be processed and did
    not process itself."""
    if doc_id in pending:
        return "pending", None
    if row is None:  # this run's own (stopped or repaired)
        return "indexed", None
    if row.status == DocStatus.PROCESSING:
        return "being indexed by another worker", None
    if row.status == DocStatus.FAILED:
        return "failed", row.error
    return "indexed by another worker", None
