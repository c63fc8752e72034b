"""The composition root of one workspace: its settings, store, in-memory graph and progress
display, and the heavy parts made on first use (embedding model, tokenizer, LLM client, reranker,
query engine). The application services (:mod:`.indexing`, :mod:`.curation`, :mod:`.browse`)
depend on it; it depends on none of them, nor on the facade."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ..config import Settings
from ..errors import EmbeddingMismatchError, NotFoundError, ScholarGraphError
from ..extract.base import Extractor
from ..graph.memory import GraphCache
from ..graph.refresh import GraphRefresher
from ..ingest.tokenizer import TextTokenizer, load_tokenizer
from ..llm.embeddings import Embedder, make_embedder
from ..llm.rerank import Reranker, make_reranker
from ..plugins.base import ExtractorContext
from ..plugins.registry import check_settings, get_profile, resolve_profile_name
from ..progress import NullProgress, Progress
from ..query.engine import QueryEngine
from ..store import open_store
from ..sync import KeptLoop
from ..text.names import normalise_name
from .pipeline import Pipeline

if TYPE_CHECKING:
    from ..llm.client import LLMClient
    from ..llm.local_server import LocalServer

T = TypeVar("T")

log = logging.getLogger(__name__)


class Workspace:
    def __init__(self, settings: Settings, *, progress: Progress | None = None, create: bool = True):
        check_settings(settings)  # the plug-ins named exist, their [plugins.*] sections are valid
        self.settings = settings
        self.store = open_store(settings.workdir, settings.store.backend, create=create, **settings.store.options())
        self.graphs = GraphCache()  # the in-memory graph, shared by every query engine of this workspace
        self.progress = progress or NullProgress()
        self._embedder: Embedder | None = None
        self._tokenizer: TextTokenizer | None = None
        self._llm: LLMClient | None = None
        self._local_server: LocalServer | None = None  # llama.cpp serving a local:PATH.gguf model
        self._llm_identity: str | None = None
        self._llm_checked = False
        self._embedder_checked = False
        self._reranker: Reranker | None = None
        self._sync = KeptLoop()  # the event loop of the sync API (run)

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

    def settle_llm_model(self) -> None:
        """``llm.base_url`` without ``llm.model``: use the server's only model (asked once, when an LLM
        is first needed), or stop with the list of the served ones; never fall back silently.
        ``local:PATH.gguf``: start llama.cpp on that file (stopped by :meth:`close`)."""
        llm = self.settings.llm
        if llm.local_model and self._local_server is None:
            self._start_local_model()
            return
        if llm.endpoints or not llm.base_url or llm.model:
            return  # (each of llm.endpoints names its model, or llm.model does)
        from ..llm.health import discover_model

        key = llm.api_key.get_secret_value() if llm.api_key else None
        model = discover_model(llm.base_url, key, min(10.0, llm.timeout))
        log.info("llm.model not set: using %s, the only model %s serves", model, llm.base_url)
        self.settings = self.settings.model_copy(update={"llm": llm.model_copy(update={"model": model})})

    def _start_local_model(self) -> None:
        from ..llm.local_server import start_for

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
        self.settle_llm_model()
        if self._llm is None and self.settings.llm.configured:
            from ..llm.client import LLMClient

            self._llm = LLMClient(self.settings.llm, cache=self.store, count_tokens=self.tokenizer.count,
                                  cache_identity=self._llm_identity)
        return self._llm

    async def ensure_llm_ready(self) -> None:
        """Check every configured model (chat, then a served embedding model) before the first call."""
        if self.llm is not None and self.settings.llm.health_check and not self._llm_checked:
            down = await self.llm.health_check()
            for line in down:  # some of several endpoints: the run goes on with the others
                message = f"LLM endpoint out of service for now (tried again later): {line}"
                log.warning(message)
                self.progress.log(message)
            self._llm_checked = True
        await self.ensure_embedder_ready()

    async def ensure_embedder_ready(self) -> None:
        if self.settings.embeddings.provider != "local" and self.settings.llm.health_check and not self._embedder_checked:
            await self.embedder.health_check()
            self._embedder_checked = True

    async def acheck_models(self) -> None:
        """Raise LLMUnavailableError unless every configured model (chat, embeddings) is served."""
        await self.ensure_llm_ready()

    def refresher(self, embedder: Embedder | None = None) -> GraphRefresher:
        summarise = None
        if self.llm is not None:
            from ..graph.summarise import make_summariser

            summarise = make_summariser(self.llm)
        return GraphRefresher(self.store, embedder or self.embedder, self.tokenizer.count, self.settings.extraction.description_budget,
                              summarise)

    def pipeline(self, extractor: Extractor, embedder: Embedder | None = None) -> Pipeline:
        embedder = embedder or self.embedder
        return Pipeline(self.store, self.settings, embedder, self.tokenizer, extractor, normalise_name,
                        self.refresher(embedder), self.progress)

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        return await self.embedder.embed(texts)

    def extractor(self, profile: str | None) -> Extractor:
        """The extractor of ``profile`` (default: ``extraction.profile``), from the plug-in registry."""
        self.settle_llm_model()
        settings = self.settings
        if profile:
            settings = settings.model_copy(deep=True)
            settings.extraction.profile = profile
        plugin = get_profile(resolve_profile_name(settings.extraction.profile, settings.llm.configured))
        context = ExtractorContext(settings, self.llm if plugin.needs_llm else None,
                                   self.embed)
        return plugin.make_extractor(context)

    @property
    def reranker(self) -> Reranker | None:
        """The configured second-stage ranker of text units (``settings.rerank``), or None (default)."""
        if self._reranker is None and self.settings.rerank.backend != "none":
            self._reranker = make_reranker(self.settings.rerank)
        return self._reranker

    def engine(self) -> QueryEngine:
        self.settle_llm_model()
        return QueryEngine(self.store, self.settings, self.embedder, self.tokenizer, self.llm, self.graphs,
                           self.reranker)

    def one_entity(self, ref: str) -> str:
        ids = self.store.find_entity(ref)
        if not ids:
            raise NotFoundError(f"no entity named or with id {ref!r} (try `scholargraph entities --search {ref!r}`)")
        if len(ids) > 1:
            raise ScholarGraphError(f"{ref!r} names {len(ids)} entities ({', '.join(ids)}); use an id")
        return ids[0]

    def use_embedder(self, embedder: Embedder) -> None:
        """Use ``embedder`` from now on (after re-embedding the workspace with it)."""
        self._embedder = embedder

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` (async work on this workspace) from synchronous code, on the workspace's own
        event loop, kept until :meth:`close` with the HTTP clients made for it (LLM, embeddings):
        each call reuses them. Works with or without a running event loop (Jupyter): see
        :class:`~scholargraph.sync.KeptLoop`."""
        return self._sync.run(coro)

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
        try:
            self._sync.close(self.aclose_clients)  # the clients the sync calls kept, closed on their loop
        finally:
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
