"""Typed records that cross module boundaries.

The data flow is files -> Document -> Chunk -> extraction records -> stored graph -> Answer.
Every stage consumes and produces these dataclasses; nothing passes raw dicts between modules.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any


class DocStatus(enum.StrEnum):
    PENDING = "PENDING"
    PROCESSING = "PROCESSING"
    PROCESSED = "PROCESSED"
    FAILED = "FAILED"


class Scope(enum.StrEnum):
    """How much of a paper is indexed (two-phase literature review, thesis 000 §5.3.1)."""

    INTRO = "intro"  # title + abstract + introduction
    FULL = "full"


@dataclass
class Section:
    """A titled part of a document. Pages are 1-based and inclusive; None when unknown."""

    heading: str
    text: str
    level: int = 1
    page_start: int | None = None
    page_end: int | None = None
    kind: str = "body"  # abstract | introduction | body | conclusion | references | front
    # (char offset into ``text``, page number) at each page change inside the section, so
    # chunks get exact page spans; empty when the section lies on one page or pages are unknown.
    page_marks: list[tuple[int, int]] = field(default_factory=list)
    # the sentence segmentation the input carried (ASKG / DDM JSON): (start, end, IRI) offsets into
    # ``text`` in reading order, IRI "" when the input gave none; empty = split by scholargraph.text
    sentences: list[tuple[int, int, str]] = field(default_factory=list)


@dataclass
class Document:
    """A parsed source document, before chunking.

    ``id`` is the given paper id (PMID, paper_id column, DOI...) when the source has one,
    otherwise the MD5 of the normalised text content (see ``ingest.identity``).
    """

    id: str
    title: str
    sections: list[Section]
    source_path: str = ""
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    venue: str | None = None
    doi: str | None = None
    pmid: str | None = None
    abstract: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    content_md5: str = ""
    warnings: list[str] = field(default_factory=list)
    # Parser-level facts that help chunking: page texts for PDFs, references, ...
    references: list[str] = field(default_factory=list)

    @property
    def full_text(self) -> str:
        return "\n\n".join(s.text for s in self.sections if s.text)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Document:
        data = dict(data)
        data["sections"] = [Section(**s) for s in data.get("sections", [])]
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class Chunk:
    """A span of one document sized for the embedding model and the extraction LLM."""

    id: str
    document_id: str
    ordinal: int
    text: str
    tokens: int
    section: str | None = None
    char_start: int | None = None  # offsets into the section text the chunk came from
    char_end: int | None = None
    page_start: int | None = None
    page_end: int | None = None
    # Context header for extraction ("Paper: <title> / Section: <heading>"); not embedded.
    header: str = ""


# --- graph records ----------------------------------------------------------------------------
#
# Two concepts, one type each, used by extract/, graph/, store/ and query/ alike:
# * what ONE chunk says about an entity / a relation / a content keyword (``EntityRecord``,
#   ``RelationRecord``, ``KeywordRecord``): an extractor fills the text fields; graph.merge resolves
#   the ids; the store keeps every record as provenance and rebuilds merged values from them;
# * the merged graph element (``Entity``, ``Relation``) that the store holds and queries read.


@dataclass
class EntityRecord:
    """An entity as one chunk states it. ``id``, ``key``, ``alias_keys`` and ``document_id`` are set
    when the record is resolved against the graph (``graph.merge.plan_writes``)."""

    name: str
    type: str
    description: str
    chunk_id: str
    aliases: list[str] = field(default_factory=list)
    id: str = ""  # the entity it resolved to
    key: str = ""  # normalised name (what later mentions are matched on)
    alias_keys: list[str] = field(default_factory=list)  # normalised aliases, parallel to ``aliases``
    document_id: str = ""


@dataclass
class RelationRecord:
    """A relation as one chunk states it (``source``/``target`` are names as written). ``id``,
    ``source_id``, ``target_id``, ``document_id`` and the normalised end names ``source_key`` /
    ``target_key`` are set once resolved. A record whose two names resolved to one entity (its
    ``source_id`` is its ``target_id``, no ``id``) is kept apart from the graph: when a split takes
    the names apart again, it becomes a relation between them."""

    source: str
    target: str
    description: str
    chunk_id: str
    keywords: list[str] = field(default_factory=list)
    strength: float = 1.0
    types: list[str] = field(default_factory=list)
    directed: bool = False
    confidence: float | None = None
    id: str = ""
    source_id: str = ""
    target_id: str = ""
    document_id: str = ""
    # the sentence (ordinal of a SentenceRecord of the document) the relation was read from, and
    # the context it was extracted at (sentence | paragraph | section | paper | taxonomy): localkg
    sentence: int | None = None
    level: str = ""
    source_key: str = ""
    target_key: str = ""


@dataclass
class SentenceRecord:
    """One sentence of a document as the localkg profile reads it (seed 004's Deep Document Model:
    paper -> section -> paragraph -> sentence). ``ordinal`` numbers the document's sentences from 0;
    ``char_start``/``char_end`` index ``Document.full_text``; ``chunk_id`` is the chunk holding it."""

    document_id: str
    ordinal: int
    text: str
    chunk_id: str
    section: str | None = None
    section_no: int = 0
    paragraph_no: int = 0
    page: int | None = None
    char_start: int | None = None
    char_end: int | None = None
    iri: str = ""  # the sentence's own IRI when the input carried one (ASKG / DDM JSON), else ""


@dataclass
class MentionRecord:
    """One occurrence of an entity in a sentence (seed 004 §4.1-4.2). ``char_start``/``char_end``
    index the sentence's text, so ``sentence[char_start:char_end] == surface``. ``entity`` is the
    name of the document's EntityRecord it belongs to (``entity_id`` once resolved at commit);
    ``category`` is named | general | other; ``types`` are its potential parent types;
    ``level`` is the widest context it was extracted at (section | paragraph | sentence)."""

    surface: str
    sentence_no: int
    char_start: int
    char_end: int
    chunk_id: str
    entity: str = ""
    category: str = ""
    types: list[str] = field(default_factory=list)
    description: str = ""
    level: str = ""
    sentence: str = ""
    section: str | None = None
    page: int | None = None
    entity_id: str = ""
    document_id: str = ""


@dataclass
class LocalKGEntity:
    """An entity of one paper's local knowledge graph (seed 004 §3, Figure 1), as that paper alone
    made it: its label, category (named | general | other), potential parent types, description,
    aliases and relevance to the paper (stage 4), and its mentions as (sentence ordinal, start, end).
    ``entity`` names the workspace entity it joins; ``entity_id`` is that entity once resolved (the
    link ``skos:exactMatch`` in RDF), kept up to date when workspace entities merge."""

    local_id: int
    label: str
    category: str = ""
    types: list[str] = field(default_factory=list)
    description: str = ""
    aliases: list[str] = field(default_factory=list)
    relevance: float | None = None
    mentions: list[tuple[int, int, int]] = field(default_factory=list)
    entity: str = ""
    entity_id: str = ""


@dataclass
class LocalKGRelation:
    """A triple of one paper's local KG between two of its ``LocalKGEntity`` (by ``local_id``):
    the predicate as written, its canonical form (stage 5), its evidence sentence and level."""

    subject: int
    predicate: str
    object: int
    canonical: str = ""
    sentence: int | None = None
    level: str = ""


@dataclass
class LocalGraph:
    """One paper's local knowledge graph, stored apart from the workspace graph (never changed by
    other papers)."""

    document_id: str = ""
    entities: list[LocalKGEntity] = field(default_factory=list)
    relations: list[LocalKGRelation] = field(default_factory=list)


@dataclass
class KeywordRecord:
    text: str
    chunk_id: str
    id: str = ""
    document_id: str = ""


@dataclass
class GraphWrites:
    """One document's resolved records, written in the document's commit."""

    entities: list[EntityRecord] = field(default_factory=list)
    relations: list[RelationRecord] = field(default_factory=list)
    keywords: list[KeywordRecord] = field(default_factory=list)


@dataclass
class Entity:
    """A node of the knowledge graph, merged from every record that resolved to it."""

    id: str
    name: str
    type: str = ""
    description: str = ""
    aliases: list[str] = field(default_factory=list)
    weight: float = 1.0
    chunk_ids: list[str] = field(default_factory=list)  # provenance, in document order
    document_ids: list[str] = field(default_factory=list)
    degree: int = 0  # relations at the entity (filled by listings, 0 elsewhere)


@dataclass
class Relation:
    """An edge of the knowledge graph, merged from every record that resolved to it."""

    id: str
    source_id: str
    target_id: str
    description: str = ""
    keywords: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    weight: float = 1.0
    directed: bool = False
    confidence: float | None = None
    chunk_ids: list[str] = field(default_factory=list)
    document_ids: list[str] = field(default_factory=list)


@dataclass
class ChunkFailure:
    """A chunk whose model output could not be used; the document continues without it, marked
    as incomplete until a later run extracts the chunk (``profile``: the profile that failed on it;
    ``attempts``: how many runs did)."""

    chunk_id: str
    reason: str
    raw: str = ""
    profile: str = ""
    attempts: int = 1


@dataclass
class Extraction:
    entities: list[EntityRecord] = field(default_factory=list)
    relations: list[RelationRecord] = field(default_factory=list)
    keywords: list[KeywordRecord] = field(default_factory=list)
    failures: list[ChunkFailure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was cut or dropped from usable output
    cut_off: bool = False  # the model's reply ended inside a record: only its complete records are here
    # sentence-level provenance (localkg): the sentences read and the mentions found in them
    sentences: list[SentenceRecord] = field(default_factory=list)
    mentions: list[MentionRecord] = field(default_factory=list)
    local: LocalGraph | None = None  # the paper's own local KG (localkg)

    def extend(self, other: Extraction) -> None:
        self.entities.extend(other.entities)
        self.relations.extend(other.relations)
        self.keywords.extend(other.keywords)
        self.failures.extend(other.failures)
        self.notes.extend(other.notes)
        self.cut_off = self.cut_off or other.cut_off
        self.sentences.extend(other.sentences)
        self.mentions.extend(other.mentions)
        self.local = other.local or self.local


# --- LLM accounting ------------------------------------------------------------------------

PURPOSES = ("extract", "glean", "summarise", "keywords", "answer", "judge", "refine", "parse", "report", "map",
            # the localkg profile's five stages (seed 004 §4.1-4.5) and its evaluation (§5.2-5.3)
            "lkg_mentions", "lkg_linking", "lkg_relations", "lkg_global", "lkg_taxonomy", "kg2text", "kgqa",
            "questions", "kg_summary", "other")
# calls made while someone waits for an answer: they take a free LLM slot before bulk (indexing) calls
QUESTION_PURPOSES = frozenset({"keywords", "answer", "map"})


@dataclass
class Usage:
    """Calls and tokens for one purpose. ``calls`` are requests the server answered with a
    completion; ``failed_attempts`` are HTTP attempts that got none (an error status, a malformed
    reply, a broken connection; each retry is one); ``cached_calls`` never reached the server.
    ``estimated`` counts tokens not reported by the server."""

    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated_calls: int = 0
    failed_attempts: int = 0

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.cached_calls += other.cached_calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.estimated_calls += other.estimated_calls
        self.failed_attempts += other.failed_attempts

    def minus(self, other: Usage) -> Usage:
        return Usage(**{name: value - getattr(other, name) for name, value in asdict(self).items()})

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


# --- query results -------------------------------------------------------------------------


@dataclass
class Source:
    """One numbered item of a query context, resolved to where it came from."""

    number: int
    kind: str  # chunk | entity | relation | community
    chunk_id: str | None
    document_id: str | None
    title: str | None
    section: str | None
    page_start: int | None
    page_end: int | None
    text: str
    score: float = 0.0
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    venue: str | None = None
    # a community report's representative passages, each resolved to its paper, section and pages
    supporting: list[Source] = field(default_factory=list)
    # in an answer's cited sources (numbered by citation order): its number in the context
    context_number: int | None = None

    def to_json(self) -> dict[str, Any]:
        data = {
            "rank": self.number,
            "score": round(float(self.score), 6),
            "kind": self.kind,
            "chunk_id": self.chunk_id,
            "document_id": self.document_id,
            "title": self.title,
            "section": self.section,
            "page_start": self.page_start,
            "page_end": self.page_end,
            "authors": self.authors,
            "year": self.year,
            "venue": self.venue,
            "text": self.text,
        }
        if self.supporting:
            data["supporting"] = [s.to_json() for s in self.supporting]
        if self.context_number is not None:
            data["context_rank"] = self.context_number
        return data


@dataclass
class Answer:
    """An answer with its citations. ``sources`` are the sources the answer cites, numbered from 1 in
    the order they are first cited (the ``[n]`` in ``text``); ``context_sources`` are all the sources
    the answer was written from, numbered by rank as in ``context`` (a cited source's
    ``context_number`` is its number there)."""

    question: str
    text: str
    mode: str
    sources: list[Source]
    cited: list[int] = field(default_factory=list)
    removed_citations: list[int] = field(default_factory=list)
    extractive: bool = False
    usage: dict[str, Usage] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    context: str = ""
    notes: list[str] = field(default_factory=list)
    keywords: dict[str, Any] | None = None
    context_sources: list[Source] = field(default_factory=list)
    # retrieved but left out of the prompt by the context budget (query.max_context_tokens)
    cut: list[Source] = field(default_factory=list)
    context_tokens: dict[str, int] = field(default_factory=dict)  # {"budget", "used"}
    # what the mode used to find its evidence: matched nodes and paths (subgraph), edges (global),
    # parsed filters (bio), seeds (ppr), level (summary)...: the retrieval's details
    trace: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        cited = set(self.cited)
        return {
            "question": self.question,
            "answer": self.text,
            "mode": self.mode,
            "extractive": self.extractive,
            "sources": [s.to_json() for s in self.sources if not cited or s.number in cited],
            "context_sources": len(self.context_sources or self.sources),  # how many the model was given
            "context_tokens": self.context_tokens,
            "cut_from_context": [{"rank": s.number, "kind": s.kind, "chunk_id": s.chunk_id, "document_id": s.document_id,
                                  "title": s.title} for s in self.cut],
            "cited": self.cited,
            "removed_citations": self.removed_citations,
            "notes": self.notes,
            "keywords": self.keywords,
            "trace": self.trace,
            "usage": usage_to_json(self.usage),
            "timings": {k: round(v, 4) for k, v in self.timings.items()},
        }


def usage_to_json(usage: dict[str, Usage]) -> dict[str, Any]:
    total = Usage()
    by_purpose = {}
    for purpose, u in sorted(usage.items()):
        total.add(u)
        by_purpose[purpose] = {**asdict(u), "total_tokens": u.total_tokens}
    return {
        "llm_calls": total.calls,
        "cached_calls": total.cached_calls,
        "failed_attempts": total.failed_attempts,
        "prompt_tokens": total.prompt_tokens,
        "completion_tokens": total.completion_tokens,
        "total_tokens": total.total_tokens,
        "estimated_calls": total.estimated_calls,
        "by_purpose": by_purpose,
    }


# --- cross-document analysis: communities and the citation network (seed 001 §III.C-D) ------------


@dataclass
class Community:
    """A community of entities at one level of the hierarchy (level 0 = coarsest).

    ``id`` is ``"<level>-<signature prefix>"``; ``signature`` hashes the members and the relations
    inside, so an unchanged community keeps its id and its report across recomputations.
    ``parent_id`` is the community one level up that contains it (None at level 0)."""

    id: str
    level: int
    signature: str
    members: list[str]
    parent_id: str | None = None
    relations: int = 0  # relations with both ends inside
    weight: float = 0.0  # their summed weight


@dataclass
class CommunityReport:
    """What a community is about (seed 001 §III.D), keyed by the community's ``signature``.

    ``entities``/``relations`` are the key ones (ids, most central first); ``documents`` the
    supporting papers (ids, most supporting first); ``evidence`` the representative cited
    passages as ``{"chunk_id", "document_id", "text"}``; ``rating`` 0-10 (importance: the LLM's,
    or for an extractive report a score from size and weight, which the views do not show as a
    rating); ``method`` is "llm" or "extractive"."""

    signature: str
    title: str
    summary: str
    rating: float
    method: str
    entities: list[str] = field(default_factory=list)
    relations: list[str] = field(default_factory=list)
    documents: list[str] = field(default_factory=list)
    evidence: list[dict[str, Any]] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    children: list[str] = field(default_factory=list)  # signatures of the child reports it summarises
    # False: the community gathers people, institutions and funding (acknowledgements, author lists),
    # not a research theme; the summary mode leaves it out
    thematic: bool = True


@dataclass
class PaperReference:
    """One entry of a paper's reference list, resolved to the paper it cites: a workspace document
    id, or a stub paper id (``ref:...``) when the cited paper is not in the workspace."""

    citing_id: str
    ordinal: int
    raw: str
    target_id: str
    doi: str | None = None
    pmid: str | None = None
    title: str | None = None
    year: int | None = None


@dataclass
class StubPaper:
    """A paper that workspace papers cite but that is not indexed; a later insert that matches it
    (DOI, PMID or normalised title) takes its place in the citation network."""

    id: str
    title: str | None
    doi: str | None = None
    pmid: str | None = None
    year: int | None = None
    raw: str = ""
