"""Sentence-level provenance (``MentionStore``) and the paged reads of exports (``ExportReads``),
one role object for both backends.

:class:`Mentions` keeps the sentences, mentions and local KGs through the backend's
:class:`~.units.SqlSeam` (only the SQL dialect differs between the backends, not what a row holds
nor how it is paged); a store holds one as ``mentions`` and :class:`KeepsMentions` answers the
store's part of the contract from it, once for both. Write methods run inside a unit of work;
called alone they are one."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator, Sequence

from ..models import Entity, LocalGraph, LocalKGEntity, LocalKGRelation, MentionRecord, Relation, SentenceRecord
from .units import SqlSeam

SENTENCE_COLUMNS = ("document_id, ordinal, text, chunk_id, section, section_no, paragraph_no, page, char_start, char_end, "
                    "iri")
LOCAL_ENTITY_COLUMNS = ("document_id, local_id, label, category, types, description, aliases, relevance, mentions, "
                        "entity_id")
LOCAL_RELATION_COLUMNS = "document_id, ordinal, subject, object, predicate, canonical, sentence_no, level"
MENTION_COLUMNS = ("surface, sentence_no, char_start, char_end, chunk_id, category, types, description, level, sentence, "
                   "section, page, entity_id, document_id")


def sentence_row(s: SentenceRecord) -> tuple:
    return (s.document_id, s.ordinal, s.text, s.chunk_id, s.section, s.section_no, s.paragraph_no, s.page,
            s.char_start, s.char_end, s.iri or "")


def mention_row(m: MentionRecord) -> tuple:
    return (m.surface, m.sentence_no, m.char_start, m.char_end, m.chunk_id, m.category,
            json.dumps(list(m.types), ensure_ascii=False), m.description, m.level, m.sentence, m.section, m.page,
            m.entity_id, m.document_id)


def mention_from_row(r: Sequence) -> MentionRecord:
    return MentionRecord(r[0], r[1], r[2], r[3], r[4], category=r[5], types=json.loads(r[6] or "[]"), description=r[7],
                         level=r[8], sentence=r[9], section=r[10], page=r[11], entity_id=r[12], document_id=r[13])


def local_entity_rows(graph: LocalGraph) -> list[tuple]:
    return [(graph.document_id, e.local_id, e.label, e.category, json.dumps(list(e.types), ensure_ascii=False),
             e.description, json.dumps(list(e.aliases), ensure_ascii=False), e.relevance,
             json.dumps([list(m) for m in e.mentions]), e.entity_id) for e in graph.entities]


def local_relation_rows(graph: LocalGraph) -> list[tuple]:
    return [(graph.document_id, n, r.subject, r.object, r.predicate, r.canonical, r.sentence, r.level)
            for n, r in enumerate(graph.relations)]


def local_graph_from_rows(doc_id: str, entities: Sequence[Sequence], relations: Sequence[Sequence]) -> LocalGraph | None:
    """A stored local KG (rows in ``LOCAL_ENTITY_COLUMNS`` / ``LOCAL_RELATION_COLUMNS`` order, by
    local id / ordinal); None when the document has none (not indexed with localkg)."""
    if not entities:
        return None
    return LocalGraph(doc_id, [
        LocalKGEntity(r[1], r[2], r[3], json.loads(r[4] or "[]"), r[5], json.loads(r[6] or "[]"), r[7],
                      [(int(a), int(b), int(c)) for a, b, c in json.loads(r[8] or "[]")], entity_id=r[9])
        for r in entities], [LocalKGRelation(r[2], r[4], r[3], r[5], r[6], r[7]) for r in relations])


def keyset_pages(page_ids: Callable[[str], list[str]], load: Callable[[list[str]], dict]) -> Iterator[list]:
    """Pages of loaded records: ``page_ids(after)`` gives the next ids above ``after`` in order
    (never an OFFSET scan, never the whole table at once); ids ``load`` no longer finds are skipped."""
    after = ""
    while ids := page_ids(after):
        found = load(ids)
        yield [found[i] for i in ids if i in found]
        after = ids[-1]


class Mentions:
    """``MentionStore`` and ``ExportReads`` over a backend's SQL; ``entities`` / ``relations``
    load a page of ids (the backend's ``get_entities`` / ``get_relations``)."""

    def __init__(self, sql: SqlSeam, entities: Callable[[list[str]], dict[str, Entity]],
                 relations: Callable[[list[str]], dict[str, Relation]]):
        self.sql = sql
        self._entities = entities
        self._relations = relations

    def write_sentences(self, records: Sequence[SentenceRecord]) -> None:
        if rows := [sentence_row(s) for s in records]:
            self.sql.write(lambda: self.sql.execute_many(
                f"INSERT INTO sentences({SENTENCE_COLUMNS}) VALUES ({self.sql.marks(11)}) "
                "ON CONFLICT (document_id, ordinal) DO UPDATE SET text = excluded.text, chunk_id = excluded.chunk_id, "
                "section = excluded.section, section_no = excluded.section_no, paragraph_no = excluded.paragraph_no, "
                "page = excluded.page, char_start = excluded.char_start, char_end = excluded.char_end, iri = excluded.iri",
                rows))

    def write_mentions(self, records: Sequence[MentionRecord]) -> None:
        if rows := [mention_row(m) for m in records]:
            self.sql.write(lambda: self.sql.execute_many(
                f"INSERT INTO mentions({MENTION_COLUMNS}) VALUES ({self.sql.marks(14)})", rows))

    def sentences_of(self, doc_id: str) -> list[SentenceRecord]:
        rows = self.sql.rows(f"SELECT {SENTENCE_COLUMNS} FROM sentences WHERE document_id = {self.sql.mark} "
                             "ORDER BY ordinal", (doc_id,))
        return [SentenceRecord(*r) for r in rows]

    def mentions_of(self, doc_id: str) -> list[MentionRecord]:
        rows = self.sql.rows(f"SELECT {MENTION_COLUMNS} FROM mentions WHERE document_id = {self.sql.mark} "
                             "ORDER BY sentence_no, char_start, id", (doc_id,))
        return [mention_from_row(r) for r in rows]

    def write_local_graph(self, graph: LocalGraph) -> None:
        doc, sql = graph.document_id, self.sql

        def work() -> None:
            for table in ("local_entities", "local_relations"):
                sql.execute(f"DELETE FROM {table} WHERE document_id = {sql.mark}", (doc,))
            if graph.entities:
                sql.execute_many(f"INSERT INTO local_entities({LOCAL_ENTITY_COLUMNS}) VALUES ({sql.marks(10)})",
                                 local_entity_rows(graph))
            if graph.relations:
                sql.execute_many(f"INSERT INTO local_relations({LOCAL_RELATION_COLUMNS}) VALUES ({sql.marks(8)})",
                                 local_relation_rows(graph))

        sql.write(work)

    def local_graph_of(self, doc_id: str) -> LocalGraph | None:
        entities = self.sql.rows(f"SELECT {LOCAL_ENTITY_COLUMNS} FROM local_entities WHERE document_id = {self.sql.mark} "
                                 "ORDER BY local_id", (doc_id,))
        relations = self.sql.rows(f"SELECT {LOCAL_RELATION_COLUMNS} FROM local_relations "
                                  f"WHERE document_id = {self.sql.mark} ORDER BY ordinal", (doc_id,))
        return local_graph_from_rows(doc_id, entities, relations)

    # -- paged reads (exports) -----------------------------------------------------------------

    def iter_entity_pages(self, doc_ids: Collection[str] | None = None, size: int = 1000) -> Iterator[list[Entity]]:
        yield from keyset_pages(self._page_ids("entities", "entity_sources", "entity_id", doc_ids, size), self._entities)

    def iter_relation_pages(self, doc_ids: Collection[str] | None = None, size: int = 1000) -> Iterator[list[Relation]]:
        yield from keyset_pages(self._page_ids("relations", "relation_sources", "relation_id", doc_ids, size),
                                self._relations)

    def _page_ids(self, table: str, sources: str, column: str, doc_ids: Collection[str] | None,
                  size: int) -> Callable[[str], list[str]]:
        """The next ``size`` ids above ``after`` (of ``doc_ids``: with a record from one of them)."""
        docs = sorted(set(doc_ids)) if doc_ids is not None else None
        mark = self.sql.mark

        def page_ids(after: str) -> list[str]:
            if docs is None:
                rows = self.sql.rows(f"SELECT id FROM {table} WHERE id > {mark} ORDER BY id LIMIT {mark}", (after, size))
            else:
                of_docs, params = self.sql.one_of("document_id", docs)
                rows = self.sql.rows(f"SELECT DISTINCT {column} FROM {sources} WHERE {of_docs} "
                                     f"AND {column} > {mark} ORDER BY {column} LIMIT {mark}", (*params, after, size))
            return [r[0] for r in rows]

        return page_ids


class KeepsMentions:
    """A store whose sentence-level provenance and paged reads are its ``mentions`` role object."""

    mentions: Mentions

    def write_sentences(self, records: Sequence[SentenceRecord]) -> None:
        self.mentions.write_sentences(records)

    def write_mentions(self, records: Sequence[MentionRecord]) -> None:
        self.mentions.write_mentions(records)

    def sentences_of(self, doc_id: str) -> list[SentenceRecord]:
        return self.mentions.sentences_of(doc_id)

    def mentions_of(self, doc_id: str) -> list[MentionRecord]:
        return self.mentions.mentions_of(doc_id)

    def write_local_graph(self, graph: LocalGraph) -> None:
        self.mentions.write_local_graph(graph)

    def local_graph_of(self, doc_id: str) -> LocalGraph | None:
        return self.mentions.local_graph_of(doc_id)

    def iter_entity_pages(self, doc_ids: Collection[str] | None = None, size: int = 1000) -> Iterator[list[Entity]]:
        return self.mentions.iter_entity_pages(doc_ids, size)

    def iter_relation_pages(self, doc_ids: Collection[str] | None = None, size: int = 1000) -> Iterator[list[Relation]]:
        return self.mentions.iter_relation_pages(doc_ids, size)
