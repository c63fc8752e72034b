"""KnowledgeBase: the one facade over a workspace (CLI, HTTP server and Python users use only this).

    from scholargraph import KnowledgeBase
    kb = KnowledgeBase("my_workspace")
    kb.insert(["papers/"])
    print(kb.query("Which methods use contrastive learning?").text)

Every method that waits on models or the network has an async twin (``ainsert``, ``aquery``, ...);
the sync ones also work inside a running event loop (Jupyter). Heavy parts (embedding model, LLM
client, extractor) are created on first use, so ``status`` and ``stats`` stay instant.

The facade delegates to the application services (:mod:`scholargraph.app`): ``kb.workspace`` (the
composition root), ``kb.indexing``, ``kb.curation`` and ``kb.browse`` (more browsing: neighbourhoods,
relations' evidence, entity types, sessions, graph export, costs). Browsing returns typed views
(:mod:`scholargraph.app.views`); each view's ``to_json()`` is what ``--json`` and the HTTP API print.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .app.browse import Browse
from .app.curation import Curation
from .app.indexing import Indexing
from .app.views import (
    CitationNetwork,
    CommunitiesView,
    CommunityView,
    Deletion,
    DocumentInfo,
    DocumentStatus,
    EntityMerge,
    EntityView,
    ExportReport,
    GraphStats,
    PaperCitations,
    Passage,
    PlotFiles,
    WorkspaceStats,
)
from .app.workspace import Workspace
from .config import Settings, load_settings
from .errors import ConfigError
from .ingest.registry import LoadOptions
from .ingest.surrogates import scrub
from .models import Answer, Document, Usage
from .progress import Progress
from .query.engine import QueryEngine
from .query.retrieval import Retrieval
from .report import IndexReport

if TYPE_CHECKING:
    from .graph.community_update import CommunityRun
    from .graph.kg_summary import KGSummary
    from .ingest.tokenizer import TextTokenizer
    from .llm.client import LLMClient
    from .llm.embeddings import Embedder
    from .store.base import Store

T = TypeVar("T")


class KnowledgeBase:
    def __init__(self, workdir: str | Path | None = None, settings: Settings | None = None, *,
                 progress: Progress | None = None, create: bool = True, **overrides: Any):
        """``create=False``: open an existing workspace only (``WorkspaceError`` when there is none),
        for callers that only read it."""
        settings = settings or load_settings(workdir, overrides)
        if workdir is not None and settings.workdir != Path(workdir):
            settings = settings.model_copy(update={"workdir": Path(workdir)})
        self.workspace = Workspace(settings, progress=progress, create=create)
        self.indexing = Indexing(self.workspace)
        self.curation = Curation(self.workspace, self.indexing)
        self.browse = Browse(self.workspace, self.indexing)

    # -- the workspace's parts (attributes) -------------------------------------------------

    @property
    def settings(self) -> Settings:
        return self.workspace.settings

    @settings.setter
    def settings(self, value: Settings) -> None:
        self.workspace.settings = value

    @property
    def progress(self) -> Progress:
        return self.workspace.progress

    @progress.setter
    def progress(self, value: Progress) -> None:
        self.workspace.progress = value

    @property
    def store(self) -> Store:
        return self.workspace.store

    @property
    def workdir(self) -> Path:
        return self.workspace.workdir

    @property
    def embedder(self) -> Embedder:
        return self.workspace.embedder

    @property
    def tokenizer(self) -> TextTokenizer:
        return self.workspace.tokenizer

    @property
    def llm(self) -> LLMClient | None:
        """The LLM client, or None when no LLM is configured."""
        return self.workspace.llm

    async def acheck_models(self) -> None:
        """Raise LLMUnavailableError unless every configured model (chat, embeddings) is served."""
        await self.workspace.acheck_models()

    def engine(self) -> QueryEngine:
        return self.workspace.engine()

    # -- indexing and curation ---------------------------------------------------------------

    async def ainsert(self, paths: Sequence[str | Path] = (), *, texts: Sequence[str | dict[str, Any] | Document] = (),
                      scope: str = "full", only: Sequence[str] | None = None, profile: str | None = None,
                      force: bool = False, options: LoadOptions | None = None, dry_run: bool = False,
                      wait: bool = True) -> IndexReport:
        """Index files/directories and/or raw texts (str, dict with title/text/id/metadata, or a
        ready ``Document``). When another process is indexing the same workspace, wait for it
        (``wait=False``: raise ``WorkspaceBusyError``)."""
        return await self.indexing.ainsert(paths, texts=texts, scope=scope, only=only, profile=profile, force=force,
                                           options=options, dry_run=dry_run, wait=wait)

    def insert(self, paths: Sequence[str | Path] = (), *, texts: Sequence[str | dict[str, Any] | Document] = (),
               scope: str = "full", only: Sequence[str] | None = None, profile: str | None = None, force: bool = False,
               options: LoadOptions | None = None, dry_run: bool = False, wait: bool = True) -> IndexReport:
        return self.run(self.ainsert(paths, texts=texts, scope=scope, only=only, profile=profile, force=force,
                                     options=options, dry_run=dry_run, wait=wait))

    async def adelete(self, ref: str) -> Deletion:
        """Delete a paper named by id, file name or title. Graph maintenance an earlier run left
        owed is finished first (even when ``ref`` names no paper)."""
        return await self.curation.adelete(ref)

    def delete(self, ref: str) -> Deletion:
        return self.run(self.adelete(ref))

    async def adelete_source(self, source: str | Path) -> list[Deletion]:
        """Delete every paper read from the file ``source`` (a JSON or CSV file may hold many)."""
        return await self.curation.adelete_source(source)

    def delete_source(self, source: str | Path) -> list[Deletion]:
        return self.run(self.adelete_source(source))

    async def amerge_entities(self, keep: str, *others: str) -> EntityMerge:
        return await self.curation.amerge_entities(keep, *others)

    def merge_entities(self, keep: str, *others: str) -> EntityMerge:
        return self.run(self.amerge_entities(keep, *others))

    async def asplit_entity(self, ref: str) -> list[str]:
        return await self.curation.asplit_entity(ref)

    def split_entity(self, ref: str) -> list[str]:
        return self.run(self.asplit_entity(ref))

    # -- querying -------------------------------------------------------------------------

    async def aretrieve(self, question: str, mode: str | None = None, top_k: int | None = None, *,
                        clues: bool = True, subgraph: bool = True) -> Retrieval:
        """Ranked, numbered evidence for a question; ``clues``/``subgraph`` = False reproduce the
        thesis ablations (keywords without corpus clues; one-hop neighbours instead of the subgraph)."""
        question = _question(question)
        await self.workspace.ensure_llm_ready()
        return await self.engine().retrieve(question, mode, top_k, clues=clues, subgraph=subgraph)

    def retrieve(self, question: str, mode: str | None = None, top_k: int | None = None, *,
                 clues: bool = True, subgraph: bool = True) -> Retrieval:
        return self.run(self.aretrieve(question, mode, top_k, clues=clues, subgraph=subgraph))

    async def aquery(self, question: str, mode: str | None = None, top_k: int | None = None, *,
                     session: str | None = None, on_text: Callable[[str], None] | None = None,
                     clues: bool = True, subgraph: bool = True,
                     history: Sequence[tuple[str, str]] | None = None) -> Answer:
        """``session`` keeps the conversation in the workspace; ``history`` ((question, answer) turns)
        gives it explicitly instead (an OpenAI-style chat request carries its own)."""
        question = _question(question)
        await self.workspace.ensure_llm_ready()
        history = list(history or []) if not session else self.store.session_history(session)
        answer = await self.engine().answer(question, mode, top_k, history=history, on_text=on_text, clues=clues,
                                            subgraph=subgraph)
        if session:
            self.store.add_session_turn(session, question, answer.text)
        return answer

    def query(self, question: str, mode: str | None = None, top_k: int | None = None, *,
              session: str | None = None, on_text: Callable[[str], None] | None = None, clues: bool = True,
              subgraph: bool = True, history: Sequence[tuple[str, str]] | None = None) -> Answer:
        return self.run(self.aquery(question, mode, top_k, session=session, on_text=on_text, clues=clues,
                                    subgraph=subgraph, history=history))

    # -- what the workspace holds (more on kb.browse) -------------------------------------------

    def status(self) -> list[DocumentStatus]:
        """One row per document (``INTERRUPTED`` for a document left PROCESSING by a run that has ended)."""
        return self.browse.status()

    def stats(self) -> WorkspaceStats:
        return self.browse.stats()

    def entities(self, type_: str | None = None, search: str | None = None, limit: int = 100) -> list[EntityView]:
        """Entities with degree and source documents; ``search`` matches names and aliases."""
        return self.browse.entities(type_, search, limit)

    def document(self, doc_id: str) -> DocumentInfo:
        """One document's status row plus its bibliographic fields."""
        return self.browse.document(doc_id)

    def passage(self, chunk_id: str) -> Passage:
        """A stored chunk with the paper, section and pages it came from (what a citation points to)."""
        return self.browse.passage(chunk_id)

    def cost_by_document(self) -> dict[str, dict[str, Usage]]:
        """LLM usage per paper, by purpose (``usage_to_json(usage)``: what ``stats --cost`` prints)."""
        return self.browse.cost_by_document()

    async def aupdate_communities(self, force: bool = False, rebuild: bool = False) -> CommunityRun:
        """Recompute the communities when the graph changed enough (``force``: anyway; ``rebuild``:
        from scratch, not from the stored ones) and write the missing reports; what was done
        (``to_json()``: the ``update`` object of ``communities --json``)."""
        return await self.indexing.update_communities(force, rebuild)

    def update_communities(self, force: bool = False, rebuild: bool = False) -> CommunityRun:
        return self.run(self.aupdate_communities(force, rebuild))

    async def acommunities(self, level: int | None = None, *, members: bool = False,
                           reports: bool = True) -> CommunitiesView:
        """Levels and the communities of ``level`` (all when None), each with its report; the reports
        still missing are written first (``reports=False``: shown without them)."""
        return await self.browse.acommunities(level, members=members, reports=reports)

    def communities(self, level: int | None = None, *, members: bool = False, reports: bool = True) -> CommunitiesView:
        return self.run(self.acommunities(level, members=members, reports=reports))

    async def asummarize(self, *, algorithm: str | None = None, depth: int = 3, max_nodes: int = 60,
                         root: str | None = None) -> KGSummary:
        """KG-RAG's hierarchical summary of the graph around its central concept (or ``root``), as
        one Markdown document (``.markdown()``) with citations (:meth:`.app.browse.Browse.asummarize`)."""
        return await self.browse.asummarize(algorithm=algorithm, depth=depth, max_nodes=max_nodes, root=root)

    def summarize(self, *, algorithm: str | None = None, depth: int = 3, max_nodes: int = 60,
                  root: str | None = None) -> KGSummary:
        return self.run(self.asummarize(algorithm=algorithm, depth=depth, max_nodes=max_nodes, root=root))

    def community(self, community_id: str) -> CommunityView:
        """One community with its report and member entity ids."""
        return self.browse.community(community_id)

    def citations(self, doc_id: str | None = None, limit: int = 50) -> CitationNetwork | PaperCitations:
        """The citation network, or with ``doc_id`` that paper's references and the papers citing it."""
        return self.browse.citations(doc_id, limit)

    def graph_stats(self) -> GraphStats:
        return self.browse.graph_stats()

    def plot(self, out: str | Path = "scholargraph_plots", *, level: int = 0, max_nodes: int = 1500) -> PlotFiles:
        """Write the PNG figures and the interactive HTML view (``graph.html``) into ``out``."""
        return self.browse.plot(out, level=level, max_nodes=max_nodes)

    def export(self, fmt: str, out: str | Path | Any = None, *, doc_ids: Sequence[str] | None = None,
               base: str | None = None) -> ExportReport:
        """Write the graph (of ``doc_ids``, else of every indexed paper) as ``turtle``, ``jsonld``,
        ``graphml``, ``neo4j-csv`` or ``json``, streamed; returns what was written."""
        return self.browse.export(fmt, out, doc_ids=doc_ids, base=base)

    # -- lifecycle ------------------------------------------------------------------------

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` (async work on this knowledge base) from synchronous code, on the knowledge
        base's own event loop: the HTTP clients (LLM, embeddings) stay open from call to call until
        :meth:`close`. Works with or without a running event loop (Jupyter): see
        :class:`~scholargraph.sync.KeptLoop`."""
        return self.workspace.run(coro)

    def close(self) -> None:
        self.workspace.close()

    async def aclose(self) -> None:
        """Close the HTTP clients (LLM, embeddings, reranker) and the workspace, from async code."""
        await self.workspace.aclose()

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


__all__ = ["KnowledgeBase", "Usage"]
