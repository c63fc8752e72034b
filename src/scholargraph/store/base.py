"""Storage protocols, one per role, and the records they exchange.

Everything outside ``store/`` is typed against these protocols, never against a backend: no SQL,
no connection, no private state of a store crosses this line. A consumer names the role it uses
(``GraphStore``...) or, when it needs several, the protocol joining them for what it does
(``QueryStore``, ``IndexingStore``...: see "roles joined by what their consumers do" below); only
the composition root (``app/workspace.py``) holds the aggregate :class:`Store`. A backend implements every protocol; ``tests/store/contract/`` is the suite it
must pass (add one fixture there). The graph records themselves (``Entity``, ``Relation``,
``EntityRecord``...) live in :mod:`scholargraph.models`.

Writes are units of work. ``store.write(work)`` runs ``work()`` atomically: every store write it
makes commits together or not at all, and store reads it makes see its own writes. ``submit`` is
the same without waiting (a future), ``awrite`` the same for coroutines. A single store write
method called on its own is its own unit of work. How a backend executes units of work (the
SQLite backend's one writer thread, a PostgreSQL connection pool) is its business; see
``store/sqlite/store.py`` for the embedded backend's concurrency model.

Names are free of any one database's semantics: "new keyword ids" rather than INSERT OR IGNORE,
an opaque :meth:`GraphStore.graph_version` rather than a rowid.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

import numpy as np

from ..models import (
    Chunk,
    ChunkFailure,
    Community,
    CommunityReport,
    DocStatus,
    Document,
    Entity,
    EntityRecord,
    KeywordRecord,
    LocalGraph,
    MentionRecord,
    PaperReference,
    Relation,
    RelationRecord,
    SentenceRecord,
    StubPaper,
    Usage,
)

T = TypeVar("T")
GraphKind = Literal["entities", "relations"]
VectorNamespace = Literal["chunk", "entity", "relation", "keyword", "community"]
# "community": vectors of community reports, keyed by report signature (filled lazily by the summary mode)
NAMESPACES: tuple[str, ...] = ("chunk", "entity", "relation", "keyword", "community")
# what ``Store.count`` counts
# the tables whose changes triggers count (schema v10 of both backends): ``Counts.content_version``
VERSIONED = ("relations", "chunks")


def read_content_version(rows: Callable[[str], list], what: str, column: str = "n") -> int:
    """The version counter (``column`` n) or the row count (``row_count``) of ``what``, summed over its
    rows, through a backend's ``rows(sql)``."""
    if what not in VERSIONED or column not in ("n", "row_count"):
        raise ValueError(what)
    return int(rows(f"SELECT coalesce(sum({column}), 0) FROM content_versions WHERE what = '{what}'")[0][0])


COUNTABLE = ("documents", "chunks", "entities", "relations", "keywords", "mentions", "sentences", "llm_cache",
             "llm_calls", "chunk_failures")
# graph maintenance an indexing run owes, recorded in the unit of work that creates the need
# "resolve": entities the resolution pass has not compared with the graph yet;
# "communities": documents committed since the communities (and their reports) were last brought up to date;
# "citations": documents committed since their reference lists were last resolved (the run's citation step)
MaintenanceTask = Literal["resolve", "communities", "reports", "citations"]


@dataclass(frozen=True)
class SourceLimit:
    """Read at most ``per_item`` source chunks of each entity or relation: those among ``prefer`` (e.g.
    the chunks a question retrieved) first, then the others, each group in document order. What a
    query cites; a hub entity stated in thousands of chunks is read a few rows at a time."""

    per_item: int
    prefer: tuple[str, ...] = ()


def first_sources(rows: Iterable[Sequence[Any]], per_item: int, read: int) -> tuple[list[tuple[str, str, str]], list[str]]:
    """What a :class:`SourceLimit` keeps of the source records read for it, and the items to read again.

    ``rows``: (item, chunk id, document id, seq, preferred) -- every record of an item in a preferred
    chunk, then its first ``read`` records in (document, seq) order. Kept: each item's distinct
    chunks, the preferred first, each group in (document, first record) order, at most ``per_item``
    (item, chunk id, document id) rows per item. An item whose ``read`` records held fewer distinct
    chunks than it needs is returned to be read again with a larger ``read``."""
    preferred: dict[str, list[tuple[str, int, str]]] = {}
    ordered: dict[str, list[tuple[str, int, str]]] = {}
    for item, chunk_id, document_id, seq, is_preferred in rows:
        (preferred if is_preferred else ordered).setdefault(item, []).append((document_id, seq, chunk_id))
        ordered.setdefault(item, [])
    kept: list[tuple[str, str, str]] = []
    again: list[str] = []
    for item, records in ordered.items():
        chunks: dict[str, str] = {}
        for group in (sorted(preferred.get(item, [])), sorted(records)):
            for document_id, _, chunk_id in group:
                chunks.setdefault(chunk_id, document_id)
        if len(chunks) < per_item and len(records) >= read:
            again.append(item)
            continue
        kept.extend((item, chunk_id, document_id) for chunk_id, document_id in list(chunks.items())[:per_item])
    return kept, again


def key_entities_sql(keys: str) -> str:
    """The distinct (name key, entity id) pairs under the keys of ``keys`` (a FROM item giving them as
    column ``value``), one probe each of the index entity_sources(name_key, entity_id): the smallest
    entity id under the key, then the next above it (a loose index scan), never every record of a
    hub name. Input of ``most_sourced``."""
    return f"""
WITH RECURSIVE pairs(name_key, entity_id) AS (
    SELECT k.value, (SELECT min(s.entity_id) FROM entity_sources s WHERE s.name_key = k.value) FROM {keys}
  UNION ALL
    SELECT p.name_key, (SELECT min(s.entity_id) FROM entity_sources s
                        WHERE s.name_key = p.name_key AND s.entity_id > p.entity_id)
    FROM pairs p WHERE p.entity_id IS NOT NULL)
SELECT name_key, entity_id FROM pairs WHERE entity_id IS NOT NULL"""


def most_sourced(keys: Sequence[str], pairs: Iterable[Sequence[Any]],
                 count_shared: Callable[[list[str]], Iterable[Sequence[Any]]]) -> dict[str, str]:
    """The entity each name key stands for, in the order of ``keys``: the only entity with source
    records under it, or where several have (rare: a name two types share, a split) the one with
    the most records under it, then the smallest id. ``pairs`` are the distinct (key, entity id)
    pairs, read from an index without counting; ``count_shared(keys)`` gives (key, entity id,
    records) rows, most first, for the shared keys alone. Counting every key's records made each
    document's lookup grow with the knowledge base (a hub name has a record per paper naming it)."""
    entities: dict[str, list[str]] = {}
    for key, entity_id in pairs:
        entities.setdefault(key, []).append(entity_id)
    best = {key: ids[0] for key, ids in entities.items() if len(ids) == 1}
    shared = sorted(key for key, ids in entities.items() if len(ids) > 1)
    if shared:
        for row in count_shared(shared):
            best.setdefault(row[0], row[1])
    return {key: best[key] for key in keys if key in best}


def add_source_rows(items: Mapping[str, Entity | Relation], rows: Iterable[Sequence]) -> None:
    """Append (item id, chunk id, document id) rows, in their order, to each item's ``chunk_ids`` and
    ``document_ids``, each id once."""
    chunks: dict[str, dict[str, None]] = {}
    docs: dict[str, dict[str, None]] = {}
    for r in rows:
        chunks.setdefault(r[0], {})[r[1]] = None
        docs.setdefault(r[0], {})[r[2]] = None
    for item_id, found in chunks.items():
        item = items[item_id]
        item.chunk_ids = list(dict.fromkeys([*item.chunk_ids, *found]))
        item.document_ids = list(dict.fromkeys([*item.document_ids, *docs[item_id]]))


# a relation record as stored, beside its relation (relation_sources) or its one entity (folded_relations)
RECORD_COLUMNS = ("chunk_id, document_id, description, keywords, types, strength, confidence, sentence_no, level, "
                  "source_key, target_key")


def record_columns(prefix: str) -> str:
    """``RECORD_COLUMNS``, each qualified by ``prefix`` (a table alias and a dot)."""
    return ", ".join(prefix + c.strip() for c in RECORD_COLUMNS.split(","))


def record_placeholders(marker: str) -> str:
    """One parameter ``marker`` (``?`` or ``%s``) per column of ``RECORD_COLUMNS``."""
    return ", ".join([marker] * len(RECORD_COLUMNS.split(",")))


def record_values(r: RelationRecord, dumps: Callable[[Any], str]) -> tuple:
    """The ``RECORD_COLUMNS`` values of a record (lists through the backend's ``dumps``)."""
    return (r.chunk_id, r.document_id, r.description, dumps(list(r.keywords)), dumps(list(r.types)), r.strength,
            r.confidence, r.sentence, r.level, r.source_key, r.target_key)


def stored_record(ends: Sequence[Any], row: Sequence[Any]) -> RelationRecord:
    """A record read back: ``ends`` = (relation id, source id, target id, directed), ``row`` its
    ``RECORD_COLUMNS``. Names as written are not stored: its ``source``/``target`` are its end keys."""
    relation_id, source_id, target_id, directed = ends
    chunk_id, document_id, description, keywords, types, strength, confidence, sentence, level, skey, tkey = row
    return RelationRecord(skey, tkey, description, chunk_id, json.loads(keywords), strength, json.loads(types),
                          bool(directed), confidence, id=relation_id, source_id=source_id, target_id=target_id,
                          document_id=document_id, sentence=sentence, level=level, source_key=skey, target_key=tkey)


def entity_source_rows(records: Sequence[EntityRecord]) -> list[tuple[str, str, str, str, str, str, str, str]]:
    """The ``entity_sources`` rows of a document's entity records, (entity_id, chunk_id, document_id,
    name, name_key, role, type, description), each record's alias rows right after its own: read in
    document and row order, an alias follows the name it was given for, which is how a resolution
    pass tells the names a merged entity was merged from (``resolution_pass._member_groups``)."""
    rows = []
    for r in records:
        rows.append((r.id, r.chunk_id, r.document_id, r.name, r.key, "canonical" if r.aliases else "name", r.type,
                     r.description))
        rows += [(r.id, r.chunk_id, r.document_id, a, k, "alias", r.type, "") for a, k in zip(r.aliases, r.alias_keys, strict=True)]
    return rows


def fold_apart(records: Sequence[RelationRecord]) -> tuple[list[RelationRecord], list[RelationRecord]]:
    """The records of relations, and those whose two ends are one entity: kept apart from the graph
    (``folded_relations``) when they name it by two different keys, for a split to restore; the
    others (a name related to itself, or written before the keys were kept) go."""
    folded = [r for r in records if r.source_id == r.target_id]
    return ([r for r in records if r.source_id != r.target_id],
            [r for r in folded if r.source_key and r.target_key and r.source_key != r.target_key])


def batches(ids: Iterable, size: int = 500) -> list[list]:
    """``ids`` in lists of at most ``size`` (backends cap the parameters of one statement)."""
    ids = list(ids)
    return [ids[i : i + size] for i in range(0, len(ids), size)]


# -- records ------------------------------------------------------------------------------------


@dataclass
class DocumentRow:
    id: str
    title: str
    status: DocStatus
    source_path: str
    scope: str
    profile: str
    error: str | None
    created_at: float
    updated_at: float
    chunks: int = 0
    content_md5: str = ""
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    venue: str | None = None
    doi: str | None = None
    pmid: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class CachedResponse:
    text: str
    prompt_tokens: int
    completion_tokens: int
    estimated: bool


@dataclass
class CallRecord:
    purpose: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    estimated: bool
    cached: bool
    latency_s: float
    document_id: str | None = None
    status: str = "ok"  # ok | incomplete | error (answered, cut short) | failed (an attempt with no answer)
    endpoint: str | None = None  # the server's base URL (llm.endpoints); None for a cache hit


FAILED_ATTEMPT = "failed"
# the purpose under which an embedding endpoint's batches are logged (not an LLM call: never in LLM usage)
EMBEDDING_BATCH = "embedding_batch"
LLM_CALL_SQL = f"purpose <> '{EMBEDDING_BATCH}'"  # SQL: a logged record of the LLM's, not an embedding batch
# SQL: a logged record that is a failed attempt, not a call ("error" with no tokens: written so before 0.2)
FAILED_ATTEMPT_SQL = "(status = 'failed' OR (status = 'error' AND prompt_tokens = 0 AND completion_tokens = 0))"


@dataclass
class SourceDescriptions:
    """What a merged entity or relation is rebuilt from: its records' fields, in document order
    (then order of arrival), so a rebuild never depends on which document came first. An
    entity's ``names``, ``types``, ``descriptions``, ``roles`` and ``keys`` hold one item per
    record ("" where a record has no type or description): a resolution pass rebuilds the parts
    a merged entity was merged from out of them."""

    id: str
    names: list[str]
    types: list[str]
    descriptions: list[str]
    weight: float  # entities: records with a description; relations: summed strength
    keywords: list[str]
    confidence: float | None
    roles: list[str] = field(default_factory=list)  # parallel to names: canonical | name | alias
    keys: list[str] = field(default_factory=list)  # entities, parallel to names: the name key each record had


@dataclass(frozen=True)
class CommunityDrift:
    """How the graph stands against the stored communities, counted by the database (nothing read
    whole): its relations and connected entities (an end of some relation), the connected entities
    in no level-0 community (``unassigned``) and the level-0 members no longer connected (``gone``)."""

    relations: int
    communities: int
    connected: int
    unassigned: int
    gone: int


@dataclass(frozen=True)
class CommunityGrowth:
    """What the graph gained since the relation arrival number ``since`` (``community_growth``),
    counted by the database from the relations that arrived since alone: ``relations`` that
    arrived, their ends in no level-0 community (``unassigned``), the arrival number now (``seq``)
    and whether any community is stored. Removed and re-pointed relations are counted apart, by the
    edits that make them (``GraphEdits.count_graph_edits``)."""

    relations: int
    unassigned: int
    seq: int
    communities: bool


@dataclass
class GraphRemoval:
    """Ids that disappeared when a document's provenance was dropped, per vector namespace."""

    entity: list[str] = field(default_factory=list)
    relation: list[str] = field(default_factory=list)
    keyword: list[str] = field(default_factory=list)

    def items(self) -> list[tuple[str, list[str]]]:
        return [("entity", self.entity), ("relation", self.relation), ("keyword", self.keyword)]


# -- protocols by role --------------------------------------------------------------------------


class Writes(Protocol):
    """Units of work (see the module docstring)."""

    def write(self, work: Callable[[], T]) -> T: ...

    def submit(self, work: Callable[[], T]) -> Future[T]: ...

    async def awrite(self, work: Callable[[], T]) -> T:
        """``write`` for coroutines: the event loop goes on while the unit of work runs."""


class MetaStore(Protocol):
    """Small workspace facts (embedding model and dimension...)."""

    def get_meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...


class DocumentStore(Protocol):
    """Documents and their processing status: PENDING -> PROCESSING -> PROCESSED | FAILED."""

    def add_pending(self, doc: Document, scope: str, profile: str) -> None:
        """Store (or replace) a parsed document as PENDING work."""

    def add_failed_file(self, doc_id: str, path: str, reason: str) -> None: ...

    def set_status(self, doc_id: str, status: DocStatus, error: str | None = None) -> None: ...

    def claim_pending(self, limit: int, only: Collection[str] | None = None) -> list[str]:
        """Atomically move up to ``limit`` PENDING documents (of ``only``, when given) to PROCESSING
        and return their ids, largest first. Two workers never claim the same document."""

    def release(self, doc_ids: Sequence[str]) -> None:
        """Give claimed documents back (PROCESSING -> PENDING), e.g. when a run stops early."""

    def hold_lease(self, doc_id: str) -> bool:
        """Inside a unit of work: whether this process still holds its claim of ``doc_id`` (PostgreSQL:
        no other worker took it over after its lease ran out); a document's commit checks it first."""

    def release_claims(self) -> list[str]:
        """Give back every document (and maintenance row) this process holds, e.g. a worker stopping;
        returns the documents' ids."""

    def reset_stale_processing(self) -> list[str]:
        """Documents left PROCESSING by a worker that is gone go back to PENDING; returns their ids."""

    def interrupted_ids(self) -> set[str]:
        """PROCESSING documents no live process is working on (a run that was interrupted); read only."""

    def pending_ids(self, only: Collection[str] | None = None) -> list[str]:
        """PENDING documents (of ``only``: those named are read, not every pending one), largest
        first (the order ``claim_pending`` hands them out)."""

    def pending_count(self, only: Collection[str] | None = None) -> int:
        """How many documents are PENDING (of ``only``), counted in the database (a run's progress total)."""

    def document_ids(self, status: DocStatus, limit: int | None = None) -> list[str]:
        """Documents in ``status`` (up to ``limit``), largest first, read from the status index: as
        many rows as there are such documents, whatever the size of the knowledge base (the
        questions a worker asks after each batch: anything PENDING? what is PROCESSING?)."""

    def document_to_process(self, doc_id: str) -> tuple[Document, str] | None:
        """A document's parsed form and scope (never waits for a unit of work in progress)."""

    def get_document(self, doc_id: str) -> DocumentRow | None: ...

    def documents_by_id(self, ids: Iterable[str]) -> dict[str, DocumentRow]: ...

    def load_document(self, doc_id: str) -> Document | None: ...

    def list_documents(self, status: DocStatus | None = None) -> list[DocumentRow]: ...

    def status_counts(self) -> dict[str, int]: ...

    def delete_document(self, doc_id: str) -> None:
        """Remove the document row (its chunks, graph provenance and vectors are removed apart)."""

    # Chunk failures: chunks whose model output could not be used. They are *unrepaired* until a
    # later run extracts the chunk: one record per (document, chunk), never duplicated.
    def record_chunk_failures(self, doc_id: str, profile: str, failures: Sequence[ChunkFailure]) -> None:
        """Record failed chunks of a document. A chunk already recorded keeps one record: the new
        reason and raw output replace the old, and its ``attempts`` grows by one."""

    def clear_chunk_failures(self, doc_id: str, chunk_ids: Sequence[str] | None = None) -> None:
        """The chunks were extracted after all (or the document is re-processed from scratch, or
        deleted): drop their records — all of the document's when ``chunk_ids`` is None."""

    def chunk_failures(self, doc_ids: Collection[str] | None = None) -> dict[str, list[ChunkFailure]]:
        """Unrepaired chunk failures per document id (of ``doc_ids`` when given), in chunk order of
        recording, with ``profile`` and ``attempts`` filled."""

    def chunk_failure_counts(self) -> dict[str, int]:
        """Number of unrepaired chunk failures per document that has any."""


class MaintenanceStore(Protocol):
    """Graph maintenance owed after a unit of work, recorded durably in that same unit of work
    (e.g. a document's commit queues its entities for the resolution pass), so a process killed
    before doing it leaves the work for the next one instead of losing it. Backend-neutral: a set
    of (task, id) pairs."""

    def queue_maintenance(self, task: MaintenanceTask, ids: Iterable[str]) -> None:
        """Add ids to the task (an id already queued stays queued once)."""

    def pending_maintenance(self, task: MaintenanceTask, limit: int | None = None) -> list[str]:
        """Ids queued for the task, sorted."""

    def claim_maintenance(self, task: MaintenanceTask, limit: int) -> list[str]:
        """Queued ids for this process to do, sorted: PostgreSQL: up to ``limit``, none another live worker
        holds (they stay queued until finished); SQLite (one process): all of them."""

    def lock_merges(self) -> None:
        """Inside a unit of work: entity merges of concurrent processes take turns until it commits."""

    def finish_maintenance(self, task: MaintenanceTask, ids: Iterable[str]) -> None:
        """The task was done for these ids: remove them (ids not queued are ignored)."""

    # rebuilding merged graph values marked dirty (``GraphStore.dirty_ids``)
    def claim_dirty(self, kind: GraphKind, limit: int) -> list[str]:
        """Up to ``limit`` dirty ids for this process to rebuild (PostgreSQL: none another live worker is
        rebuilding: workers that finish together share the rebuild); ``release_dirty`` (inside the unit
        of work that stores the rebuilt values) ends the claim."""

    def release_dirty(self, kind: GraphKind, ids: Sequence[str]) -> None: ...


class ChunkStore(Protocol):
    def insert_chunks(self, chunks: Sequence[Chunk], scope: str = "full") -> None: ...

    def chunks_of(self, doc_id: str) -> list[Chunk]: ...

    def get_chunks(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]: ...

    def delete_chunks_of(self, doc_id: str) -> list[str]:
        """Delete a document's chunks and their vectors; returns the chunk ids."""

    def iter_chunk_texts(self) -> Iterator[tuple[str, str]]:
        """(chunk id, text) of every chunk (re-embedding)."""

    def lexical_search(self, query: str, k: int, *, documents: Collection[str] | None = None,
                       chunk_ids: Collection[str] | None = None) -> list[tuple[str, float]]:
        """Full-text search: the chunks whose text (with its section heading and its paper's title)
        best match ``query``'s terms,
        best first, at most ``k``, as (chunk id, score); a higher score is a better match and scores
        compare only within one call. ``documents`` / ``chunk_ids`` restrict the candidates (an empty
        collection matches nothing).

        Contract every backend keeps: terms are :func:`scholargraph.text.lexical.lexical_terms` of
        the document title, the chunk's section heading and its text, and of the query (so ``IL-6``, ``BRCA1``, ``F1``,
        ``p<0.05`` match as written); a chunk matches when it shares at least one term; the ranking
        is BM25 or the backend's closest equivalent (rarer terms and more occurrences score higher,
        long chunks are normalised). The index follows every insert, re-insert and delete of chunks
        (a deleted document's chunks included) in the same unit of work; a query with no term
        (only stopwords or punctuation) returns nothing."""


class GraphStore(Protocol):
    """Entities, relations and content keywords with their provenance (one record per chunk that
    stated them). Merged values are derived from the records and rebuilt when marked dirty."""

    # writing a document's records
    def write_entities(self, records: Sequence[EntityRecord]) -> None: ...

    def write_relations(self, records: Sequence[RelationRecord]) -> None:
        """Store relation records; one whose two ends are one entity is kept as that entity's folded
        record instead (``fold_apart``), for a split that takes its names apart to restore."""

    def write_keywords(self, records: Sequence[KeywordRecord]) -> list[str]:
        """Store keyword records; returns the ids of keywords that did not exist before."""

    def entities_by_keys(self, keys: Sequence[str]) -> dict[str, str]:
        """Name key -> id of the entity known by it (the most frequent one when several are)."""

    def delete_graph_of(self, doc_id: str) -> GraphRemoval:
        """Drop a document's records; elements left without any disappear (returned), the others are
        marked dirty."""

    # rebuilding merged values
    def dirty_ids(self, kind: GraphKind, limit: int | None = None) -> list[str]: ...

    def versions(self, kind: GraphKind, ids: Sequence[str]) -> dict[str, float]:
        """Opaque version per element: an update lands only if the version did not change."""

    def entity_sources(self, ids: Sequence[str]) -> dict[str, SourceDescriptions]: ...

    def relation_sources(self, ids: Sequence[str]) -> dict[str, SourceDescriptions]: ...

    def update_entity(self, entity: Entity, version: float) -> bool:
        """Store a rebuilt entity (not dirty any more) unless its version moved; True if stored."""

    def update_relation(self, relation: Relation, version: float) -> bool: ...

    def mark_all_dirty(self) -> None:
        """Every entity and relation needs rebuilding (after an embedding model change)."""

    # reading
    def get_entities(self, ids: Iterable[str], sources: bool | SourceLimit = True) -> dict[str, Entity]:
        """Entities by id with every source chunk and document (exports, entity pages); ``sources=False``
        leaves ``chunk_ids``/``document_ids`` empty (cheaper); a :class:`SourceLimit` reads at most
        its ``per_item`` chunks per entity, those it prefers first (what a query can cite)."""

    def get_relations(self, ids: Iterable[str], sources: bool | SourceLimit = True) -> dict[str, Relation]:
        """Relations by id; ``sources`` as in :meth:`get_entities`."""

    def chunk_counts(self, kind: GraphKind, ids: Sequence[str]) -> dict[str, int]:
        """How many distinct chunks state each entity or relation (counted in the store, the chunks
        not read); ids stated nowhere are left out."""

    def relation_provenance(self, ids: Sequence[str]) -> list[RelationRecord]:
        """Every record of the relations, resolved (ids, document, chunk), in document order."""

    def all_edges(self) -> list[tuple[str, str, str, float]]:
        """(relation id, source id, target id, weight) of every relation, in a stable order."""

    def all_entity_ids(self) -> list[str]: ...

    def edges_touching(self, entity_ids: Sequence[str]) -> list[tuple[str, str, str, float]]:
        """``all_edges`` rows of the relations with an end among ``entity_ids``, in ``all_edges``' order
        (a query's part of a graph too large to load whole)."""

    def entities_in_chunks(self, chunk_ids: Sequence[str]) -> dict[str, list[str]]:
        """The entities stated in each chunk (chunks stating none are left out)."""

    def keywords_text(self, ids: Sequence[str]) -> dict[str, str]: ...

    def iter_keyword_texts(self) -> Iterator[tuple[str, str]]: ...

    def list_entities(self, type_: str | None = None, search: str | None = None, limit: int = 100) -> list[Entity]:
        """Entities by degree (with ``degree`` and ``document_ids``); ``search`` matches names and aliases."""

    def find_entity(self, ref: str) -> list[str]:
        """Entity ids for an id, exact name or alias (case-insensitive)."""

    def graph_version(self) -> tuple:
        """Cheap token that changes whenever a relation is added, removed or re-keyed."""

    # structure: node degrees (weights, seed 003 §2.4)
    def degrees(self, entity_ids: Iterable[str]) -> dict[str, int]:
        """Distinct neighbouring entities of each entity (edges taken undirected; 0 when none)."""

    def relations_touching(self, entity_ids: Sequence[str]) -> list[str]: ...

    def relation_documents(self, relation_ids: Sequence[str]) -> dict[str, list[str]]:
        """Documents each relation was extracted from."""


@dataclass(frozen=True)
class RelationEnds:
    """Where one relation record sits: its relation and the relation's ends, its chunk, and the
    normalised names the record gave its ends ("" when written before they were kept)."""

    relation_id: str
    source_id: str
    target_id: str
    chunk_id: str
    source_key: str
    target_key: str


class GraphEdits(Protocol):
    """Primitives of the structural edits in ``graph/edit.py`` (merge and split entities); each
    moves records, never text, and is meant to run inside one unit of work."""

    def move_entity(self, old: str, new: str) -> list[str]:
        """Give ``new`` every record, mention and relation end of ``old``, then delete ``old``.
        Returns the ids of the relations whose ends changed."""

    def rekey_relation(self, old: str, new: str) -> None:
        """Rename relation ``old`` to ``new``; when ``new`` exists, ``old``'s records join it.
        ``new`` is marked for rebuild."""

    def delete_relations(self, ids: Sequence[str]) -> None: ...

    def entity_name_keys(self, entity_id: str) -> list[tuple[str, str]]:
        """(chunk id, name key) of each record of the entity, in order of arrival."""

    def split_off(self, entity_id: str, name_key: str, new_id: str) -> None:
        """Move the entity's records named ``name_key`` to ``new_id`` (created like the entity)."""

    def relation_record_ends(self, entity_id: str) -> list[RelationEnds]:
        """The ends of every record of every relation at the entity, in order of arrival."""

    def take_relation_records(self, relation_ids: Sequence[str]) -> list[RelationRecord]:
        """Remove and return every record of the relations (with their relation's id, ends and
        direction), in order of arrival; the relations stay, without records, until written to or deleted."""

    def take_folded(self, entity_id: str) -> list[RelationRecord]:
        """Remove and return the entity's folded records (relations between two of its names), in order
        of arrival. ``write_relations`` keeps a record whose ends are one entity as a folded record."""

    def orient_relation(self, relation_id: str) -> None:
        """Give an undirected relation the smaller entity id as its source (a directed one is left)."""

    def touch_entities(self, ids: Sequence[str]) -> None:
        """Mark for rebuild; a rebuild of them already in flight will not land."""

    def touch_relations(self, ids: Sequence[str]) -> None:
        """Likewise for relations (their vector text names their ends: an end renamed makes it stale)."""


class GraphEditCounts(Protocol):
    """Running counts of what structural edits (merges, splits, deletions) removed or re-pointed:
    what the community update measures the change by (``CommunityStore.graph_edits``), besides the
    relations that arrived."""

    def count_graph_edits(self, entities: int, relations: int) -> None:
        """Add to the counts (inside the edit's unit of work)."""


class CommunityStore(Protocol):
    """Communities of the entity graph per level and their reports (seed 001 §III.C-D).

    The hierarchy is replaced as a whole when recomputed; reports are keyed by the community
    signature (members + inner relations), so a community that did not change keeps its report.
    Entity ids are plain references: deleting an entity does not touch the communities (they are
    recomputed from the graph)."""

    def replace_communities(self, communities: Sequence[Community]) -> None:
        """The whole hierarchy, every level, replacing the one stored (one unit of work)."""

    def list_communities(self, level: int | None = None, members: bool = False) -> list[Community]:
        """Communities (of ``level``, else all), by level then size (largest first), then id;
        ``members=False`` leaves ``members`` empty (cheaper)."""

    def community_members(self, ids: Sequence[str]) -> dict[str, list[str]]:
        """Member entity ids of each community."""

    def communities_of(self, entity_ids: Sequence[str], level: int) -> dict[str, str]:
        """Entity id -> id of its community at ``level`` (entities in none are left out)."""

    def put_community_reports(self, reports: Sequence[CommunityReport]) -> None:
        """Store (or replace) reports, by signature."""

    def community_reports(self, signatures: Sequence[str] | None = None) -> dict[str, CommunityReport]:
        """Reports by signature (all when ``signatures`` is None)."""

    def delete_orphan_reports(self) -> int:
        """Delete reports whose signature no stored community has; returns how many."""

    def community_drift(self) -> CommunityDrift:
        """The graph against the stored communities, counted in the database (one snapshot; one
        pass over the entities and level-0 members: a knowledge base of communities computed before
        arrival numbers were recorded)."""

    def community_growth(self, since: int) -> CommunityGrowth:
        """The relations that arrived after arrival number ``since`` and their ends in no level-0
        community: a read of those relations alone (one snapshot)."""

    def graph_edits(self) -> tuple[int, int]:
        """The running counts of ``GraphEditCounts``: (entities, relations) removed or re-pointed."""

    def missing_reports(self, extractive_too: bool = False) -> int:
        """Distinct signatures of the stored communities with no report (``extractive_too``: or an
        extractive one), counted without reading the reports."""


class CitationStore(Protocol):
    """The citation network: each paper's parsed reference list, each entry resolved to a workspace
    document or to a stub paper (a cited paper that is not indexed)."""

    def put_references(self, citing_id: str, references: Sequence[PaperReference]) -> None:
        """Replace the reference list of one document. Deleting the document (``delete_document``)
        deletes its list too."""

    def references(self, citing_ids: Iterable[str] | None = None) -> list[PaperReference]:
        """Reference entries (of these citing documents, else all), by citing id then ordinal."""

    def retarget_references(self, mapping: dict[str, str]) -> int:
        """Point every entry citing ``old`` at ``new`` (stub -> document when a cited paper arrives,
        document -> stub when it is deleted); returns the entries changed."""

    def put_stub_papers(self, stubs: Sequence[StubPaper], keys: Mapping[str, Iterable[str]] | None = None) -> None:
        """Store (or replace) stub papers by id, with the keys each can be matched by (stub id ->
        keys; a stub left out keeps the keys it has)."""

    def stub_papers(self, ids: Iterable[str] | None = None) -> list[StubPaper]: ...

    def stubs_by_keys(self, keys: Iterable[str]) -> list[StubPaper]:
        """The stub papers holding any of ``keys`` (by id): one probe of the key index per key."""

    def has_stub_papers(self) -> bool:
        """Whether any stub paper is stored (one row of its key)."""

    def delete_stub_papers(self, ids: Sequence[str]) -> None: ...


class MentionStore(Protocol):
    """Sentence-level provenance (the localkg profile, seed 004 §4): each document's sentences and
    the entity mentions found in them. Written in the document's unit of work; ``delete_graph_of``
    removes a document's sentences and mentions with its records; a deleted entity takes its
    mentions along, a merged one (``move_entity``) hands them over."""

    def write_sentences(self, records: Sequence[SentenceRecord]) -> None:
        """Store sentences (a sentence already stored under the same document and ordinal is replaced)."""

    def write_mentions(self, records: Sequence[MentionRecord]) -> None:
        """Store mentions; ``entity_id`` and ``document_id`` must be set (resolved)."""

    def sentences_of(self, doc_id: str) -> list[SentenceRecord]:
        """A document's sentences by ordinal."""

    def mentions_of(self, doc_id: str) -> list[MentionRecord]:
        """A document's mentions in reading order (sentence, then character offset)."""

    def write_local_graph(self, graph: LocalGraph) -> None:
        """Store a paper's own local KG (replacing the one stored for ``graph.document_id``); its
        entities' ``entity_id`` must be set (the workspace entity each one joined)."""

    def local_graph_of(self, doc_id: str) -> LocalGraph | None:
        """A paper's local KG as it was built (None when it has none), each entity linked to the
        workspace entity it joined (``entity_id``, followed through merges)."""


class ExportReads(Protocol):
    """Paged reads, so an export streams a workspace of any size instead of loading it whole."""

    def iter_entity_pages(self, doc_ids: Collection[str] | None = None, size: int = 1000) -> Iterator[list[Entity]]:
        """Every entity (of ``doc_ids``: with a record from one of them), with its sources, in pages
        of at most ``size``, ordered by id."""

    def iter_relation_pages(self, doc_ids: Collection[str] | None = None,
                            size: int = 1000) -> Iterator[list[Relation]]:
        """Every relation (of ``doc_ids``: with a record from one of them), with its sources, in
        pages of at most ``size``, ordered by id."""


class VectorIndex(Protocol):
    """Nearest neighbours (cosine) over one namespace of vectors."""

    def search(self, query: np.ndarray, k: int, allowed: set[str] | None = None) -> list[tuple[str, float]]: ...

    def search_many(self, queries: np.ndarray, k: int) -> list[list[tuple[str, float]]]: ...

    def above(self, query: np.ndarray, threshold: float, limit: int | None = None) -> list[tuple[str, float]]: ...

    def get(self, id_: str) -> np.ndarray | None: ...

    def similarities(self, ids: Sequence[str], probes: np.ndarray) -> dict[str, float]:
        """The highest cosine between each vector among ``ids`` and any row of ``probes`` (rows
        L2-normalised), computed where the vectors are (ids without a vector are left out)."""

    def __len__(self) -> int:
        """The number of vectors (on PostgreSQL a count of the table: not on a question's path)."""

    def __bool__(self) -> bool:
        """Whether any vector is held (cheap on every backend: what a question asks)."""

    def __contains__(self, id_: object) -> bool: ...


class VectorStore(Protocol):
    """Vectors per namespace (chunk, entity, relation, keyword); searched through ``vector_index``."""

    def put_vectors(self, namespace: str, ids: Sequence[str], vectors: np.ndarray) -> None: ...

    def delete_vectors(self, namespace: str, ids: Sequence[str]) -> None: ...

    def clear_vectors(self) -> None:
        """Delete every vector of every namespace (re-embedding)."""

    def vector_index(self, namespace: str, dim: int | None = None) -> VectorIndex: ...

    def get_vectors(self, namespace: str, ids: Sequence[str]) -> dict[str, np.ndarray]: ...

    def iter_vectors(self, namespace: str) -> Iterator[tuple[str, np.ndarray]]: ...

    def begin_vector_rebuild(self) -> None:
        """A rebuild of the dirty entities and relations starts: a vector index that the rebuild would
        mostly rewrite may be set aside until ``end_vector_rebuild`` (PostgreSQL's HNSW indexes: one
        build costs a fraction of inserting each vector into the index)."""

    def end_vector_rebuild(self) -> None:
        """Build what ``begin_vector_rebuild`` set aside (by any worker, also one that died)."""


class LLMCache(Protocol):
    """Response cache and call log (the LLM client writes both)."""

    def cache_get(self, key: str) -> CachedResponse | None: ...

    def cache_put(self, key: str, model: str, purpose: str, response: CachedResponse) -> None: ...

    def log_call(self, record: CallRecord) -> None: ...


class CallLog(Protocol):
    def usage_by_purpose(self, document_id: str | None = None) -> dict[str, Usage]: ...

    def usage_by_document(self) -> dict[str, dict[str, Usage]]: ...

    def usage_by_endpoint(self) -> dict[str, Usage]:
        """Calls and tokens per LLM endpoint (base URL) that answered them; cache hits are not listed."""
        ...

    def embedding_usage_by_endpoint(self) -> dict[str, Usage]:
        """Batches (as calls), failed attempts and input tokens per embedding endpoint (``embeddings.endpoints``)."""
        ...


class EmbeddingCache(Protocol):
    """Vectors by model and text hash, and the log of the batches an embedding server computed
    (``log_call`` with purpose ``EMBEDDING_BATCH``)."""

    def embedding_get(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]: ...

    def embedding_put(self, model: str, items: dict[str, np.ndarray]) -> None: ...

    def log_call(self, record: CallRecord) -> None: ...


class SessionStore(Protocol):
    """Conversation turns per named session."""

    def session_history(self, name: str, limit: int = 6) -> list[tuple[str, str]]: ...

    def add_session_turn(self, name: str, question: str, answer: str) -> None: ...


class IndexingLock(Protocol):
    def acquire(self, blocking: bool = False) -> bool: ...

    def release(self) -> None: ...

    def holder(self) -> str:
        """Who holds it (process, host, since when), for messages."""


class Counts(Protocol):
    def count(self, what: str) -> int:
        """Number of rows of one of ``COUNTABLE`` (reads the whole table: not for every question)."""

    def has_rows(self, what: str) -> bool:
        """Whether one of ``COUNTABLE`` holds a row (reads one row at most)."""

    def content_version(self, what: str) -> int:
        """A number that changes whenever any connection commits an added, removed or re-keyed row of
        ``what`` (one of ``VERSIONED``); one small read, whatever the size of the table."""

    def versioned_rows(self, what: str) -> int:
        """Number of rows of ``what`` (one of ``VERSIONED``), kept with its version: one small read."""


# -- roles joined by what their consumers do -----------------------------------------------------
# Python has no intersection types: a consumer that needs several roles is typed against one of
# these. Each is named after an activity and serves every consumer doing it; a consumer that needs
# one role names the role itself. Only the composition root holds the aggregate ``Store``.


class PaperReads(DocumentStore, ChunkStore, GraphStore, Protocol):
    """Papers, their passages and the graph stated in them: what building a query's sources, a
    graph summary or a paper's page reads."""


class GraphSearch(PaperReads, VectorStore, Counts, Protocol):
    """``PaperReads`` with the vectors and the sizes: what retrieval over passages and the graph
    reads (the graph query modes, clues, the in-memory graph and its weights)."""


class QueryStore(GraphSearch, CommunityStore, MentionStore, MetaStore, MaintenanceStore, Writes, Protocol):
    """What a query mode may use (``plugins.base.QueryContext.store``): ``GraphSearch``, the
    communities and their reports, sentence-level provenance, the workspace facts, and units of
    work and maintenance for what a query stores on the way (the summary mode's communities,
    reports and their vectors, brought up to date on first use)."""


class BrowseStore(PaperReads, VectorStore, CommunityStore, CitationStore, MentionStore, ExportReads, MetaStore,
                  Protocol):
    """What browsing, analysing, exporting and evaluating a workspace read (overview, paper pages,
    graph and community views, plots, exports, the KG facts of a paper)."""


class GraphUpkeep(Writes, MetaStore, MaintenanceStore, GraphStore, GraphEdits, GraphEditCounts, VectorStore, Protocol):
    """What keeps the merged graph right: rebuilding dirty elements, the resolution pass, merging
    and splitting entities."""


class CommunityUpkeep(Writes, MetaStore, MaintenanceStore, ChunkStore, GraphStore, CommunityStore, Protocol):
    """What bringing the communities and their reports up to date uses (the reports a level still
    needs are queued as maintenance, so that workers finishing together share them)."""


class CitationUpkeep(Writes, MetaStore, DocumentStore, CitationStore, MaintenanceStore, Protocol):
    """What resolving the citation network uses (the documents it owes: maintenance "citations")."""


class IndexingStore(GraphUpkeep, DocumentStore, ChunkStore, MentionStore, Protocol):
    """What an indexing run writes: documents and their chunks, graph records, mentions and
    vectors, and the maintenance it owes (``GraphUpkeep``)."""


class Store(Writes, MetaStore, DocumentStore, MaintenanceStore, ChunkStore, GraphStore, GraphEdits, GraphEditCounts, VectorStore,
            LLMCache, CallLog, EmbeddingCache, SessionStore, CommunityStore, CitationStore, MentionStore, ExportReads,
            Counts, Protocol):
    """Everything one workspace holds: what a backend implements and the composition root
    (``app/workspace.py``) holds; every other consumer names the roles it uses."""

    def flush_records(self) -> None:
        """Write the cache and call-log records held in memory now."""

    def indexing_lock(self) -> IndexingLock:
        """Held for an indexing run. SQLite lets one indexing process at a time work on a workspace
        (the others wait or stop, with the holder named); PostgreSQL workers share a database through
        ``claim_pending``, so its lock only keeps two runs of one process apart."""

    def communities_lock(self) -> IndexingLock:
        """Held while the communities and their reports are updated: one process (of any machine,
        on PostgreSQL) at a time per knowledge base, so that two workers finishing together do
        not both pay for the same reports; the second then finds them up to date."""

    def close(self) -> None: ...
