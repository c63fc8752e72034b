"""Indexing: a run over files and texts (one process at a time per workspace), the graph
maintenance a killed run left, the citation network and communities that follow a run,
re-embedding. Works on the :class:`~.workspace.Workspace`, never on the facade."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, LLMUnavailableError, ScholarGraphError, WorkspaceBusyError
from ..extract.base import Extractor, NoExtraction
from ..graph.refresh import GraphRefresher
from ..ingest.identity import doc_id as make_doc_id
from ..ingest.registry import LoadOptions, missing_paths
from ..ingest.surrogates import scrub
from ..models import DocStatus, Document, Section, Usage
from ..plugins.registry import AUTO, AUTO_WITH_LLM
from .pipeline import IndexReport, Pipeline
from .reembed import reembed_vectors
from .workspace import Workspace

if TYPE_CHECKING:
    from ..graph.community_update import CommunityRun

OTHER_WORKERS_POLL_S = 1.0  # a worker waiting for the others' documents looks this often
WORKER_POLL_S = (0.5, 10.0)  # a long-lived worker with nothing to do looks again after 0.5 s, doubling up to 10 s

REPORTS_DEFERRED = ("community reports written when needed (`ask --mode summary`, `scholargraph communities`, "
                    "the web view) or with `index --reports`; `stats --cost` shows how many are pending")

log = logging.getLogger(__name__)


class Indexing:
    def __init__(self, workspace: Workspace):
        self.ws = workspace

    async def ainsert(self, paths: Sequence[str | Path] = (), *, texts: Sequence[str | dict[str, Any] | Document] = (),
                      scope: str = "full",
                      only: Sequence[str] | None = None, profile: str | None = None, force: bool = False,
                      options: LoadOptions | None = None, dry_run: bool = False, wait: bool = True) -> IndexReport:
        """Index files/directories and/or raw texts (str, dict with title/text/id/metadata, or a
        ready ``Document``).
        When another process is indexing the same workspace, wait for it (``wait=False``: raise
        ``WorkspaceBusyError``)."""
        missing_paths(paths)  # a mistyped path: say so, record nothing
        if dry_run:
            return await self._ainsert(paths, texts, scope, only, profile, force, options, dry_run)
        async with self.exclusive_indexing(wait):
            return await self._ainsert(paths, texts, scope, only, profile, force, options, dry_run, wait)

    @contextlib.asynccontextmanager
    async def exclusive_indexing(self, wait: bool = True) -> AsyncIterator[None]:
        """Held while indexing (or re-embedding): one process at a time per SQLite workspace. When
        another holds it, wait (without blocking the event loop) or raise ``WorkspaceBusyError``."""
        lock = self.ws.store.indexing_lock()
        if not lock.acquire():
            message = f"another scholargraph process is indexing {self.ws.workdir} ({lock.holder()})"
            if not wait:
                raise WorkspaceBusyError(f"{message}; try again when it has finished")
            log.warning("%s; waiting for it to finish…", message)
            while not lock.acquire():
                await asyncio.sleep(0.5)
        try:
            yield
        finally:
            lock.release()

    async def _ainsert(self, paths: Sequence[str | Path], texts: Sequence[str | dict[str, Any] | Document], scope: str,
                       only: Sequence[str] | None, profile: str | None, force: bool, options: LoadOptions | None,
                       dry_run: bool, wait: bool = True) -> IndexReport:
        started = time.perf_counter()
        extractor = self.ws.extractor(profile)
        report = IndexReport(profile=extractor.name)
        report.notes += self._profile_notes(extractor, profile)
        opts = options or self.load_options()
        if dry_run:
            await self._estimate(self.ws.pipeline(extractor), paths, texts, scope, report, opts)
        else:  # unreachable server or unknown model: nothing started
            await (self.ws.ensure_llm_ready() if extractor.uses_llm else self.ws.ensure_embedder_ready())
            await self._index(self.ws.pipeline(extractor), paths, texts, scope, only, force, opts, report, wait)
        report.seconds = time.perf_counter() - started
        return report

    def _profile_notes(self, extractor: Extractor, profile: str | None) -> list[str]:
        notes = list(getattr(extractor, "notes", []))
        if (profile or self.ws.settings.extraction.profile) == AUTO and not self.ws.settings.llm.configured:
            notes.append(f"no LLM configured: using the {extractor.name} extraction profile (a draft graph); "
                         f"set llm.base_url and llm.model for the {AUTO_WITH_LLM} profile")
        return notes

    async def _estimate(self, pipeline: Pipeline, paths: Sequence[str | Path],
                        texts: Sequence[str | dict[str, Any] | Document], scope: str, report: IndexReport,
                        opts: LoadOptions) -> None:
        """``index --dry-run``: what the run would cost, nothing indexed."""
        docs = await asyncio.to_thread(pipeline.load_paths, list(paths), report, opts) if paths else []
        pipeline.estimate(docs + [text_document(t) for t in texts], scope, report)
        report.notes.append(self._report_cost_note())

    async def _index(self, pipeline: Pipeline, paths: Sequence[str | Path],
                     texts: Sequence[str | dict[str, Any] | Document], scope: str, only: Sequence[str] | None,
                     force: bool, opts: LoadOptions, report: IndexReport, wait: bool) -> None:
        # rebuilds an interrupted run left; the entities it left to resolve are resolved with this run's, at its end.
        # Not while other workers index: what they state is dirty until their own end, and rebuilding it
        # here would keep this worker from claiming documents for as long as they go on
        if not self._indexed_elsewhere():
            await self.refresh_graph(pipeline.refresher)
        docs = [text_document(t) for t in texts]
        if only and paths:  # the selection may name documents of these files: read them all first
            docs = await asyncio.to_thread(pipeline.load_paths, list(paths), report, opts) + docs
        pipeline.register(docs, scope, report, force=force)
        if only:
            self._upgrade_selected(pipeline, only, scope, report)
        before = self.ws.llm.usage_snapshot() if self.ws.llm else {}
        # otherwise files are parsed and registered one by one while the first ones are extracted
        arriving = (lambda: pipeline.arrivals(list(paths), opts, scope, report, force)) if paths and not only else None
        await pipeline.run_pending(report, set(only) if only else None, arriving)
        await self._wait_for_other_workers(pipeline, report, set(only) if only else None, wait)
        pipeline.file_outcomes(report)
        await self._after_index(report)
        report.usage = self.ws.llm.usage_since(before) if self.ws.llm else {}

    def _upgrade_selected(self, pipeline: Pipeline, only: Sequence[str], scope: str, report: IndexReport) -> None:
        for doc_id in only:
            row = self.ws.store.get_document(doc_id)
            if row is None:
                report.failed.append({"id": doc_id, "error": "no such document in the workspace"})
                continue
            doc = self.ws.store.load_document(doc_id)
            if doc is not None and (row.scope != scope or row.status != DocStatus.PROCESSED):
                pipeline.register([doc], scope, report, force=row.status == DocStatus.PROCESSED)

    def load_options(self, manifest: dict[str, dict[str, Any]] | None = None, exclude: Sequence[str] = ()) -> LoadOptions:
        """How files are read, from the settings (references, size limits), an optional manifest and
        glob patterns of files to leave out."""
        ingest = self.ws.settings.ingest
        return LoadOptions(include_references=self.ws.settings.extraction.include_references, manifest=manifest or {},
                           max_bytes=int(ingest.max_file_mb * 1e6), max_document_bytes=int(ingest.max_document_mb * 1e6),
                           exclude=tuple(exclude))

    def maintenance_owed(self) -> bool:
        """Graph maintenance a killed process left: elements to rebuild, entities to resolve."""
        return bool(self.ws.store.dirty_ids("entities", 1) or self.ws.store.dirty_ids("relations", 1)
                    or (self.ws.settings.extraction.resolve and self.ws.store.pending_maintenance("resolve", 1)))

    async def finish_maintenance(self) -> None:
        """Finish what a killed process left (rebuilds, entity resolution) before a command that
        writes the workspace, unless another process is indexing it (that one finishes it)."""
        if not self.maintenance_owed():
            return
        lock = self.ws.store.indexing_lock()
        if not lock.acquire():
            return
        try:
            await self.ws.pipeline(NoExtraction()).maintain()
        finally:
            lock.release()

    async def refresh_graph(self, refresher: GraphRefresher | None = None) -> None:
        if self.ws.store.dirty_ids("entities", 1) or self.ws.store.dirty_ids("relations", 1):
            await (refresher or self.ws.refresher()).refresh()

    async def _after_index(self, report: IndexReport) -> None:
        """The citation network and the communities follow what a run added. The documents whose
        reference lists to resolve are read from the store (each commit queued its own), not from the
        report (which lists only the first ``REPORT_IDS``)."""
        if report.added or self.ws.store.pending_maintenance("citations", 1):
            from ..graph.citations import update_owed_citations

            self.ws.progress.phase("citation network")
            cites = await update_owed_citations(self.ws.store)
            if cites.references:
                report.notes.append(cites.note())
        if self.ws.settings.communities.auto_update and (report.added or report.resumed
                                                      or self.ws.store.pending_maintenance("communities", 1)):
            if busy := self._indexed_elsewhere():
                report.notes.append(f"communities left to the worker that finishes last ({busy} document(s) still "
                                    "being indexed by other workers)")
                return
            reports = self._reports_on_index()
            try:
                self.ws.progress.phase("communities and their reports" if reports else "communities")
                run = await self.update_communities(reports=reports)
            except LLMUnavailableError as exc:
                report.notes.append(f"community reports not written ({exc}); run `scholargraph communities` later")
                return
            if run.computed:
                levels = ', '.join(f'{n} at level {lv}' for lv, n in run.levels.items())
                report.notes.append(f"communities: {levels}; {run.reports_written} report(s) written, {run.reports_kept} kept"
                                    if reports else f"communities: {levels}; {REPORTS_DEFERRED}")

    def _report_cost_note(self) -> str:
        """What a run would spend on community reports (``index --dry-run``)."""
        from ..graph.community_update import use_llm

        if not use_llm(self.ws.settings.communities, self.ws.llm):
            return "community reports: extractive, no LLM call"
        now = len({c.signature for c in self.ws.store.list_communities()})
        if self.ws.settings.communities.reports_on_index:
            return (f"community reports (--reports): one LLM call per new or changed community at the end of the run "
                    f"({now} communities now, {self.reports_pending()} without an LLM report); not in the figures above")
        return f"community reports: no LLM call in this run; {REPORTS_DEFERRED}"

    def _reports_on_index(self) -> bool:
        """Reports at the end of an index run only when they cost no LLM call (extractive) or when
        asked (``communities.reports_on_index``): seed 000 Table 3.2's cost model, where an
        incremental insertion pays for its chunks' extraction only."""
        from ..graph.community_update import use_llm

        cfg = self.ws.settings.communities
        return cfg.reports_on_index or not use_llm(cfg, self.ws.llm)

    async def _wait_for_other_workers(self, pipeline: Pipeline, report: IndexReport, only: set[str] | None,
                                      wait: bool) -> None:
        """Workers sharing a PostgreSQL database: when this one has nothing left to claim but others
        still index documents, wait until the knowledge base is complete (``wait``), taking over
        what they give back or leave behind (a worker that died); else note what they still do."""
        busy = self._others_documents(pipeline)
        if busy and not wait:
            report.notes.append(f"{busy} document(s) still being indexed by other workers; this run did not wait "
                                "for them (--no-wait)")
            return
        if busy:
            log.warning("%d document(s) are being indexed by other workers; waiting until the knowledge base is "
                        "complete (--no-wait: stop now)…", busy)
        while busy:
            await asyncio.sleep(OTHER_WORKERS_POLL_S)
            if self._pending(only) or self.ws.store.interrupted_ids():
                await pipeline.run_pending(report, only)
            busy = self._others_documents(pipeline)

    def _others_documents(self, pipeline: Pipeline) -> int:
        """Documents other live workers are indexing now (never this run's own: on SQLite, where one
        process indexes at a time, none)."""
        processing = set(self.ws.store.document_ids(DocStatus.PROCESSING))
        return len(processing - self.ws.store.interrupted_ids() - pipeline.taken) if processing else 0

    def _pending(self, only: set[str] | None) -> bool:
        """Anything PENDING (of ``only``)? One row of the status index when any document will do."""
        return bool(self.ws.store.pending_ids(only) if only is not None else self.ws.store.document_ids(DocStatus.PENDING, 1))

    def _indexed_elsewhere(self) -> int:
        """Documents other live workers are indexing now (several workers on one PostgreSQL database).
        Communities and their reports computed before those land would be redone by the last worker,
        so a worker that finishes early leaves them to it."""
        processing = set(self.ws.store.document_ids(DocStatus.PROCESSING))  # the status index, not every document
        return len(processing - self.ws.store.interrupted_ids()) if processing else 0

    async def update_communities(self, force: bool = False, rebuild: bool = False, reports: bool = True) -> CommunityRun:
        """The communities (one process at a time: another worker updating them is waited for, then
        they are found up to date), then their missing reports, which every worker that gets here
        writes a share of."""
        from ..graph.community_update import add_reports, refresh_communities, use_llm

        settings = self.ws.settings.communities
        llm = self.ws.llm if use_llm(settings, self.ws.llm) else None
        if llm is not None:
            await self.ws.ensure_llm_ready()
        lock = self.ws.store.communities_lock()
        if not await asyncio.to_thread(lock.acquire):
            log.info("%s; waiting for it to finish…", lock.holder())
            while not await asyncio.to_thread(lock.acquire):
                await asyncio.sleep(0.5)
        try:
            # the documents this update follows: one committed meanwhile stays owed (queued by its commit)
            owed = await asyncio.to_thread(self.ws.store.pending_maintenance, "communities")
            run, communities, edges = await refresh_communities(self.ws.store, settings, force=force, rebuild=rebuild)
        finally:
            lock.release()
        if reports:
            await add_reports(self.ws.store, settings, llm, run, communities, edges)
        if owed:  # communities and reports are up to date: a run killed before this point left them owed
            await asyncio.to_thread(self.ws.store.finish_maintenance, "communities", owed)
        return run

    def reports_pending(self) -> int:
        """Communities whose report is still to be written (with the LLM when reports use one:
        extractive ones then count as pending too)."""
        from ..graph.community_update import pending_reports, use_llm

        return pending_reports(self.ws.store, use_llm(self.ws.settings.communities, self.ws.llm))

    async def awork(self, stop: asyncio.Event, *, profile: str | None = None,
                    on_batch: Callable[[IndexReport], None] | None = None) -> IndexReport:
        """A long-lived worker (``index --worker``) on a PostgreSQL knowledge base: index every document
        that becomes PENDING (registered by any worker or user), do the end-of-run work it owes, then
        wait for more (looking again with back-off) until ``stop`` is set. Stopping gives back the
        documents it holds (the others take them at once); returns everything it did."""
        if self.ws.settings.store.backend != "postgres":
            raise ConfigError("a long-lived worker (index --worker) needs a PostgreSQL knowledge base (--db postgresql://...)")
        extractor = self.ws.extractor(profile)
        total = IndexReport(profile=extractor.name)
        await (self.ws.ensure_llm_ready() if extractor.uses_llm else self.ws.ensure_embedder_ready())
        delay = WORKER_POLL_S[0]
        retry_failed = True  # the failed chunks of incomplete papers: with the first batch only, not after every one
        try:
            async with self.exclusive_indexing(wait=True):
                while not stop.is_set():
                    if not (self._pending(None) or self.ws.store.interrupted_ids()):
                        delay = await _pause(stop, delay)
                        continue
                    delay = WORKER_POLL_S[0]
                    batch = await self._work_batch(extractor, stop, retry_failed)
                    retry_failed = False
                    _add_report(total, batch)
                    if on_batch is not None:
                        on_batch(batch)
                    if batch.stopped and not stop.is_set():  # the LLM server is gone: try again later
                        log.warning("%s", batch.stopped)
                        delay = await _pause(stop, WORKER_POLL_S[1])
        finally:
            released = await asyncio.to_thread(self.ws.store.release_claims)
            if released:
                total.notes.append(f"stopped: {len(released)} document(s) given back to the other workers")
        return total

    async def _work_batch(self, extractor: Extractor, stop: asyncio.Event, retry_failed: bool = False) -> IndexReport:
        """What is pending now, and the end-of-run work it owes (cut short when ``stop`` is set: what
        was committed by then is in the report); ``retry_failed``: and the failed chunks of papers
        marked incomplete (a worker's first batch: retried after every batch, a chunk the model
        cannot answer would cost its calls again each time)."""
        started = time.perf_counter()
        pipeline = self.ws.pipeline(extractor)
        report = IndexReport(profile=extractor.name)
        before = self.ws.llm.usage_snapshot() if self.ws.llm else {}
        for step in (lambda: pipeline.run_pending(report, retry_failed=retry_failed), lambda: self._after_index(report)):
            run, stopped = asyncio.ensure_future(step()), asyncio.ensure_future(stop.wait())
            await asyncio.wait({run, stopped}, return_when=asyncio.FIRST_COMPLETED)
            stopped.cancel()
            if not run.done():
                run.cancel()
                await asyncio.gather(run, return_exceptions=True)
                report.stopped = "stopped (SIGINT/SIGTERM)"
                break
            run.result()
        report.usage = self.ws.llm.usage_since(before) if self.ws.llm else {}
        report.seconds = time.perf_counter() - started
        return report

    async def reembed(self, wait: bool = True) -> dict[str, int]:
        """Recompute every vector with the configured embedding model (``scholargraph reembed``)."""
        async with self.exclusive_indexing(wait):  # no indexing run may add vectors of the old model meanwhile
            return await reembed_vectors(self.ws)


def text_document(item: str | dict[str, Any] | Document) -> Document:
    if isinstance(item, Document):  # built by a caller (e.g. the fastbmRAG API from a DataFrame's rows)
        return item
    if isinstance(item, str):
        item = {"text": item}
    text = scrub(str(item.get("text", ""))).strip()
    if not text:
        raise ScholarGraphError("an inserted text is empty")
    doc_id, md5 = make_doc_id(item.get("id"), text)
    title = scrub(str(item.get("title") or text.split("\n", 1)[0][:120]))
    return Document(id=doc_id, title=title, sections=[Section("", text)], content_md5=md5,
                    metadata=dict(item.get("metadata") or {}), source_path="(text)")


async def _pause(stop: asyncio.Event, delay: float) -> float:
    """Wait ``delay`` seconds unless stopped first; the next wait is twice as long (at most the longest)."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), delay)
    return min(2 * delay, WORKER_POLL_S[1])


def _add_report(total: IndexReport, batch: IndexReport) -> None:
    """A long-lived worker's batch added to what it did so far."""
    for name in ("resumed", "notes"):
        getattr(total, name).extend(getattr(batch, name))
    for name in ("added", "failed", "warnings", "incomplete"):  # a long-lived worker's lists stay bounded too
        total.merge(name, batch)
    total.chunks += batch.chunks
    total.chunk_failures += batch.chunk_failures
    total.seconds += batch.seconds
    for purpose, usage in batch.usage.items():
        total.usage.setdefault(purpose, Usage()).add(usage)
