"""Indexing pipeline (thesis 000 §4.1–4.3): document process flow -> document index flow ->
element extraction flow.

* Process: files are parsed, each document gets its id (given paper id or content MD5) and a
  PENDING row holding the parsed document, so work can resume without the source file.
* Index: pending documents are claimed (``DocumentStore.claim_pending``: PENDING -> PROCESSING, largest
  first) and processed concurrently (bounded). Every pending document is the run's work: those
  pending at the start, those its files register as they are parsed, and those other workers
  register meanwhile (PostgreSQL: processes share one queue). A worker claims only what it can
  start now, plus one ready for the next free slot, so the others find the rest. Each document is
  chunked, embedded and extracted, then committed
  as ONE unit of work together with its PROCESSED status — a crash never leaves half a document.
  Documents left PROCESSING by a crash are resumed.
* Extraction failures of single chunks are recorded and the document continues, marked
  incomplete (``status``; the run exits non-zero); the next run retries exactly those chunks (for
  an extractor that works chunk by chunk; others process the document again). A document that
  fails as a whole is FAILED with the reason; an LLM server that disappears mid-run stops the run
  and leaves the remaining documents PENDING for the next run.
* Graph maintenance a run owes (entities to compare in the resolution pass) is queued in the
  commit that creates it (``MaintenanceStore``), so a kill in the final phase leaves it to the
  next run instead of losing it (docs/reliability.md).
* Every input path is reported once (``report.files``): indexed, already indexed, duplicate of
  another path, incomplete, pending, or failed with the reason.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import itertools
from collections import deque
from collections.abc import AsyncIterator, Callable, Generator, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..config import Settings
from ..errors import LeaseLostError, LLMUnavailableError, LoadError, NotFoundError, NotPapersError, ScholarGraphError
from ..extract.base import Extractor
from ..extract.limits import ChunkLimits, limit_per_chunk
from ..graph.merge import KeyFn, entity_keys, plan_writes
from ..graph.refresh import GraphRefresher
from ..graph.resolution_pass import NameMates, resolve_touched
from ..graph.resolve import ResolutionSettings
from ..ingest.chunking import chunk_document
from ..ingest.identity import content_md5
from ..ingest.registry import LoadOptions, display_path, empty_directory_reason, iter_file, iter_files
from ..ingest.tokenizer import TextTokenizer
from ..llm.embeddings import Embedder
from ..models import Chunk, DocStatus, Document, Extraction, GraphWrites, Scope, Usage
from ..progress import NullProgress, Progress
from ..report import FileLedger, IndexReport, report_ids
from ..store.base import DocumentRow, GraphRemoval, IndexingStore
from .views import Deletion

INTRO_KINDS = {"front", "abstract", "introduction"}
CLAIM_POLL_S = 1.0  # an idle worker waiting for its next parsed file looks this often for others' documents
REGISTER_BATCH = 256  # documents of a file registered (made PENDING) in one commit
IN_FLIGHT_POLL_S = 0.05  # reading waits for the in-flight documents to drop below the bound, looking this often
IN_FLIGHT_PRUNE_S = 5.0  # and this often for those another worker took (PostgreSQL)
RESOLVE_BLOCK = 256  # entities one PostgreSQL worker claims at a time in the shared end-of-run resolution
T = TypeVar("T")
__all__ = ["IndexReport", "Pipeline", "select_scope"]


@dataclass
class _Analysis:
    """A document chunked, embedded and extracted, waiting for its commit."""

    doc: Document
    chunks: list[Chunk]
    vectors: np.ndarray
    extraction: Extraction
    keyword_texts: list[str]
    keyword_vectors: np.ndarray | None
    repair: bool = False  # only the document's failed chunks, extracted again (its chunks are stored)


class _Slots:
    """Documents being read and analysed at once (``Pipeline.parallel_documents``); ``free`` says how
    many more could start now (a worker claims no more than that, plus one)."""

    def __init__(self, n: int):
        self._semaphore = asyncio.Semaphore(n)
        self.free = n

    async def acquire(self) -> None:
        await self._semaphore.acquire()
        self.free -= 1

    def release(self) -> None:
        self.free += 1
        self._semaphore.release()


class _ProgressTotal:
    """The documents of a run's progress total: those PENDING at its start (a count: no id is read),
    those its files register (``arrived``), and those claimed beyond the count (registered by other
    workers meanwhile). It remembers the documents between their registration or claim and their
    end (``done``), not every document of the run."""

    def __init__(self, progress: Progress, pending: int):
        self.progress = progress
        self.uncounted_claims = pending  # claims the count at the start already holds
        self.seen: set[str] = set()  # documents registered or claimed and not done yet (never counted twice)
        progress.start(pending)

    def done(self, doc_id: str) -> None:
        self.seen.discard(doc_id)

    def arrived(self, ids: list[str]) -> list[str]:
        """Documents a file of this run registered: in the total from now on (unless claimed already)."""
        new = [d for d in ids if d not in self.seen]
        self.seen.update(new)
        self.progress.add_total(len(new))
        return new

    def claimed(self, ids: list[str]) -> None:
        new = [d for d in ids if d not in self.seen]
        self.seen.update(new)
        counted = min(self.uncounted_claims, len(new))
        self.uncounted_claims -= counted
        self.progress.add_total(len(new) - counted)


def select_scope(doc: Document, scope: str) -> Document:
    """Scope ``intro``: title, abstract and introduction only (two-phase review, thesis §5.3.1)."""
    if scope != Scope.INTRO.value:
        return doc
    sections = [s for s in doc.sections if s.kind in INTRO_KINDS] or doc.sections[:1]
    return Document(**{**doc.__dict__, "sections": sections})


def _take(items: Iterator[T], n: int) -> list[T]:
    return list(itertools.islice(items, n))


async def _nothing() -> AsyncIterator[list[str]]:
    return
    yield


@contextmanager
def _long_lived_objects_frozen() -> Iterator[None]:
    """Keep what exists before the run (settings, models, caches) out of the garbage collector's
    full scans during it: each scan would otherwise stop the event loop for ~0.1 s."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def resolution_note(groups: Sequence[Sequence[str]]) -> str:
    """"merged 44 entities into 22": the entities of the merged groups, and the groups."""
    merged = sum(len(g) for g in groups)
    return (f"entity resolution merged {merged} entities into {len(groups)} ({merged - len(groups)} duplicates "
            "removed; see `scholargraph entities`, undo with `entities --split`)")


class Pipeline:
    def __init__(self, store: IndexingStore, settings: Settings, embedder: Embedder, tokenizer: TextTokenizer,
                 extractor: Extractor, key_fn: KeyFn, refresher: GraphRefresher, progress: Progress | None = None):
        self.store = store
        self.settings = settings
        self.embedder = embedder
        self.tokenizer = tokenizer
        self.extractor = extractor
        self.key_fn = key_fn
        self.refresher = refresher
        self.progress = progress or NullProgress()
        self._stop: str | None = None
        self._chunker: ThreadPoolExecutor | None = None  # set while run_pending runs
        self._parser: ThreadPoolExecutor | None = None  # likewise: the one thread that parses files
        self.files = FileLedger()  # input path -> documents and outcome, for report.files
        self.taken: set[str] = set()  # documents this run claimed and is processing (the others' are another worker's)
        self._in_flight: set[str] = set()  # documents this run registered from its files, not processed yet
        self.running: set[asyncio.Task[None]] = set()  # the documents being processed now (at most parallel_documents)
        self._settle_at = 0  # unsettled documents at which _settle_others looks again (at least 2 × REPORT_IDS)

    # -- process flow ---------------------------------------------------------------------

    def load_paths(self, paths: Sequence[str | Path], report: IndexReport, options: LoadOptions) -> list[Document]:
        files = self._files(paths, report, options)
        return [doc for path in files for doc in self.load_one(path, report, options)]

    def file_outcomes(self, report: IndexReport) -> None:
        """Fill ``report.files``: one outcome per input path (call when the run is over)."""
        unsettled = self.files.unsettled_ids()  # left pending, or to other workers
        others = unsettled - self.taken
        report.files = self.files.outcomes(set(self.store.pending_ids(unsettled)) if unsettled else set(),
                                           self.store.documents_by_id(others) if others else {})

    def _files(self, paths: Sequence[str | Path], report: IndexReport, options: LoadOptions) -> list[Path]:
        left_out: list[Path] = []
        files = list(iter_files(paths, options.exclude, left_out))
        if left_out:
            report.notes.append(f"excluded {len(left_out)} file(s) matching {', '.join(options.exclude)}")
        for path in map(Path, paths):  # a directory with nothing to read fails, as a named unsupported file does
            if path.is_dir() and not any(f == path or path in f.parents for f in files + left_out):
                report.keep("failed", {"path": display_path(path), "error": empty_directory_reason(path)})
        return files

    def load_one(self, path: Path, report: IndexReport, options: LoadOptions) -> list[Document]:
        """Parse one file; a file that cannot be parsed is recorded FAILED and yields nothing."""
        return list(self._documents(path, report, options))

    def _documents(self, path: Path, report: IndexReport, options: LoadOptions) -> Generator[Document]:
        """The documents of one file as it is read (a CSV row by row). A file that cannot be parsed
        is recorded FAILED (or skipped: no papers in it); when that is found after some documents,
        those stay (they are registered and indexed)."""
        warnings: list[str] = []
        read = 0
        try:
            for doc in iter_file(path, options, warnings):
                for w in doc.warnings:
                    report.keep("warnings", f"{path}: {w}")
                read += 1
                yield doc
        except NotPapersError as exc:
            self._record_skipped_file(path, exc.reason, report)
        except LoadError as exc:
            self._record_failed_file(path, exc.reason + (f" ({read} document(s) before it were read)" if read else ""),
                                     report)
        except Exception as exc:  # a loader bug must not stop the other files
            self._record_failed_file(path, f"{type(exc).__name__}: {exc}", report)
        for w in warnings:
            report.keep("warnings", f"{path}: {w}")

    async def arrivals(self, paths: Sequence[str | Path], options: LoadOptions, scope: str, report: IndexReport,
                       force: bool = False) -> AsyncIterator[list[str]]:
        """Parse and register files (in the parsing thread) while earlier documents are being
        extracted, ``REGISTER_BATCH`` documents per commit: a file of many records (CSV rows) is
        read as it is indexed, and no more of it is read while ``in_flight_bound`` of this run's
        documents wait, so memory and the queue stay bounded. Yields the ids each batch made
        PENDING; stops early if the run is stopped."""
        files = await self._in_thread(self._parser, self._files, paths, report, options)
        for path in files:
            documents = self._documents(path, report, options)
            try:
                while self._stop is None:
                    await self._room_for_more()
                    docs = await self._in_thread(self._parser, _take, documents, REGISTER_BATCH)
                    self.progress.read(len(docs))
                    ids = await self._in_thread(self._parser, self.register, docs, scope, report, force,
                                                display_path(path))
                    self._in_flight.update(ids)
                    await self._settle_others()
                    yield ids
                    if len(docs) < REGISTER_BATCH:
                        break
            finally:
                await self._in_thread(self._parser, documents.close)
            if self._stop is not None:
                return

    async def _settle_others(self) -> None:
        """Documents of this run's files that another worker has finished (PostgreSQL): their outcome
        now, so that the ledger keeps no id of theirs to the end of a long file. Looked at when it
        holds twice as many unsettled ids as after the last look (at least ``2 × REPORT_IDS``)."""
        if self.files.unsettled_count() < max(self._settle_at, 2 * report_ids()):
            return
        ids = list(self.files.unsettled_ids() - self.taken)
        rows = await self._in_thread(self._parser, self.store.documents_by_id, ids)
        for doc_id, row in rows.items():
            if doc_id in self.taken:  # claimed by this run meanwhile
                continue
            if row.status == DocStatus.PROCESSED:
                self.files.settled(doc_id, "indexed by another worker")
                self._in_flight.discard(doc_id)
            elif row.status == DocStatus.FAILED:
                self.files.settled(doc_id, "failed", row.error)
                self._in_flight.discard(doc_id)
        self._settle_at = max(2 * report_ids(), 2 * self.files.unsettled_count())

    def in_flight_bound(self) -> int:
        """This run's registered documents not yet processed above which reading waits."""
        return max(REGISTER_BATCH, 2 * self.parallel_documents())

    async def _room_for_more(self) -> None:
        """Wait until fewer than ``in_flight_bound`` registered documents wait for processing (those
        another worker took, or that are no longer pending, are not waited for)."""
        waited = 0.0
        while len(self._in_flight) >= self.in_flight_bound() and self._stop is None:
            await asyncio.sleep(IN_FLIGHT_POLL_S)
            waited += IN_FLIGHT_POLL_S
            if waited >= IN_FLIGHT_PRUNE_S:
                waited = 0.0
                rows = self.store.documents_by_id(list(self._in_flight))
                self._in_flight &= {d for d, row in rows.items() if row.status == DocStatus.PENDING or d in self.taken}

    @staticmethod
    def failed_file_id(path: str) -> str:
        """The FAILED row of a file that could not be read: one per path (identical broken files
        are each reported), whatever the file holds."""
        return f"file:{content_md5(display_path(Path(path).absolute()))}"

    def _record_skipped_file(self, path: Path, reason: str, report: IndexReport) -> None:
        """A readable file that holds no papers: reported with its reason, no FAILED row (an
        earlier run's goes)."""
        shown = display_path(path)
        stale = self.failed_file_id(shown)
        if (row := self.store.get_document(stale)) is not None and row.status == DocStatus.FAILED:
            self.store.write(lambda: self.store.delete_document(stale))
        report.keep("skipped", {"id": None, "title": None, "path": shown, "reason": reason})
        self.files.skipped_file(shown, reason)
        self.progress.log(f"[yellow]skipped[/yellow] {shown}: {reason}")

    def _record_failed_file(self, path: Path, reason: str, report: IndexReport) -> None:
        shown = display_path(path)
        doc_id = self.failed_file_id(shown)
        self.store.add_failed_file(doc_id, shown, reason)
        report.keep("failed", {"id": doc_id, "path": shown, "error": reason})
        self.files.failed_file(shown, reason)
        self.progress.log(f"[red]failed[/red] {shown}: {reason}")

    def register(self, docs: Iterable[Document], scope: str, report: IndexReport, force: bool = False,
                 path: str | None = None) -> list[str]:
        """Dedup against the workspace and mark new work PENDING (returns those ids). Existing
        documents are untouched, except that a processed one with failed chunks is queued again (for
        those chunks). ``path``: the input file the documents came from (for ``report.files``)."""
        docs = list(docs)  # one unit of work (one commit) for the whole batch

        def work() -> list[str]:
            if path is not None and docs:  # the file reads now: its FAILED row of an earlier run goes
                stale = self.failed_file_id(path)
                if (row := self.store.get_document(stale)) is not None and row.status == DocStatus.FAILED:
                    self.store.delete_document(stale)
            return [doc.id for doc in docs if self._register_one(doc, scope, report, force, path)]

        return self.store.write(work)

    def _register_one(self, doc: Document, scope: str, report: IndexReport, force: bool, path: str | None) -> bool:
        first = self.files.first_path(doc.id) if path is not None else None
        if path is not None and first is not None and first != path:  # the same paper twice in this run
            self.files.document(path, doc.id, "duplicate", first)
            report.keep("skipped", {"id": doc.id, "title": doc.title, "path": path, "reason": f"duplicate of {first}"})
            return False
        existing = self.store.get_document(doc.id)
        queued = self._should_queue(doc, existing, scope, report, force, path)
        if path is not None and queued is not None:
            self.files.document(path, doc.id, "queued")
        return bool(queued)

    def _should_queue(self, doc: Document, existing: DocumentRow | None, scope: str, report: IndexReport, force: bool,
                      path: str | None) -> bool | None:
        """True: made PENDING now; False: PENDING already (picked up with the other pending work);
        None: nothing to do (reported as skipped)."""
        if existing and existing.status == DocStatus.PROCESSED and not force:
            if existing.scope == Scope.FULL.value or existing.scope == scope:
                if self._has_failed_chunks(doc.id):
                    self.store.set_status(doc.id, DocStatus.PENDING)  # retry the failed chunks
                    return True
                other = existing.source_path if existing.source_path not in ("", path, "(text)") else None
                if path is not None:
                    self.files.document(path, doc.id, "duplicate" if other else "already indexed", other)
                reason = f"duplicate of {other} (already indexed)" if other else "already indexed"
                report.keep("skipped", {"id": doc.id, "title": doc.title, "path": path or doc.source_path,
                                        "reason": reason})
                return None
            self._drop_indexed(doc.id)  # intro -> full upgrade; unchanged chunks hit the LLM cache
        elif existing and existing.status == DocStatus.PROCESSED:
            self._drop_indexed(doc.id)  # --force: its records are written again, not a second time
        elif existing and existing.status in (DocStatus.PENDING, DocStatus.PROCESSING):
            return False  # picked up with the other pending work
        self.store.add_pending(doc, scope, self.extractor.name)
        return True

    def _has_failed_chunks(self, doc_id: str) -> bool:
        """Unrepaired chunk failures this run's profile can retry."""
        return any(f.profile == self.extractor.name for f in self.store.chunk_failures([doc_id]).get(doc_id, []))

    def requeue_failed_chunks(self, only: set[str] | None) -> list[str]:
        """Processed documents with chunks this profile failed on go back to PENDING (the run retries
        those chunks); returns their ids."""
        def work() -> list[str]:
            failed = [d for d, fs in self.store.chunk_failures().items()
                      if (only is None or d in only) and any(f.profile == self.extractor.name for f in fs)]
            rows = self.store.documents_by_id(failed)
            ids = sorted(d for d, row in rows.items() if row.status == DocStatus.PROCESSED)
            for doc_id in ids:
                self.store.set_status(doc_id, DocStatus.PENDING)
            return ids

        return self.store.write(work)

    def _drop_indexed(self, doc_id: str) -> list[str]:
        """Remove a document's graph, vectors and chunks (its row stays); returns its chunk ids.
        Called inside a unit of work."""
        gone = self.store.delete_graph_of(doc_id)
        self.store.count_graph_edits(len(gone.entity), len(gone.relation))
        for namespace, ids in gone.items():
            self.store.delete_vectors(namespace, ids)
        return self.store.delete_chunks_of(doc_id)

    # -- index flow -----------------------------------------------------------------------

    def parallel_documents(self) -> int:
        """Documents in flight: enough that the LLM limit, not the document loop, bounds throughput."""
        configured = self.settings.max_parallel_documents
        if configured:
            return configured
        return max(16, 2 * self.settings.llm.total_concurrency) if self.extractor.uses_llm else 16

    async def run_pending(self, report: IndexReport, only: set[str] | None = None,
                          arriving: Callable[[], AsyncIterator[list[str]]] | None = None,
                          retry_failed: bool = True) -> None:
        """Process every PENDING document (largest first), and those ``arriving`` registers while
        the run goes on (files parsed one by one: extraction starts before the last file is read).
        ``retry_failed``: first put the papers with failed chunks back in the queue, for those chunks."""
        report.resumed += self.store.reset_stale_processing()
        retried = self.requeue_failed_chunks(only) if retry_failed else []
        if retried:
            report.notes.append(f"retrying the failed chunks of {len(retried)} paper(s) marked incomplete")
        counted = _ProgressTotal(self.progress, self.store.pending_count(only))  # a count: no id is read
        reading = _Slots(self.parallel_documents())
        arrived: asyncio.Queue[list[str] | None] = asyncio.Queue()

        # CPU work runs off the event loop in ONE thread each (parsing, chunking; the store has its own
        # writer): more threads would take the interpreter lock from the loop in turn and delay every
        # LLM request it has to send
        with (ThreadPoolExecutor(1, thread_name_prefix="scholargraph-parsing") as self._parser,
              ThreadPoolExecutor(1, thread_name_prefix="scholargraph-chunking") as self._chunker,
              _long_lived_objects_frozen()):
            intake = asyncio.create_task(self._intake(arriving, only, arrived, counted))
            self.running.clear()
            try:
                await self._feed(report, reading, only, arrived, counted)
                await intake
                await asyncio.gather(*self.running)
            except BaseException:
                for task in [intake, *self.running]:
                    task.cancel()
                await asyncio.gather(intake, *self.running, return_exceptions=True)
                raise
        report.stopped = self._stop
        self.progress.phase("rebuilding merged entities and relations")
        await self.refresher.refresh()
        await self._resolve(report)
        self.progress.finish()

    async def _intake(self, arriving: Callable[[], AsyncIterator[list[str]]] | None, only: set[str] | None,
                      arrived: asyncio.Queue[list[str] | None], counted: _ProgressTotal) -> None:
        """Tell the feeder each time a parsed file has registered its documents; None when no more will come."""
        try:
            async for ids in arriving() if arriving else _nothing():
                await arrived.put(counted.arrived([d for d in ids if only is None or d in only]))
        finally:
            arrived.put_nowait(None)

    async def _feed(self, report: IndexReport, reading: _Slots, only: set[str] | None,
                    arrived: asyncio.Queue[list[str] | None], counted: _ProgressTotal) -> None:
        """Claim pending documents (any worker's, largest first) and start one task per document as
        ``reading`` lets them in; claim only what can start now, plus one ready for the next free slot
        (other workers find the rest). While nothing is pending, wait for this run's next parsed file
        (looking again every ``CLAIM_POLL_S`` for documents other workers register); stop when
        nothing is pending and every file has been read."""
        claimed: deque[str] = deque()
        reading_files = True
        next_file: asyncio.Future[list[str] | None] | None = None
        try:
            while self._stop is None:
                if not claimed:
                    ids = await self.store.awrite(functools.partial(self.store.claim_pending, reading.free + 1, only))
                    if ids:
                        counted.claimed(ids)
                        claimed.extend(ids)
                        self.taken.update(ids)
                        continue
                    if not reading_files:
                        return
                    next_file = next_file or asyncio.ensure_future(arrived.get())
                    done, _ = await asyncio.wait({next_file}, timeout=CLAIM_POLL_S)
                    if done:
                        reading_files = next_file.result() is not None
                        next_file = None
                    continue
                await reading.acquire()
                if self._stop is not None:
                    reading.release()
                    return
                doc_id = claimed.popleft()
                task = asyncio.create_task(self._process(doc_id, report, reading))
                task.add_done_callback(functools.partial(self._done, doc_id, counted))
                self.running.add(task)
        finally:
            if next_file is not None:
                next_file.cancel()
            if claimed:  # stopped early: unstarted documents stay PENDING for the next run
                await asyncio.shield(self.store.awrite(lambda: self.store.release(list(claimed))))

    def _done(self, doc_id: str, counted: _ProgressTotal, task: asyncio.Task[None]) -> None:
        if task.cancelled() or task.exception() is None:  # a finished task is not kept (1M CSV rows: 1M tasks);
            self.running.discard(task)  # one that crashed stays, for run_pending to raise
        self._in_flight.discard(doc_id)  # nor its id (1M CSV rows: ~60 B each in every set)
        self.taken.discard(doc_id)
        counted.done(doc_id)
        self.progress.advance()  # documents done / total

    async def _resolve(self, report: IndexReport) -> None:
        """Entity resolution over the entities indexing queued (graph.resolution_pass) — this run's
        and those a killed run left; then rebuild what it merged."""
        cfg = self.settings.extraction
        if not cfg.resolve or not self.store.pending_maintenance("resolve", 1):
            return
        self.progress.phase("resolving entities")
        settings = ResolutionSettings(threshold=cfg.resolution_threshold)
        groups: list[list[str]] = []
        mates: NameMates | None = None  # the stored entities by name: read once per run, when there is work
        loop = asyncio.get_running_loop()

        def embed(texts: list[str]) -> np.ndarray:  # from the pass's thread, on this loop's embedder
            return asyncio.run_coroutine_threadsafe(self.refresher.embedder.embed(texts), loop).result()

        while block := await asyncio.to_thread(self.store.claim_maintenance, "resolve", RESOLVE_BLOCK):
            # a block at a time, claimed: workers that finish together share the pass, none redoes a block
            mates = mates or await asyncio.to_thread(NameMates, self.store)
            groups += await asyncio.to_thread(resolve_touched, self.store, set(block), settings, mates, embed)
        if groups:
            report.notes.append(resolution_note(groups))
        self.progress.phase("rebuilding resolved entities")
        await self.refresher.refresh()  # what it merged or gave its canonical id

    async def maintain(self, report: IndexReport | None = None) -> None:
        """Finish the graph maintenance a killed process left: rebuild what is marked dirty, resolve
        the queued entities, rebuild again. Cheap when there is none."""
        if self.store.dirty_ids("entities", 1) or self.store.dirty_ids("relations", 1):
            await self.refresher.refresh()
        await self._resolve(report or IndexReport(profile=self.extractor.name))

    async def _in_thread(self, executor: ThreadPoolExecutor | None, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(executor, functools.partial(fn, *args))

    def _prepare(self, doc_id: str) -> tuple[Document, list[Chunk], bool] | None:
        """Load a claimed document and chunk it (in the chunking thread; reading never waits for a
        commit in progress). A processed document with failed chunks gives those stored chunks alone
        (``True``: a repair) when the extractor works chunk by chunk."""
        found = self.store.document_to_process(doc_id)
        if found is None:
            return None
        doc = select_scope(*found)
        failed = {f.chunk_id for f in self.store.chunk_failures([doc_id]).get(doc_id, [])}
        if failed and getattr(self.extractor, "repairs_chunks", False):
            stored = [c for c in self.store.chunks_of(doc_id) if c.id in failed]
            if stored:
                return doc, stored, True
        return doc, self._chunks(doc), False

    async def _process(self, doc_id: str, report: IndexReport, reading: _Slots) -> None:
        """One claimed document; ``reading`` (acquired by the feeder) is released once it is
        analysed, so a slow commit never keeps the next document from starting."""
        repair = False
        try:
            try:
                prepared = await self._in_thread(self._chunker, self._prepare, doc_id)
                if prepared is None:
                    raise ScholarGraphError("the stored document has no parsed text; index its file again")
                repair = prepared[2]
                analysis = await self._analyse(*prepared)
            finally:
                reading.release()
            await self.store.awrite(lambda: self._commit(analysis))
        except LeaseLostError:
            self._taken_over(doc_id, report)
            return
        except LLMUnavailableError as exc:
            self._stop = f"{exc} — remaining documents stay PENDING; rerun `scholargraph index` to continue"
            status = DocStatus.PROCESSED if repair else DocStatus.PENDING  # a repair is retried by the next run anyway
            await self._settle(doc_id, report, lambda: self.store.set_status(doc_id, status))
            if repair:
                self.files.settled(doc_id, "indexed")
            return
        except Exception as exc:  # never let one document crash the run
            reason = str(exc) if isinstance(exc, ScholarGraphError) else f"{type(exc).__name__}: {exc}"
            await self._settle(doc_id, report, lambda: self._fail(doc_id, reason, report, repair))
            return
        report.keep("added", doc_id)
        report.chunks += len(analysis.chunks)
        failures = analysis.extraction.failures
        for note in analysis.extraction.notes:
            report.keep("warnings", f"{doc_id}: {note}")
        self.files.settled(doc_id, "incomplete" if failures else "indexed")
        if failures:
            report.chunk_failures += len(failures)
            report.keep("incomplete", doc_id)
            report.keep("warnings", f"{doc_id}: {len(failures)} chunk(s) without usable model output — the paper is "
                                    "marked incomplete; rerun the same command to retry exactly those chunks")

    def _hold(self, doc_id: str) -> None:
        """Inside a unit of work about a claimed document: stop unless this worker still holds it."""
        if not self.store.hold_lease(doc_id):
            raise LeaseLostError(f"{doc_id}: taken over by another worker after this worker's lease ran out")

    async def _settle(self, doc_id: str, report: IndexReport, write: Callable[[], None]) -> None:
        """A status written for a claimed document, unless another worker has taken it over."""
        def work() -> None:
            self._hold(doc_id)
            write()

        try:
            await self.store.awrite(work)
        except LeaseLostError:
            self._taken_over(doc_id, report)

    def _taken_over(self, doc_id: str, report: IndexReport) -> None:
        """Another worker took the document over (this one's lease ran out): its work here is dropped."""
        self.taken.discard(doc_id)
        report.keep("warnings", f"{doc_id}: taken over by another worker after this worker's lease on it ran out "
                                "(this worker was too slow to renew it); its work here was dropped")
        self.progress.log(f"[yellow]taken over[/yellow] {doc_id}: by another worker (lease ran out)")

    def _fail(self, doc_id: str, reason: str, report: IndexReport, repair: bool = False) -> None:
        """A document failed as a whole. When only its failed chunks were being retried, it stays
        processed (with those chunks still marked) rather than failed."""
        if repair:
            self.store.set_status(doc_id, DocStatus.PROCESSED)
            reason = f"retrying its failed chunks: {reason}"
        else:
            self.store.set_status(doc_id, DocStatus.FAILED, reason)
        report.keep("failed", {"id": doc_id, "error": reason})
        self.files.settled(doc_id, "failed", reason)
        self.progress.log(f"[red]failed[/red] {doc_id}: {reason}")

    async def _analyse(self, doc: Document, chunks: list[Chunk], repair: bool = False) -> _Analysis:
        if not chunks:
            raise ScholarGraphError("no text to index after parsing (empty sections)")
        texts = [] if repair else [c.text for c in chunks]  # a repair's chunks have their vectors already
        # embedding (CPU) and extraction (LLM I/O) of a document overlap
        vectors, extraction = await asyncio.gather(self.embedder.embed(texts), self.extractor.extract(doc, chunks))
        cfg = self.settings.extraction
        extraction.notes += limit_per_chunk(extraction, ChunkLimits(cfg.max_entities_per_chunk,
                                                                    cfg.max_relations_per_chunk,
                                                                    cfg.max_keywords_per_chunk))
        keyword_texts = list(dict.fromkeys(k.text.strip() for k in extraction.keywords if k.text.strip()))
        keyword_vectors = await self.embedder.embed(keyword_texts) if keyword_texts else None
        return _Analysis(doc, chunks, vectors, extraction, keyword_texts, keyword_vectors, repair)

    def _commit(self, analysis: _Analysis) -> None:
        """Everything a document adds, with its PROCESSED status: one unit of work. A repair adds
        what its chunks gave and clears their failure records (those that failed again stay)."""
        doc, chunks, extraction = analysis.doc, analysis.chunks, analysis.extraction
        self._hold(doc.id)  # PostgreSQL: the lease is still this worker's (the row stays locked until the commit)
        if analysis.repair:
            failing = {f.chunk_id for f in extraction.failures}
            self.store.clear_chunk_failures(doc.id, [c.id for c in chunks if c.id not in failing])
        else:
            row = self.store.get_document(doc.id)
            if row is not None and row.chunks:  # processed before (a document processed again as a whole)
                self._drop_indexed(doc.id)
            self.store.clear_chunk_failures(doc.id)
            self.store.insert_chunks(chunks, row.scope if row else "full")
            self.store.put_vectors("chunk", [c.id for c in chunks], analysis.vectors)
        self._write_graph(doc.id, analysis)
        if extraction.failures:
            self.store.record_chunk_failures(doc.id, self.extractor.name, extraction.failures)
        if self.settings.communities.auto_update:  # owed until the communities follow (KnowledgeBase)
            self.store.queue_maintenance("communities", [doc.id])
        self.store.queue_maintenance("citations", [doc.id])  # owed until the run's citation step (indexing)
        self.store.set_status(doc.id, DocStatus.PROCESSED)

    def _write_graph(self, doc_id: str, analysis: _Analysis) -> None:
        """The extraction's entities, relations and keywords (inside the commit); its entities are
        queued for the resolution pass in the same unit of work."""
        extraction, keyword_texts, keyword_vectors = analysis.extraction, analysis.keyword_texts, analysis.keyword_vectors
        known = self.store.entities_by_keys(entity_keys(extraction, self.key_fn))
        writes = plan_writes(doc_id, extraction, self.key_fn, known)
        self.store.write_entities(writes.entities)
        if self.settings.extraction.resolve:
            self.store.queue_maintenance("resolve", (e.id for e in writes.entities))
        self.store.write_relations(writes.relations)
        new_keywords = set(self.store.write_keywords(writes.keywords))
        if keyword_vectors is not None and new_keywords:
            by_text = dict(zip(keyword_texts, keyword_vectors, strict=True))
            fresh = {k.id: by_text[k.text] for k in writes.keywords if k.id in new_keywords and k.text in by_text}
            if fresh:
                self.store.put_vectors("keyword", list(fresh), np.stack(list(fresh.values())))
        self._write_provenance(doc_id, extraction, writes)

    def _write_provenance(self, doc_id: str, extraction: Extraction, writes: GraphWrites) -> None:
        """Sentences and mentions (localkg), each mention resolved to the entity its name became."""
        if extraction.sentences:
            for s in extraction.sentences:
                s.document_id = doc_id
            self.store.write_sentences(extraction.sentences)
        ids: dict[str, str] = {}
        for e in writes.entities:
            ids.setdefault(e.key, e.id)
        if extraction.local is not None:  # the paper's own local KG, linked to the workspace entities
            extraction.local.document_id = doc_id
            for local in extraction.local.entities:
                local.entity_id = ids.get(self.key_fn(local.entity or local.label), "")
            self.store.write_local_graph(extraction.local)
        if not extraction.mentions:
            return
        mentions = []
        for m in extraction.mentions:
            entity_id = ids.get(self.key_fn(m.entity or m.surface))
            if entity_id:
                m.entity_id, m.document_id = entity_id, doc_id
                mentions.append(m)
        self.store.write_mentions(mentions)

    def estimate(self, docs: Sequence[Document], scope: str, report: IndexReport) -> None:
        """Dry run: what indexing ``docs`` would cost, per purpose and per document; nothing is stored."""
        estimate = getattr(self.extractor, "estimate", None)
        per_document = getattr(self.extractor, "estimate_document", None)  # profiles that read whole papers
        report.notes.append("dry run: nothing was indexed; token figures are estimates (offline tokenizer)")
        for doc in docs:
            existing = self.store.get_document(doc.id)
            if existing and existing.status == DocStatus.PROCESSED and existing.scope in (scope, Scope.FULL.value):
                report.keep("skipped", {"id": doc.id, "title": doc.title, "reason": "already indexed"})
                continue
            chunks = self._chunks(select_scope(doc, scope))
            report.chunks += len(chunks)
            report.keep("added", doc.id)
            if per_document is not None:
                found = per_document(select_scope(doc, scope), chunks, self.tokenizer.count)
            else:
                found = estimate(chunks, self.tokenizer.count) if estimate else {}
            for purpose, usage in found.items():
                report.usage.setdefault(purpose, Usage()).add(usage)

    def _chunks(self, doc: Document) -> list[Chunk]:
        cfg = self.settings.chunking
        strategy = "tokens" if cfg.strategy == "tokens" else "structure"
        return chunk_document(doc, self.tokenizer, cfg.size, cfg.overlap, strategy, self.settings.extraction.include_references,
                              cfg.parts)

    # -- delete ---------------------------------------------------------------------------

    async def delete(self, doc_id: str) -> Deletion:
        row = self.store.get_document(doc_id)
        if row is None:
            raise NotFoundError(f"no document with id {doc_id!r} (see `scholargraph status`)")

        def work() -> tuple[GraphRemoval, list[str]]:
            gone = self.store.delete_graph_of(doc_id)
            self.store.count_graph_edits(len(gone.entity), len(gone.relation))
            for namespace, ids in gone.items():
                self.store.delete_vectors(namespace, ids)
            chunk_ids = self.store.delete_chunks_of(doc_id)
            self.store.delete_document(doc_id)
            return gone, chunk_ids

        gone, chunk_ids = await self.store.awrite(work)
        await self.refresher.refresh()
        return Deletion(deleted=doc_id, chunks=len(chunk_ids), entities_removed=len(gone.entity),
                        relations_removed=len(gone.relation), keywords_removed=len(gone.keyword))
