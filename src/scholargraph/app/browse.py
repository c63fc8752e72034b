"""Browsing: what the workspace holds, for the CLI, the HTTP server and notebooks -- documents
and their status, counts and costs, entities, communities, citations, graph statistics, passages,
neighbourhoods, relations' evidence, exports and figures. Works on the
:class:`~.workspace.Workspace`, never on the facade."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import NotFoundError
from ..models import DocStatus, Usage
from .indexing import Indexing
from .views import (
    CitationNetwork,
    CommunitiesView,
    CommunityView,
    DocumentInfo,
    DocumentStatus,
    EmbeddingBatches,
    EndpointCosts,
    EntityView,
    ExportReport,
    GraphStats,
    LibraryPage,
    Neighbourhood,
    Overview,
    PaperCitations,
    PaperPage,
    Passage,
    PlotFiles,
    RelationEvidence,
    ReportCost,
    ReportsStatus,
    ReportsWritten,
    SessionTurn,
    Subgraph,
    WorkspaceStats,
    local_time,
)
from .workspace import Workspace

if TYPE_CHECKING:
    from ..graph.kg_summary import KGSummary
    from ..store.base import DocumentRow


class Browse:
    def __init__(self, workspace: Workspace, indexing: Indexing):
        self.ws = workspace
        self.indexing = indexing

    def status_rows(self) -> list[tuple[DocumentRow, DocumentStatus]]:
        rows = self.ws.store.list_documents()
        interrupted = self.ws.store.interrupted_ids() if any(r.status == DocStatus.PROCESSING for r in rows) else set()
        failures = self.ws.store.chunk_failure_counts()
        return [(r, DocumentStatus.of_row(r, r.id in interrupted, failures.get(r.id, 0))) for r in rows]

    def library(self, *, search: str = "", status: str | None = None, year: int | None = None, sort: str = "title",
                descending: bool = False, offset: int = 0, limit: int = 50) -> LibraryPage:
        """One page of the documents matching ``search``/``status``/``year``, sorted (analysis.library_view)."""
        from ..analysis.library_view import library_page

        full = [{**row.to_json(), "authors": r.authors, "year": r.year, "venue": r.venue, "doi": r.doi,
                 "created_at": local_time(r.created_at)}
                for r, row in self.status_rows()]
        return LibraryPage.of(library_page(full, search=search, status=status, year=year, sort=sort,
                                           descending=descending, offset=offset, limit=limit))

    def paper(self, doc_id: str) -> PaperPage:
        """One paper: metadata, sections, its entities and its citations in and out (analysis.paper_page)."""
        from ..analysis.paper_page import paper_page

        return PaperPage.of(paper_page(self.ws.store, doc_id))

    def overview(self, limit: int = 1500, type_: str | None = None, document: str | None = None) -> Overview:
        """The whole graph (entities of ``type_``, of ``document``) up to ``limit`` entities, the most
        connected first, laid out with each community together (analysis.overview)."""
        from ..analysis.overview import overview

        if document and self.ws.store.get_document(document) is None:
            raise NotFoundError(f"no document with id {document!r} (see `scholargraph status`)")
        return Overview.of(overview(self.ws.store, limit, type_, document, self.ws.settings.communities.seed))

    def reports_status(self) -> ReportsStatus:
        """Communities stored, reports still to write, and whether the LLM would write them."""
        from ..graph.community_update import use_llm

        return ReportsStatus(communities=len(self.ws.store.list_communities()), pending=self.indexing.reports_pending(),
                             llm=use_llm(self.ws.settings.communities, self.ws.llm))

    async def awrite_reports(self) -> ReportsWritten:
        """Write the community reports still missing (the web app's "write reports"); what was written."""
        run = await self.indexing.update_communities()
        return ReportsWritten(run, self.indexing.reports_pending())

    def status(self) -> list[DocumentStatus]:
        """One row per document. ``status`` is the stored one, except ``INTERRUPTED`` for a document left
        PROCESSING by a run that has ended (resumed by the next ``index`` run). ``chunk_failures``: chunks
        still without usable model output (the paper is incomplete until a run retries them)."""
        return [row for _, row in self.status_rows()]

    def stats(self) -> WorkspaceStats:
        store = self.ws.store
        by_status = store.status_counts()
        return WorkspaceStats(
            workspace=str(self.ws.workdir),
            documents=store.count("documents"),  # every row, FAILED files included
            papers=by_status.get(DocStatus.PROCESSED.value, 0),  # indexed papers
            documents_by_status=by_status,
            chunks=store.count("chunks"),
            entities=store.count("entities"),
            relations=store.count("relations"),
            keywords=store.count("keywords"),
            chunk_failures=store.count("chunk_failures"),
            mentions=store.count("mentions"),
            sentences=store.count("sentences"),
            embedding_model=store.get_meta("embedding_model"),
            embedding_dim=int(store.get_meta("embedding_dim") or 0) or None,
            usage=store.usage_by_purpose(),
        )

    def entities(self, type_: str | None = None, search: str | None = None, limit: int = 100) -> list[EntityView]:
        """Entities with degree and source documents; ``search`` matches names and aliases."""
        return [EntityView(id=e.id, name=e.name, type=e.type, description=e.description, aliases=e.aliases,
                           weight=e.weight, degree=e.degree, documents=e.document_ids)
                for e in self.ws.store.list_entities(type_, search, limit)]

    async def acommunities(self, level: int | None = None, *, members: bool = False,
                           reports: bool = True) -> CommunitiesView:
        """Levels (count, modularity) and the communities of ``level`` (all when None), each with its
        report: title, summary, rating (the LLM's; none for an extractive report), key entities,
        papers, cited passages. ``members``: entity ids. The reports still missing are written first
        (LLM calls; ``reports=False``: shown without them)."""
        from ..analysis.community_view import list_view

        if reports and self.indexing.reports_pending():
            await self.indexing.update_communities()
        return CommunitiesView.of(list_view(self.ws.store, level, members))

    def report_cost(self) -> ReportCost:
        """What community reports cost (``stats --cost``): LLM reports written, reports pending (one
        call each when something needs them), and the calls and tokens spent on them so far."""
        from ..graph.community_update import report_counts

        used = self.ws.store.usage_by_purpose().get("report", Usage())
        counts = report_counts(self.ws.store)
        return ReportCost(written=counts["written"], extractive=counts["extractive"],
                          pending=self.indexing.reports_pending(), calls=used.calls,
                          tokens=used.prompt_tokens + used.completion_tokens,
                          when="at the end of each index run" if self.ws.settings.communities.reports_on_index
                          else "when needed (summary mode, `communities`, the web view) or `index --reports`")

    async def asummarize(self, *, algorithm: str | None = None, depth: int = 3, max_nodes: int = 60,
                         root: str | None = None) -> KGSummary:
        """KG-RAG's hierarchical summary of the graph (seed 001 §III.D; :mod:`scholargraph.graph.kg_summary`):
        the most connected research concept (or ``root``), its depth-``depth`` subgraph without
        persons / organisations / places, split into subtopics by ``algorithm`` (louvain | leiden;
        default ``communities.algorithm``), each node summarised (by the LLM when one is
        configured, else extractive), compiled into one Markdown document (``.markdown()``) with
        citations to papers and sections."""
        from ..graph.kg_summary import summarize_graph

        cfg = self.ws.settings.communities
        return await summarize_graph(self.ws.store, self.ws.llm, algorithm=algorithm or cfg.algorithm, depth=depth,
                                     max_nodes=max_nodes, root=root, seed=cfg.seed, resolution=cfg.resolution)

    def community(self, community_id: str) -> CommunityView:
        """One community with its report and member entity ids."""
        from ..analysis.community_view import one_view

        return CommunityView.of(one_view(self.ws.store, community_id))

    def citations(self, doc_id: str | None = None, limit: int = 50) -> CitationNetwork | PaperCitations:
        """The citation network: papers with in/out citation counts, edges between workspace papers,
        the most cited papers not in the workspace (stubs); with ``doc_id``, that paper's resolved
        reference list and the papers citing it."""
        from ..analysis.citation_view import network_view, paper_view

        if doc_id:
            return PaperCitations.of(paper_view(self.ws.store, doc_id))
        return CitationNetwork.of(network_view(self.ws.store, limit))

    def graph_stats(self) -> GraphStats:
        """Seed 001 Table I and more: nodes, edges, density, average degree, components, clustering,
        communities and modularity per level, entity/relation types, papers per year, citations."""
        from ..analysis.graph_stats import graph_stats

        return GraphStats.of(graph_stats(self.ws.store))

    def plot(self, out: str | Path = "scholargraph_plots", *, level: int = 0, max_nodes: int = 1500) -> PlotFiles:
        """Write the PNG figures and the interactive HTML view (``graph.html``) into ``out``."""
        from ..analysis.plots import write_plots

        return PlotFiles.of(write_plots(self.ws.store, Path(out), level, self.ws.settings.communities.seed, max_nodes))

    def cost_by_document(self) -> dict[str, dict[str, Usage]]:
        """LLM usage per paper, by purpose (``usage_to_json`` of each is what ``stats --cost`` prints)."""
        return self.ws.store.usage_by_document()

    def cost_by_endpoint(self) -> EndpointCosts:
        """Calls, failed attempts and tokens per LLM endpoint (base URL) that answered them, as logged
        (cache hits had no endpoint and are not counted here)."""
        return EndpointCosts(self.ws.store.usage_by_endpoint())

    def embedding_batches_by_endpoint(self) -> EmbeddingBatches:
        """Batches each embedding endpoint computed (``embeddings.endpoints``; vectors found in the
        embedding cache cost none)."""
        return EmbeddingBatches(self.ws.store.embedding_usage_by_endpoint())

    def cost_outside_documents(self) -> dict[str, Usage]:
        """LLM usage tied to no paper (community reports, answers): the whole log less the papers' share."""
        rest = self.ws.store.usage_by_purpose()
        for per_purpose in self.ws.store.usage_by_document().values():
            for purpose, used in per_purpose.items():
                rest[purpose] = rest[purpose].minus(used)
        return {p: u for p, u in rest.items() if u != Usage()}

    def document(self, doc_id: str) -> DocumentInfo:
        """One document's status row plus its bibliographic fields."""
        row = self.ws.store.get_document(doc_id)
        if row is None:
            raise NotFoundError(f"no document with id {doc_id!r} (see `scholargraph status`)")
        return DocumentInfo(**vars(DocumentStatus.of_row(row)), authors=row.authors, year=row.year, venue=row.venue,
                            doi=row.doi, pmid=row.pmid)

    def passage(self, chunk_id: str) -> Passage:
        """A stored chunk with the paper, section and pages it came from (what a citation points to)."""
        chunk = self.ws.store.get_chunks([chunk_id]).get(chunk_id)
        if chunk is None:
            raise NotFoundError(f"no passage (chunk) with id {chunk_id!r}")
        doc = self.document(chunk.document_id)
        return Passage(chunk_id=chunk.id, document_id=chunk.document_id, ordinal=chunk.ordinal, section=chunk.section,
                       page_start=chunk.page_start, page_end=chunk.page_end, text=chunk.text, title=doc.title,
                       authors=doc.authors, year=doc.year, venue=doc.venue, doi=doc.doi, source_path=doc.source_path)

    def session_history(self, name: str, limit: int = 50) -> list[SessionTurn]:
        return [SessionTurn(q, a) for q, a in self.ws.store.session_history(name, limit)]

    def entity_types(self) -> dict[str, int]:
        entities = self.ws.store.get_entities(self.ws.store.all_entity_ids(), sources=False)
        return dict(Counter(e.type or "" for e in entities.values()).most_common())

    def neighbourhood(self, ref: str, depth: int = 1, limit: int = 60) -> Neighbourhood:
        """An entity (name or id) and its neighbours as ``{"nodes", "edges"}`` (graph.browse)."""
        from ..graph.browse import neighbourhood

        return Neighbourhood.of(neighbourhood(self.ws.store, self.ws.one_entity(ref), depth, limit,
                                              self.ws.settings.query.max_graph_relations))

    def subgraph(self, refs: Sequence[str], max_length: int = 4) -> Subgraph:
        """The entities and the shortest paths joining them as ``{"nodes", "edges", "paths"}``."""
        from ..graph.browse import subgraph

        return Subgraph.of(subgraph(self.ws.store, [self.ws.one_entity(r) for r in refs], max_length,
                                    self.ws.settings.query.max_graph_relations))

    def relation(self, relation_id: str) -> RelationEvidence:
        """A relation with its evidence: the sentences of its source passages naming both ends."""
        from ..graph.browse import relation_evidence

        found = relation_evidence(self.ws.store, relation_id)
        if found is None:
            raise NotFoundError(f"no relation with id {relation_id!r}")
        return RelationEvidence.of(found)

    def export_graph(self, fmt: str = "json") -> str:
        """The whole graph as node-link JSON or GraphML."""
        from ..graph.browse import export_graph

        return export_graph(self.ws.store, fmt)

    def export(self, fmt: str, out: str | Path | Any = None, *, doc_ids: Sequence[str] | None = None,
               base: str | None = None) -> ExportReport:
        """Write the graph (of ``doc_ids``, else of every indexed paper) as ``turtle``, ``jsonld``,
        ``graphml``, ``neo4j-csv`` (a directory) or ``json`` (node-link) to ``out`` (a path, an open
        text stream, or None for stdout), streamed; returns what was written. Needs no LLM."""
        from ..export import export_workspace

        return ExportReport.of(export_workspace(self.ws.store, fmt, out, doc_ids, base))

