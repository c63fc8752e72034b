"""KnowledgeBase: the one facade over a workspace (CLI, HTTP server and Python users use only this).

    from scholargraph import KnowledgeBase
    kb = KnowledgeBase("my_workspace")
    kb.insert(["papers/"])
    print(kb.query("Which methods use contrastive learning?").text)

Every method has an async twin (``ainsert``, ``aquery``, ...); the sync ones also work inside a
running event loop (Jupyter). Heavy parts (embedding model,
LLM client, extractor) are created on first use, so ``status`` and ``stats`` stay instant.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from .config import Settings, load_settings
from .errors import (
    ConfigError,
    EmbeddingMismatchError,
    LLMUnavailableError,
    NotFoundError,
    ScholarGraphError,
    WorkspaceBusyError,
)
from .extract.base import Extractor, NoExtraction
from .graph.memory import GraphCache
from .graph.refresh import GraphRefresher
from .ingest.identity import doc_id as make_doc_id
from .ingest.registry import LoadOptions, missing_paths
from .ingest.surrogates import scrub
from .ingest.tokenizer import TextTokenizer, load_tokenizer
from .llm.embeddings import DeferredEmbedder, Embedder, make_embedder
from .llm.rerank import Reranker, make_reranker
from .models import Answer, DocStatus, Document, Section, Usage, usage_to_json
from .pipeline import IndexReport, Pipeline
from .plugins.base import ExtractorContext
from .plugins.registry import AUTO, AUTO_WITH_LLM, check_settings, get_profile, resolve_profile_name
from .progress import NullProgress, Progress
from .query.engine import QueryEngine
from .query.retrieval import Retrieval
from .store import open_store
from .sync import run_sync
from .text.names import normalise_name

if TYPE_CHECKING:
    from .graph.community_update import CommunityRun
    from .graph.kg_summary import KGSummary
    from .llm.client import LLMClient
    from .llm.local_server import LocalServer
    from .store.base import DocumentRow

T = TypeVar("T")
OTHER_WORKERS_POLL_S = 1.0  # a worker waiting for the others' documents looks this often
WORKER_POLL_S = (0.5, 10.0)  # a long-lived worker with nothing to do looks again after 0.5 s, doubling up to 10 s

REPORTS_DEFERRED = ("community reports written when needed (`ask --mode summary`, `scholargraph communities`, "
                    "the web view) or with `index --reports`; `stats --cost` shows how many are pending")

log = logging.getLogger(__name__)


class KnowledgeBase:
    def __init__(self, workdir: str | Path | None = None, settings: Settings | None = None, *,
                 progress: Progress | None = None, create: bool = True, **overrides: Any):
        """``create=False``: open an existing workspace only (``WorkspaceError`` when there is none),
        for callers that only read it."""
        self.settings = settings or load_settings(workdir, overrides)
        if settings is not None and workdir is not None:
            self.settings = self.settings.model_copy(update={"workdir": Path(workdir)})
        check_settings(self.settings)  # the plug-ins named exist, their [plugins.*] sections are valid
        self.store = open_store(self.settings.workdir, self.settings.store.backend, create=create,
                                **self.settings.store.options())
        self._graphs = GraphCache()  # the in-memory graph, shared by every query engine of this knowledge base
        self.progress = progress or NullProgress()
        self._embedder: Embedder | None = None
        self._tokenizer: TextTokenizer | None = None
        self._llm: LLMClient | None = None
        self._local_server: LocalServer | None = None  # llama.cpp serving a local:PATH.gguf model
        self._llm_identity: str | None = None
        self._llm_checked = False
        self._embedder_checked = False
        self._reranker: Reranker | None = None

    # -- components (lazy) ----------------------------------------------------------------

    @property
    def workdir(self) -> Path:
        return self.settings.workdir

    def expected_embedding_name(self) -> str:
        return f"{self.settings.embeddings.provider}:{self.settings.embeddings.model}"

    def check_embedding_model(self) -> None:
        recorded = self.store.get_meta("embedding_model")
        wanted = self.expected_embedding_name()
        if recorded and recorded != wanted:
            provider, _, model = recorded.partition(":")
            raise EmbeddingMismatchError(
                f"workspace {self.workdir} was built with embedding model {recorded!r} "
                f"({self.store.get_meta('embedding_dim')}-d), but the settings ask for {wanted!r}. Either use the "
                f"original model (embeddings.provider = {provider!r}, embeddings.model = {model!r}) or re-embed the "
                f"workspace with the new one: `scholargraph reembed --workdir {self.workdir}`"
            )

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self.check_embedding_model()
            self._embedder = make_embedder(self.settings.embeddings, self.store)
            self._record_embedding_identity(self._embedder)
        return self._embedder

    def _record_embedding_identity(self, embedder: Embedder) -> None:
        if not self.store.get_meta("embedding_model"):
            self.store.set_meta("embedding_model", embedder.name)
            self.store.set_meta("embedding_dim", str(embedder.dim))
        elif int(self.store.get_meta("embedding_dim") or embedder.dim) != embedder.dim:
            raise EmbeddingMismatchError(
                f"embedding model {embedder.name} now returns {embedder.dim}-d vectors but the workspace holds "
                f"{self.store.get_meta('embedding_dim')}-d ones; run `scholargraph reembed --workdir {self.workdir}`")

    @property
    def tokenizer(self) -> TextTokenizer:
        if self._tokenizer is None:
            self._tokenizer = load_tokenizer(self.settings.chunking.tokenizer, self.settings.embeddings.local_model)
        return self._tokenizer

    def _settle_llm_model(self) -> None:
        """``llm.base_url`` without ``llm.model``: use the server's only model (asked once, when an LLM
        is first needed), or stop with the list of the served ones; never fall back silently.
        ``local:PATH.gguf``: start llama.cpp on that file (stopped by :meth:`close`)."""
        llm = self.settings.llm
        if llm.local_model and self._local_server is None:
            self._start_local_model()
            return
        if llm.endpoints or not llm.base_url or llm.model:
            return  # (each of llm.endpoints names its model, or llm.model does)
        from .llm.health import discover_model

        key = llm.api_key.get_secret_value() if llm.api_key else None
        model = discover_model(llm.base_url, key, min(10.0, llm.timeout))
        log.info("llm.model not set: using %s, the only model %s serves", model, llm.base_url)
        self.settings = self.settings.model_copy(update={"llm": llm.model_copy(update={"model": model})})

    def _start_local_model(self) -> None:
        from .llm.local_server import start_for

        llm = self.settings.llm
        assert llm.base_url is not None
        self.progress.log(f"starting llama.cpp on {llm.base_url.removeprefix('local:')} (log: llm-server.log)")
        server = start_for(llm.base_url, llm.model, self.workdir / "llm-server.log")
        self._local_server = server
        self._llm_identity = llm.base_url  # cached replies follow the model file, not the port it got
        served = {"base_url": server.base_url, "model": server.plan.alias}
        self.settings = self.settings.model_copy(update={"llm": llm.model_copy(update=served)})

    @property
    def llm(self) -> LLMClient | None:
        """The LLM client, or None when no LLM is configured."""
        self._settle_llm_model()
        if self._llm is None and self.settings.llm.configured:
            from .llm.client import LLMClient

            self._llm = LLMClient(self.settings.llm, cache=self.store, count_tokens=self.tokenizer.count,
                                  cache_identity=self._llm_identity)
        return self._llm

    async def _ensure_llm_ready(self) -> None:
        """Check every configured model (chat, then a served embedding model) before the first call."""
        if self.llm is not None and self.settings.llm.health_check and not self._llm_checked:
            down = await self.llm.health_check()
            for line in down:  # some of several endpoints: the run goes on with the others
                message = f"LLM endpoint out of service for now (tried again later): {line}"
                log.warning(message)
                self.progress.log(message)
            self._llm_checked = True
        await self._ensure_embedder_ready()

    async def _ensure_embedder_ready(self) -> None:
        if self.settings.embeddings.provider != "local" and self.settings.llm.health_check and not self._embedder_checked:
            await self.embedder.health_check()
            self._embedder_checked = True

    async def acheck_models(self) -> None:
        """Raise LLMUnavailableError unless every configured model (chat, embeddings) is served."""
        await self._ensure_llm_ready()

    def _refresher(self, embedder: Embedder | None = None) -> GraphRefresher:
        summarise = None
        if self.llm is not None:
            from .graph.summarise import make_summariser

            summarise = make_summariser(self.llm)
        return GraphRefresher(self.store, embedder or self.embedder, self.tokenizer.count, self.settings.extraction.description_budget,
                              summarise)

    def _pipeline(self, extractor: Extractor, embedder: Embedder | None = None) -> Pipeline:
        embedder = embedder or self.embedder
        return Pipeline(self.store, self.settings, embedder, self.tokenizer, extractor, normalise_name,
                        self._refresher(embedder), self.progress)

    async def _embed(self, texts: Sequence[str]) -> np.ndarray:
        return await self.embedder.embed(texts)

    def _extractor(self, profile: str | None) -> Extractor:
        """The extractor of ``profile`` (default: ``extraction.profile``), from the plug-in registry."""
        self._settle_llm_model()
        settings = self.settings
        if profile:
            settings = settings.model_copy(deep=True)
            settings.extraction.profile = profile
        plugin = get_profile(resolve_profile_name(settings.extraction.profile, settings.llm.configured))
        context = ExtractorContext(settings, self.llm if plugin.needs_llm else None,
                                   self._embed)
        return plugin.make_extractor(context)

    # -- indexing -------------------------------------------------------------------------

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
        lock = self.store.indexing_lock()
        if not lock.acquire():
            message = f"another scholargraph process is indexing {self.workdir} ({lock.holder()})"
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
        extractor = self._extractor(profile)
        report = IndexReport(profile=extractor.name)
        report.notes += getattr(extractor, "notes", [])
        if (profile or self.settings.extraction.profile) == AUTO and not self.settings.llm.configured:
            report.notes.append(f"no LLM configured: using the {extractor.name} extraction profile (a draft graph); "
                                f"set llm.base_url and llm.model for the {AUTO_WITH_LLM} profile")
        if not dry_run:  # unreachable server or unknown model: nothing started
            await (self._ensure_llm_ready() if extractor.uses_llm else self._ensure_embedder_ready())
        pipeline = self._pipeline(extractor)
        opts = options or self.load_options()
        if dry_run:
            docs = await asyncio.to_thread(pipeline.load_paths, list(paths), report, opts) if paths else []
            pipeline.estimate(docs + [_text_document(t) for t in texts], scope, report)
            report.notes.append(self._report_cost_note())
            report.seconds = time.perf_counter() - started
            return report
        # rebuilds an interrupted run left; the entities it left to resolve are resolved with this run's, at its end.
        # Not while other workers index: what they state is dirty until their own end, and rebuilding it
        # here would keep this worker from claiming documents for as long as they go on
        if not self._indexed_elsewhere():
            await self.refresh_graph(pipeline.refresher)
        docs = [_text_document(t) for t in texts]
        if only and paths:  # the selection may name documents of these files: read them all first
            docs = await asyncio.to_thread(pipeline.load_paths, list(paths), report, opts) + docs
        pipeline.register(docs, scope, report, force=force)
        if only:
            self._upgrade_selected(pipeline, only, scope, report)
        before = self.llm.usage_snapshot() if self.llm else {}
        # otherwise files are parsed and registered one by one while the first ones are extracted
        arriving = (lambda: pipeline.arrivals(list(paths), opts, scope, report, force)) if paths and not only else None
        await pipeline.run_pending(report, set(only) if only else None, arriving)
        await self._wait_for_other_workers(pipeline, report, set(only) if only else None, wait)
        pipeline.file_outcomes(report)
        await self._after_index(report)
        report.usage = self.llm.usage_since(before) if self.llm else {}
        report.seconds = time.perf_counter() - started
        return report

    def _upgrade_selected(self, pipeline: Pipeline, only: Sequence[str], scope: str, report: IndexReport) -> None:
        for doc_id in only:
            row = self.store.get_document(doc_id)
            if row is None:
                report.failed.append({"id": doc_id, "error": "no such document in the workspace"})
                continue
            doc = self.store.load_document(doc_id)
            if doc is not None and (row.scope != scope or row.status != DocStatus.PROCESSED):
                pipeline.register([doc], scope, report, force=row.status == DocStatus.PROCESSED)

    def load_options(self, manifest: dict[str, dict[str, Any]] | None = None, exclude: Sequence[str] = ()) -> LoadOptions:
        """How files are read, from the settings (references, size limits), an optional manifest and
        glob patterns of files to leave out."""
        ingest = self.settings.ingest
        return LoadOptions(include_references=self.settings.extraction.include_references, manifest=manifest or {},
                           max_bytes=int(ingest.max_file_mb * 1e6), max_document_bytes=int(ingest.max_document_mb * 1e6),
                           exclude=tuple(exclude))

    def maintenance_owed(self) -> bool:
        """Graph maintenance a killed process left: elements to rebuild, entities to resolve."""
        return bool(self.store.dirty_ids("entities", 1) or self.store.dirty_ids("relations", 1)
                    or (self.settings.extraction.resolve and self.store.pending_maintenance("resolve", 1)))

    async def finish_maintenance(self) -> None:
        """Finish what a killed process left (rebuilds, entity resolution) before a command that
        writes the workspace, unless another process is indexing it (that one finishes it)."""
        if not self.maintenance_owed():
            return
        lock = self.store.indexing_lock()
        if not lock.acquire():
            return
        try:
            await self._pipeline(NoExtraction()).maintain()
        finally:
            lock.release()

    async def refresh_graph(self, refresher: GraphRefresher | None = None) -> None:
        if self.store.dirty_ids("entities", 1) or self.store.dirty_ids("relations", 1):
            await (refresher or self._refresher()).refresh()

    async def _after_index(self, report: IndexReport) -> None:
        """The citation network and the communities follow what a run added."""
        if report.added:
            from .graph.citations import update_citations

            self.progress.phase("citation network")
            cites = await update_citations(self.store, report.added)
            if cites.references:
                report.notes.append(cites.note())
        if self.settings.communities.auto_update and (report.added or report.resumed
                                                      or self.store.pending_maintenance("communities", 1)):
            if busy := self._indexed_elsewhere():
                report.notes.append(f"communities left to the worker that finishes last ({busy} document(s) still "
                                    "being indexed by other workers)")
                return
            reports = self._reports_on_index()
            try:
                self.progress.phase("communities and their reports" if reports else "communities")
                run = await self._update_communities(reports=reports)
            except LLMUnavailableError as exc:
                report.notes.append(f"community reports not written ({exc}); run `scholargraph communities` later")
                return
            if run.computed:
                levels = ', '.join(f'{n} at level {lv}' for lv, n in run.levels.items())
                report.notes.append(f"communities: {levels}; {run.reports_written} report(s) written, {run.reports_kept} kept"
                                    if reports else f"communities: {levels}; {REPORTS_DEFERRED}")

    def _report_cost_note(self) -> str:
        """What a run would spend on community reports (``index --dry-run``)."""
        from .graph.community_update import use_llm

        if not use_llm(self.settings.communities, self.llm):
            return "community reports: extractive, no LLM call"
        now = len({c.signature for c in self.store.list_communities()})
        if self.settings.communities.reports_on_index:
            return (f"community reports (--reports): one LLM call per new or changed community at the end of the run "
                    f"({now} communities now, {self.reports_pending()} without an LLM report); not in the figures above")
        return f"community reports: no LLM call in this run; {REPORTS_DEFERRED}"

    def _reports_on_index(self) -> bool:
        """Reports at the end of an index run only when they cost no LLM call (extractive) or when
        asked (``communities.reports_on_index``): seed 000 Table 3.2's cost model, where an
        incremental insertion pays for its chunks' extraction only."""
        from .graph.community_update import use_llm

        cfg = self.settings.communities
        return cfg.reports_on_index or not use_llm(cfg, self.llm)

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
            if self.store.pending_ids(only) or self.store.interrupted_ids():
                await pipeline.run_pending(report, only)
            busy = self._others_documents(pipeline)

    def _others_documents(self, pipeline: Pipeline) -> int:
        """Documents other live workers are indexing now (never this run's own: on SQLite, where one
        process indexes at a time, none)."""
        if not self._indexed_elsewhere():
            return 0
        processing = {r.id for r in self.store.list_documents(DocStatus.PROCESSING)}
        return len(processing - self.store.interrupted_ids() - pipeline.taken)

    def _indexed_elsewhere(self) -> int:
        """Documents other live workers are indexing now (several workers on one PostgreSQL database).
        Communities and their reports computed before those land would be redone by the last worker,
        so a worker that finishes early leaves them to it."""
        processing = self.store.status_counts().get(DocStatus.PROCESSING.value, 0)
        return max(0, processing - len(self.store.interrupted_ids())) if processing else 0

    def insert(self, paths: Sequence[str | Path] = (), **kwargs: Any) -> IndexReport:
        return self.run(self.ainsert(paths, **kwargs))

    async def awork(self, stop: asyncio.Event, *, profile: str | None = None,
                    on_batch: Callable[[IndexReport], None] | None = None) -> IndexReport:
        """A long-lived worker (``index --worker``) on a PostgreSQL knowledge base: index every document
        that becomes PENDING (registered by any worker or user), do the end-of-run work it owes, then
        wait for more (looking again with back-off) until ``stop`` is set. Stopping gives back the
        documents it holds (the others take them at once); returns everything it did."""
        if self.settings.store.backend != "postgres":
            raise ConfigError("a long-lived worker (index --worker) needs a PostgreSQL knowledge base (--db postgresql://...)")
        extractor = self._extractor(profile)
        total = IndexReport(profile=extractor.name)
        await (self._ensure_llm_ready() if extractor.uses_llm else self._ensure_embedder_ready())
        delay = WORKER_POLL_S[0]
        try:
            async with self.exclusive_indexing(wait=True):
                while not stop.is_set():
                    if not (self.store.pending_ids() or self.store.interrupted_ids()):
                        delay = await _pause(stop, delay)
                        continue
                    delay = WORKER_POLL_S[0]
                    batch = await self._work_batch(extractor, stop)
                    _add_report(total, batch)
                    if on_batch is not None:
                        on_batch(batch)
                    if batch.stopped and not stop.is_set():  # the LLM server is gone: try again later
                        log.warning("%s", batch.stopped)
                        delay = await _pause(stop, WORKER_POLL_S[1])
        finally:
            released = await asyncio.to_thread(self.store.release_claims)
            if released:
                total.notes.append(f"stopped: {len(released)} document(s) given back to the other workers")
        return total

    async def _work_batch(self, extractor: Extractor, stop: asyncio.Event) -> IndexReport:
        """What is pending now, and the end-of-run work it owes (cut short when ``stop`` is set: what
        was committed by then is in the report)."""
        started = time.perf_counter()
        pipeline = self._pipeline(extractor)
        report = IndexReport(profile=extractor.name)
        before = self.llm.usage_snapshot() if self.llm else {}
        for step in (lambda: pipeline.run_pending(report), lambda: self._after_index(report)):
            run, stopped = asyncio.ensure_future(step()), asyncio.ensure_future(stop.wait())
            await asyncio.wait({run, stopped}, return_when=asyncio.FIRST_COMPLETED)
            stopped.cancel()
            if not run.done():
                run.cancel()
                await asyncio.gather(run, return_exceptions=True)
                report.stopped = "stopped (SIGINT/SIGTERM)"
                break
            run.result()
        report.usage = self.llm.usage_since(before) if self.llm else {}
        report.seconds = time.perf_counter() - started
        return report

    def find_document(self, ref: str) -> str:
        """The id of the one paper ``ref`` names: its id, its file name or path, or its title (case
        and spacing ignored). ``NotFoundError`` when none, ``ScholarGraphError`` listing them when several."""
        if self.store.get_document(ref) is not None:
            return ref
        wanted = " ".join(ref.split()).casefold()
        matches = [r for r in self.store.list_documents()
                   if wanted in {" ".join((r.title or "").split()).casefold(), (r.source_path or "").casefold(),
                                 Path(r.source_path or "").name.casefold()}]
        if not matches:
            raise NotFoundError(f"no document with id {ref!r}, and no paper with that file name or title "
                                "(see `scholargraph status`)")
        if len(matches) > 1:
            listed = "; ".join(f"{r.id} ({r.title or '?'}, {Path(r.source_path or '').name})" for r in matches)
            raise ScholarGraphError(f"{ref!r} matches {len(matches)} papers: {listed}; give one of these ids")
        return matches[0].id

    async def adelete(self, ref: str) -> dict[str, Any]:
        """Delete a paper named by id, file name or title (:meth:`find_document`). Graph maintenance
        an earlier run left owed is finished first (even when ``ref`` names no paper)."""
        await self.finish_maintenance()
        doc_id = self.find_document(ref)
        row = self.store.get_document(doc_id)
        if row is not None:  # papers citing it now cite a stub of it (graph.citations)
            from .graph.citations import document_deleted

            await self.store.awrite(lambda: document_deleted(self.store, row))
        # the model is loaded only if a description left behind must be re-embedded
        return await self._pipeline(NoExtraction(), DeferredEmbedder(lambda: self.embedder)).delete(doc_id)

    def delete(self, ref: str) -> dict[str, Any]:
        return self.run(self.adelete(ref))

    def documents_from(self, source: str | Path) -> list[str]:
        """Ids of the papers read from the file ``source`` (its path as indexed, or as given)."""
        given = {str(source), str(Path(source).absolute()), str(Path(source).resolve())}
        return [r.id for r in self.store.list_documents() if r.source_path in given
                or (r.source_path and str(Path(r.source_path).absolute()) in given)]

    async def adelete_source(self, source: str | Path) -> list[dict[str, Any]]:
        """Delete every paper read from the file ``source`` (a JSON or CSV file may hold many)."""
        ids = self.documents_from(source)
        if not ids:
            raise NotFoundError(f"no paper was read from {str(source)!r} (see `scholargraph status`)")
        return [await self.adelete(doc_id) for doc_id in ids]

    def delete_source(self, source: str | Path) -> list[dict[str, Any]]:
        return self.run(self.adelete_source(source))

    # -- querying -------------------------------------------------------------------------

    @property
    def reranker(self) -> Reranker | None:
        """The configured second-stage ranker of text units (``settings.rerank``), or None (default)."""
        if self._reranker is None and self.settings.rerank.backend != "none":
            self._reranker = make_reranker(self.settings.rerank)
        return self._reranker

    def engine(self) -> QueryEngine:
        self._settle_llm_model()
        return QueryEngine(self.store, self.settings, self.embedder, self.tokenizer, self.llm, self._graphs,
                           self.reranker)

    async def aretrieve(self, question: str, mode: str | None = None, top_k: int | None = None, *,
                        clues: bool = True, subgraph: bool = True) -> Retrieval:
        """Ranked, numbered evidence for a question; ``clues``/``subgraph`` = False reproduce the
        thesis ablations (keywords without corpus clues; one-hop neighbours instead of the subgraph)."""
        question = _question(question)
        await self._ensure_llm_ready()
        return await self.engine().retrieve(question, mode, top_k, clues=clues, subgraph=subgraph)

    def retrieve(self, question: str, mode: str | None = None, top_k: int | None = None, **kwargs: Any) -> Retrieval:
        return self.run(self.aretrieve(question, mode, top_k, **kwargs))

    async def aquery(self, question: str, mode: str | None = None, top_k: int | None = None, *,
                     session: str | None = None, on_text: Callable[[str], None] | None = None,
                     clues: bool = True, subgraph: bool = True,
                     history: Sequence[tuple[str, str]] | None = None) -> Answer:
        """``session`` keeps the conversation in the workspace; ``history`` ((question, answer) turns)
        gives it explicitly instead (an OpenAI-style chat request carries its own)."""
        question = _question(question)
        await self._ensure_llm_ready()
        history = list(history or []) if not session else self.store.session_history(session)
        answer = await self.engine().answer(question, mode, top_k, history=history, on_text=on_text, clues=clues,
                                            subgraph=subgraph)
        if session:
            self.store.add_session_turn(session, question, answer.text)
        return answer

    def query(self, question: str, mode: str | None = None, top_k: int | None = None, **kwargs: Any) -> Answer:
        return self.run(self.aquery(question, mode, top_k, **kwargs))

    # -- inspection -----------------------------------------------------------------------

    def status(self) -> list[dict[str, Any]]:
        """One row per document. ``status`` is the stored one, except ``INTERRUPTED`` for a document left
        PROCESSING by a run that has ended (resumed by the next ``index`` run). ``chunk_failures``: chunks
        still without usable model output (the paper is incomplete until a run retries them)."""
        return [status for _, status in self._status_rows()]

    def _status_rows(self) -> list[tuple[DocumentRow, dict[str, Any]]]:
        rows = self.store.list_documents()
        interrupted = self.store.interrupted_ids() if any(r.status == DocStatus.PROCESSING for r in rows) else set()
        failures = self.store.chunk_failure_counts()
        return [(r, _status_row(r, r.id in interrupted, failures.get(r.id, 0))) for r in rows]

    def stats(self) -> dict[str, Any]:
        usage = self.store.usage_by_purpose()
        by_status = self.store.status_counts()
        return {
            "workspace": str(self.workdir),
            "documents": self.store.count("documents"),  # every row, FAILED files included
            "papers": by_status.get(DocStatus.PROCESSED.value, 0),  # indexed papers
            "documents_by_status": by_status,
            "chunks": self.store.count("chunks"),
            "entities": self.store.count("entities"),
            "relations": self.store.count("relations"),
            "keywords": self.store.count("keywords"),
            "chunk_failures": self.store.count("chunk_failures"),
            "mentions": self.store.count("mentions"),
            "sentences": self.store.count("sentences"),
            "embedding_model": self.store.get_meta("embedding_model"),
            "embedding_dim": int(self.store.get_meta("embedding_dim") or 0) or None,
            "usage": usage_to_json(usage),
        }

    def entities(self, type_: str | None = None, search: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        """Entities with degree and source documents; ``search`` matches names and aliases."""
        return [{"id": e.id, "name": e.name, "type": e.type, "description": e.description, "aliases": e.aliases,
                 "weight": e.weight, "degree": e.degree, "documents": e.document_ids}
                for e in self.store.list_entities(type_, search, limit)]

    def _one_entity(self, ref: str) -> str:
        ids = self.store.find_entity(ref)
        if not ids:
            raise NotFoundError(f"no entity named or with id {ref!r} (try `scholargraph entities --search {ref!r}`)")
        if len(ids) > 1:
            raise ScholarGraphError(f"{ref!r} names {len(ids)} entities ({', '.join(ids)}); use an id")
        return ids[0]

    async def amerge_entities(self, keep: str, *others: str) -> dict[str, Any]:
        from .graph.edit import merge_entities

        await self.finish_maintenance()
        keep_id = self._one_entity(keep)
        other_ids = [self._one_entity(o) for o in others]
        gone = merge_entities(self.store, keep_id, other_ids)
        await self.refresh_graph()
        return {"kept": keep_id, "merged": gone["entity"], "relations_merged": len(gone["relation"])}

    def merge_entities(self, keep: str, *others: str) -> dict[str, Any]:
        return self.run(self.amerge_entities(keep, *others))

    async def asplit_entity(self, ref: str) -> list[str]:
        from .graph.edit import split_entity

        await self.finish_maintenance()
        ids = split_entity(self.store, self._one_entity(ref))
        await self.refresh_graph()
        return ids

    def split_entity(self, ref: str) -> list[str]:
        return self.run(self.asplit_entity(ref))

    # -- cross-document analysis: communities, citations, graph statistics ---------------------

    async def _update_communities(self, force: bool = False, rebuild: bool = False, reports: bool = True) -> CommunityRun:
        from .graph.community_update import update_communities, use_llm

        llm = self.llm if use_llm(self.settings.communities, self.llm) else None
        if llm is not None:
            await self._ensure_llm_ready()
        lock = self.store.communities_lock()  # another worker updating them: wait, then find them up to date
        if not await asyncio.to_thread(lock.acquire):
            log.info("%s; waiting for it to finish…", lock.holder())
            while not await asyncio.to_thread(lock.acquire):
                await asyncio.sleep(0.5)
        try:
            # the documents this update follows: one committed meanwhile stays owed (queued by its commit)
            owed = await asyncio.to_thread(self.store.pending_maintenance, "communities")
            run = await update_communities(self.store, self.settings.communities, llm, force=force, rebuild=rebuild,
                                           reports=reports)
            if owed:  # communities and reports are up to date: a run killed before this point left them owed
                await asyncio.to_thread(self.store.finish_maintenance, "communities", owed)
            return run
        finally:
            lock.release()

    async def aupdate_communities(self, force: bool = False, rebuild: bool = False) -> dict[str, Any]:
        """Recompute the communities when the graph changed enough (``force``: anyway; ``rebuild``:
        from scratch, not from the stored ones) and write the missing reports."""
        run: CommunityRun = await self._update_communities(force, rebuild)
        return run.to_json()

    def update_communities(self, force: bool = False, rebuild: bool = False) ->dict[str, Any]:
        return self.run(self.aupdate_communities(force, rebuild))

    async def acommunities(self, level: int | None = None, *, members: bool = False, reports: bool = True) -> dict[str, Any]:
        """Levels (count, modularity) and the communities of ``level`` (all when None), each with its
        report: title, summary, rating (the LLM's; none for an extractive report), key entities,
        papers, cited passages. ``members``: entity ids. The reports still missing are written first
        (LLM calls; ``reports=False``: shown without them)."""
        from .analysis.community_view import list_view

        if reports and self.reports_pending():
            await self._update_communities()
        return list_view(self.store, level, members)

    async def awrite_reports(self) -> dict[str, Any]:
        """Write the community reports still missing (the web app's "write reports"); what was written."""
        run: CommunityRun = await self._update_communities()
        return {**run.to_json(), "pending": self.reports_pending()}

    def communities(self, level: int | None = None, *, members: bool = False, reports: bool = True) -> dict[str, Any]:
        return self.run(self.acommunities(level, members=members, reports=reports))

    def reports_pending(self) -> int:
        """Communities whose report is still to be written (with the LLM when reports use one:
        extractive ones then count as pending too)."""
        from .graph.community_update import pending_reports, use_llm

        return pending_reports(self.store, use_llm(self.settings.communities, self.llm))

    def reports_status(self) -> dict[str, Any]:
        """Communities stored, reports still to write, and whether the LLM would write them."""
        from .graph.community_update import use_llm

        return {"communities": len(self.store.list_communities()), "pending": self.reports_pending(),
                "llm": use_llm(self.settings.communities, self.llm)}

    def report_cost(self) -> dict[str, Any]:
        """What community reports cost (``stats --cost``): LLM reports written, reports pending (one
        call each when something needs them), and the calls and tokens spent on them so far."""
        from .graph.community_update import report_counts

        used = self.store.usage_by_purpose().get("report", Usage())
        return {**report_counts(self.store), "pending": self.reports_pending(), "calls": used.calls,
                "tokens": used.prompt_tokens + used.completion_tokens,
                "when": "at the end of each index run" if self.settings.communities.reports_on_index
                else "when needed (summary mode, `communities`, the web view) or `index --reports`"}

    async def asummarize(self, *, algorithm: str | None = None, depth: int = 3, max_nodes: int = 60,
                         root: str | None = None) -> KGSummary:
        """KG-RAG's hierarchical summary of the graph (seed 001 §III.D; :mod:`.graph.kg_summary`):
        the most connected research concept (or ``root``), its depth-``depth`` subgraph without
        persons / organisations / places, split into subtopics by ``algorithm`` (louvain | leiden;
        default ``communities.algorithm``), each node summarised (by the LLM when one is
        configured, else extractive), compiled into one Markdown document (``.markdown()``) with
        citations to papers and sections."""
        from .graph.kg_summary import summarize_graph

        cfg = self.settings.communities
        return await summarize_graph(self.store, self.llm, algorithm=algorithm or cfg.algorithm, depth=depth,
                                     max_nodes=max_nodes, root=root, seed=cfg.seed, resolution=cfg.resolution)

    def summarize(self, *, algorithm: str | None = None, depth: int = 3, max_nodes: int = 60,
                  root: str | None = None) -> KGSummary:
        return self.run(self.asummarize(algorithm=algorithm, depth=depth, max_nodes=max_nodes, root=root))

    def community(self, community_id: str) ->dict[str, Any]:
        """One community with its report and member entity ids."""
        from .analysis.community_view import one_view

        return one_view(self.store, community_id)

    def citations(self, doc_id: str | None = None, limit: int = 50) ->dict[str, Any]:
        """The citation network: papers with in/out citation counts, edges between workspace papers,
        the most cited papers not in the workspace (stubs); with ``doc_id``, that paper's resolved
        reference list and the papers citing it."""
        from .analysis.citation_view import network_view, paper_view

        return paper_view(self.store, doc_id) if doc_id else network_view(self.store, limit)

    def graph_stats(self) ->dict[str, Any]:
        """Seed 001 Table I and more: nodes, edges, density, average degree, components, clustering,
        communities and modularity per level, entity/relation types, papers per year, citations."""
        from .analysis.graph_stats import graph_stats

        return graph_stats(self.store)

    def plot(self, out: str | Path = "scholargraph_plots", *, level: int = 0, max_nodes: int = 1500) ->dict[str, Any]:
        """Write the PNG figures and the interactive HTML view (``graph.html``) into ``out``."""
        from .analysis.plots import write_plots

        return write_plots(self.store, Path(out), level, self.settings.communities.seed, max_nodes)

    def cost_by_document(self) -> dict[str, dict[str, Any]]:
        return {doc: usage_to_json(u) for doc, u in self.store.usage_by_document().items()}

    def cost_by_endpoint(self) -> dict[str, dict[str, Any]]:
        """Calls, failed attempts and tokens per LLM endpoint (base URL) that answered them, as logged
        (cache hits had no endpoint and are not counted here)."""
        return {url: {"llm_calls": u.calls, "failed_attempts": u.failed_attempts, "prompt_tokens": u.prompt_tokens,
                      "completion_tokens": u.completion_tokens, "total_tokens": u.total_tokens}
                for url, u in sorted(self.store.usage_by_endpoint().items())}

    def cost_outside_documents(self) -> dict[str, Any]:
        """LLM usage tied to no paper (community reports, answers): the whole log less the papers' share."""
        rest = self.store.usage_by_purpose()
        for per_purpose in self.store.usage_by_document().values():
            for purpose, used in per_purpose.items():
                rest[purpose] = rest[purpose].minus(used)
        return usage_to_json({p: u for p, u in rest.items() if u != Usage()})

    # -- browsing (HTTP server, notebooks) --------------------------------------------------

    def document(self, doc_id: str) -> dict[str, Any]:
        """One document's status row plus its bibliographic fields."""
        row = self.store.get_document(doc_id)
        if row is None:
            raise NotFoundError(f"no document with id {doc_id!r} (see `scholargraph status`)")
        return {**_status_row(row), "authors": row.authors, "year": row.year, "venue": row.venue, "doi": row.doi,
                "pmid": row.pmid}

    def passage(self, chunk_id: str) -> dict[str, Any]:
        """A stored chunk with the paper, section and pages it came from (what a citation points to)."""
        chunk = self.store.get_chunks([chunk_id]).get(chunk_id)
        if chunk is None:
            raise NotFoundError(f"no passage (chunk) with id {chunk_id!r}")
        doc = self.document(chunk.document_id)
        return {"chunk_id": chunk.id, "document_id": chunk.document_id, "ordinal": chunk.ordinal,
                "section": chunk.section, "page_start": chunk.page_start, "page_end": chunk.page_end, "text": chunk.text,
                "title": doc["title"], "authors": doc["authors"], "year": doc["year"], "venue": doc["venue"],
                "doi": doc["doi"], "source_path": doc["source_path"]}

    def session_history(self, name: str, limit: int = 50) -> list[dict[str, Any]]:
        return [{"question": q, "answer": a} for q, a in self.store.session_history(name, limit)]

    def entity_types(self) -> dict[str, int]:
        entities = self.store.get_entities(self.store.all_entity_ids(), sources=False)
        return dict(Counter(e.type or "" for e in entities.values()).most_common())

    def neighbourhood(self, ref: str, depth: int = 1, limit: int = 60) -> dict[str, Any]:
        """An entity (name or id) and its neighbours as ``{"nodes", "edges"}`` (graph.browse)."""
        from .graph.browse import neighbourhood

        return neighbourhood(self.store, self._one_entity(ref), depth, limit, self.settings.query.max_graph_relations)

    def subgraph(self, refs: Sequence[str], max_length: int = 4) -> dict[str, Any]:
        """The entities and the shortest paths joining them as ``{"nodes", "edges", "paths"}``."""
        from .graph.browse import subgraph

        return subgraph(self.store, [self._one_entity(r) for r in refs], max_length,
                        self.settings.query.max_graph_relations)

    def relation(self, relation_id: str) -> dict[str, Any]:
        """A relation with its evidence: the sentences of its source passages naming both ends."""
        from .graph.browse import relation_evidence

        found = relation_evidence(self.store, relation_id)
        if found is None:
            raise NotFoundError(f"no relation with id {relation_id!r}")
        return found

    def overview(self, limit: int = 1500, type_: str | None = None, document: str | None = None) -> dict[str, Any]:
        """The whole graph (entities of ``type_``, of ``document``) up to ``limit`` entities, the most
        connected first, laid out with each community together (analysis.overview)."""
        from .analysis.overview import overview

        if document and self.store.get_document(document) is None:
            raise NotFoundError(f"no document with id {document!r} (see `scholargraph status`)")
        return overview(self.store, limit, type_, document, self.settings.communities.seed)

    def paper(self, doc_id: str) -> dict[str, Any]:
        """One paper: metadata, sections, its entities and its citations in and out (analysis.paper_page)."""
        from .analysis.paper_page import paper_page

        return paper_page(self.store, doc_id)

    def library(self, *, search: str = "", status: str | None = None, year: int | None = None, sort: str = "title",
                descending: bool = False, offset: int = 0, limit: int = 50) -> dict[str, Any]:
        """One page of the documents matching ``search``/``status``/``year``, sorted (analysis.library_view)."""
        from .analysis.library_view import library_page

        full = [{**status, "authors": r.authors, "year": r.year, "venue": r.venue, "doi": r.doi,
                 "created_at": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(r.created_at))}
                for r, status in self._status_rows()]
        return library_page(full, search=search, status=status, year=year, sort=sort, descending=descending,
                            offset=offset, limit=limit)

    def export_graph(self, fmt: str = "json") -> str:
        """The whole graph as node-link JSON or GraphML."""
        from .graph.browse import export_graph

        return export_graph(self.store, fmt)

    def export(self, fmt: str, out: str | Path | Any = None, *, doc_ids: Sequence[str] | None = None,
               base: str | None = None) -> dict[str, Any]:
        """Write the graph (of ``doc_ids``, else of every indexed paper) as ``turtle``, ``jsonld``,
        ``graphml``, ``neo4j-csv`` (a directory) or ``json`` (node-link) to ``out`` (a path, an open
        text stream, or None for stdout), streamed; returns what was written. Needs no LLM."""
        from .export import export_workspace

        return export_workspace(self.store, fmt, out, doc_ids, base)

    # -- lifecycle ------------------------------------------------------------------------

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` (async work on this knowledge base) from synchronous code, then close the HTTP
        clients. Works with or without a running event loop (Jupyter): see :func:`~scholargraph.sync.run_sync`."""
        return run_sync(self._closing(coro))

    async def _closing(self, coro: Awaitable[T]) -> T:
        try:
            return await coro
        finally:
            await self.aclose_clients()

    async def aclose_clients(self) -> None:
        if self._llm is not None:
            await self._llm.aclose()
            self._llm = None
            self._llm_checked = False
        if self._embedder is not None:
            await self._embedder.aclose()
        if self._reranker is not None:
            await self._reranker.aclose()
            self._reranker = None

    def close(self) -> None:
        self.store.close()
        if self._local_server is not None:
            self._local_server.stop()
            self._local_server = None

    async def aclose(self) -> None:
        """Close the HTTP clients (LLM, embeddings, reranker) and the workspace, from async code."""
        try:
            await self.aclose_clients()
        finally:
            self.close()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> KnowledgeBase:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _question(question: str) -> str:
    """A question as the engine takes it: lone surrogates (undecodable bytes in a shell argument)
    replaced; an empty one refused."""
    question = scrub(question)
    if not question.strip():
        raise ConfigError("the question is empty")
    return question


def _text_document(item: str | dict[str, Any] | Document) -> Document:
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
    for name in ("added", "failed", "resumed", "warnings", "notes", "incomplete"):
        getattr(total, name).extend(getattr(batch, name))
    total.chunks += batch.chunks
    total.chunk_failures += batch.chunk_failures
    total.seconds += batch.seconds
    for purpose, usage in batch.usage.items():
        total.usage.setdefault(purpose, Usage()).add(usage)


INTERRUPTED = "INTERRUPTED"  # shown for a PROCESSING document whose run has ended


def _status_row(r: DocumentRow, interrupted: bool = False, chunk_failures: int = 0) -> dict[str, Any]:
    return {
        "id": r.id, "title": r.title, "status": INTERRUPTED if interrupted else r.status.value, "scope": r.scope,
        "profile": r.profile, "chunks": r.chunks, "chunk_failures": chunk_failures,
        "error": "interrupted: the next `scholargraph index` run resumes it" if interrupted else r.error, "source_path": r.source_path,
        "updated_at": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(r.updated_at)),
    }


__all__ = ["KnowledgeBase", "Usage"]
