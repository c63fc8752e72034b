"""What browsing returns (:mod:`.browse`), and what deleting and merging did (:mod:`.curation`):
typed views of the workspace, one dataclass per answer.

Each view's ``to_json()`` is the object the CLI prints with ``--json`` and the HTTP API answers: its
fields in order are the JSON object's keys (nested views and :class:`~scholargraph.models.Usage`
maps written out). Parts that are lists of records built by the analysis modules (a community's
key entities, a paper's sections, an overview's nodes) stay plain JSON objects (``JsonObject``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Self

from ..models import Usage, usage_to_json

if TYPE_CHECKING:
    from ..graph.community_update import CommunityRun
    from ..store.base import DocumentRow

JsonObject = dict[str, Any]

INTERRUPTED = "INTERRUPTED"  # shown for a PROCESSING document whose run has ended


def plain(value: Any) -> Any:
    """``value`` as JSON data: views through their ``to_json``, lists and dicts element by element."""
    if isinstance(value, View):
        return value.to_json()
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


class View:
    """A view's JSON object: its dataclass fields, in order."""

    def to_json(self) -> JsonObject:
        return {f.name: plain(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Self:
        """The view of a JSON object with exactly this view's keys, in its order."""
        names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
        if list(data) != names:
            raise ValueError(f"{cls.__name__}: keys {list(data)} are not {names}")
        return cls(**data)


# -- documents ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class DocumentStatus(View):
    """One row of ``status``. ``status``: the stored one, or ``INTERRUPTED`` for a document left
    PROCESSING by a run that has ended; ``chunk_failures``: chunks still without usable model output."""

    id: str
    title: str | None
    status: str
    scope: str
    profile: str | None
    chunks: int
    chunk_failures: int
    error: str | None
    source_path: str | None
    updated_at: str

    @classmethod
    def of_row(cls, r: DocumentRow, interrupted: bool = False, chunk_failures: int = 0) -> DocumentStatus:
        return cls(id=r.id, title=r.title, status=INTERRUPTED if interrupted else r.status.value, scope=r.scope,
                   profile=r.profile, chunks=r.chunks, chunk_failures=chunk_failures,
                   error="interrupted: the next `scholargraph index` run resumes it" if interrupted else r.error,
                   source_path=r.source_path, updated_at=local_time(r.updated_at))


@dataclass(frozen=True)
class DocumentInfo(DocumentStatus):
    """One document's status row plus its bibliographic fields."""

    authors: list[str]
    year: int | None
    venue: str | None
    doi: str | None
    pmid: str | None


@dataclass(frozen=True)
class Passage(View):
    """A stored chunk with the paper, section and pages it came from (what a citation points to)."""

    chunk_id: str
    document_id: str
    ordinal: int
    section: str | None
    page_start: int | None
    page_end: int | None
    text: str
    title: str | None
    authors: list[str]
    year: int | None
    venue: str | None
    doi: str | None
    source_path: str | None


@dataclass(frozen=True)
class LibraryPage(View):
    """One page of the library: status rows with bibliographic fields, the filters' counts."""

    documents: list[JsonObject]
    total: int
    offset: int
    limit: int
    sort: str
    order: str
    statuses: dict[str, int]
    years: dict[int, int]


@dataclass(frozen=True)
class PaperPage(View):
    """One paper: metadata, sections, its entities and its citations in and out."""

    document: JsonObject
    sections: list[JsonObject]
    entities: list[JsonObject]
    entities_total: int
    references: list[JsonObject]
    cited_by: list[JsonObject]


# -- counts and costs ---------------------------------------------------------------------------

@dataclass(frozen=True)
class WorkspaceStats(View):
    """``stats``: rows per table (``documents`` counts every row, failed files included; ``papers``
    the indexed ones), the embedding model, and the LLM usage by purpose."""

    workspace: str
    documents: int
    papers: int
    documents_by_status: dict[str, int]
    chunks: int
    entities: int
    relations: int
    keywords: int
    chunk_failures: int
    mentions: int
    sentences: int
    embedding_model: str | None
    embedding_dim: int | None
    usage: dict[str, Usage]

    def to_json(self) -> JsonObject:
        return {**super().to_json(), "usage": usage_to_json(self.usage)}


@dataclass(frozen=True)
class EndpointCosts(View):
    """Calls, failed attempts and tokens per LLM endpoint (base URL) that answered them."""

    by_endpoint: dict[str, Usage]

    def to_json(self) -> JsonObject:
        return {url: {"llm_calls": u.calls, "failed_attempts": u.failed_attempts, "prompt_tokens": u.prompt_tokens,
                      "completion_tokens": u.completion_tokens, "total_tokens": u.total_tokens}
                for url, u in sorted(self.by_endpoint.items())}


@dataclass(frozen=True)
class EmbeddingBatches(View):
    """Batches, failed attempts and input tokens per embedding endpoint (base URL) that computed them."""

    by_endpoint: dict[str, Usage]

    def to_json(self) -> JsonObject:
        return {url: {"batches": u.calls, "failed_attempts": u.failed_attempts, "input_tokens": u.prompt_tokens}
                for url, u in sorted(self.by_endpoint.items())}


@dataclass(frozen=True)
class ReportCost(View):
    """What community reports cost: LLM and extractive reports stored, reports pending, and the
    calls and tokens spent on them; ``when`` they are written."""

    written: int
    extractive: int
    pending: int
    calls: int
    tokens: int
    when: str


@dataclass(frozen=True)
class ReportsStatus(View):
    """Communities stored, reports still to write, and whether the LLM would write them."""

    communities: int
    pending: int
    llm: bool


@dataclass(frozen=True)
class ReportsWritten(View):
    """The community run that wrote the missing reports, and the reports still pending."""

    run: CommunityRun
    pending: int

    def to_json(self) -> JsonObject:
        return {**self.run.to_json(), "pending": self.pending}


# -- the graph ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class EntityView(View):
    """An entity with its degree and the documents it comes from."""

    id: str
    name: str
    type: str | None
    description: str | None
    aliases: list[str]
    weight: float
    degree: int
    documents: list[str]


@dataclass(frozen=True)
class CommunityView(View):
    """A community with its report (title, summary, rating: the LLM's, none for an extractive
    report; key entities, papers, cited passages) and, when asked for, its member entity ids."""

    id: str
    level: int
    parent: str | None
    children: list[str]
    size: int | None
    relations: int
    weight: float
    title: str | None
    summary: str | None
    rating: float | None
    method: str | None
    thematic: Any
    key_entities: list[JsonObject]
    papers: list[JsonObject]
    evidence: list[JsonObject]
    keywords: list[str]
    members: list[str] | None = None

    def to_json(self) -> JsonObject:
        data = super().to_json()
        if self.members is None:
            del data["members"]
        return data

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Self:
        return super().of(data if "members" in data else {**data, "members": None})


@dataclass(frozen=True)
class CommunitiesView(View):
    """Every level's count and modularity, and the communities of the level asked for."""

    levels: list[JsonObject]
    computed_at: Any
    seed: int | None
    communities: list[CommunityView]

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Self:
        return super().of({**data, "communities": [CommunityView.of(c) for c in data["communities"]]})


@dataclass(frozen=True)
class CitationNetwork(View):
    """Papers with in/out citation counts, the edges between workspace papers, the most cited stubs."""

    papers: int
    stub_papers: int
    references: int
    references_matched: int
    edges: list[JsonObject]
    workspace_papers: list[JsonObject]
    most_cited_stubs: list[JsonObject]


@dataclass(frozen=True)
class PaperCitations(View):
    """One paper's resolved reference list and the workspace papers citing it."""

    id: str
    title: str | None
    year: int | None
    references: list[JsonObject]
    cited_by: list[JsonObject]


@dataclass(frozen=True)
class GraphStats(View):
    """Every measure of ``stats --graph`` (seed 001 Table I and more)."""

    nodes: int
    edges: int
    relations: int
    density: float
    average_degree: float
    max_degree: int
    isolated_nodes: int
    connected_components: int
    largest_component: int
    largest_component_share: float
    clustering_coefficient: float
    transitivity: float
    communities: JsonObject
    entity_types: dict[str, int]
    relation_types: dict[str, int]
    relation_keywords: dict[str, int]
    papers_per_year: JsonObject
    top_nodes_by_degree: list[JsonObject]
    citations: JsonObject


@dataclass(frozen=True)
class Overview(View):
    """The whole graph up to ``limit`` entities, laid out with each community together."""

    nodes: list[JsonObject]
    edges: list[JsonObject]
    communities: list[JsonObject]
    types: dict[str, int]
    total_nodes: int
    total_edges: int
    sampled: bool
    limit: int


@dataclass(frozen=True)
class Neighbourhood(View):
    """An entity (``center``, with its ``degree``) and its neighbours (nodes), the stored edges among
    them; ``truncated``: the limit left neighbours out."""

    nodes: list[JsonObject]
    edges: list[JsonObject]
    center: str
    truncated: bool
    degree: int


@dataclass(frozen=True)
class Subgraph(View):
    """The entities asked for and the shortest paths joining them (nodes, the edges among them, paths)."""

    nodes: list[JsonObject]
    edges: list[JsonObject]
    paths: list[list[str]]


@dataclass(frozen=True)
class RelationEvidence(View):
    """A relation with its ends and the sentences of its source passages naming both."""

    id: str
    description: str | None
    keywords: list[str]
    types: list[str]
    weight: float
    directed: bool
    source: JsonObject
    target: JsonObject
    evidence: list[JsonObject]


@dataclass(frozen=True)
class SessionTurn(View):
    question: str
    answer: str


# -- curation -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Deletion(View):
    """A paper deleted: its chunks, and the entities, relations and keywords no document supports any more."""

    deleted: str
    chunks: int
    entities_removed: int
    relations_removed: int
    keywords_removed: int


@dataclass(frozen=True)
class EntityMerge(View):
    """Entities folded into the one kept, and how many relations merged with them."""

    kept: str
    merged: list[str]
    relations_merged: int


# -- files written ------------------------------------------------------------------------------

@dataclass(frozen=True)
class PlotFiles(View):
    """The figures and the HTML view written (name -> path), and the graph's size."""

    files: dict[str, str]
    nodes: int
    edges: int


@dataclass(frozen=True)
class ExportReport(View):
    """What an export wrote: the format, the papers, and the writer's counts and paths
    (``triples``; ``nodes``/``edges``/``relations``; neo4j-csv's ``rows``, ``files``, ``command``;
    ``path`` when written to a file)."""

    format: str
    documents: list[str]
    written: JsonObject

    def to_json(self) -> JsonObject:
        return {"format": self.format, "documents": self.documents, **self.written}

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Self:
        rest = {k: v for k, v in data.items() if k not in ("format", "documents")}
        return cls(format=data["format"], documents=data["documents"], written=rest)


def local_time(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(seconds))
