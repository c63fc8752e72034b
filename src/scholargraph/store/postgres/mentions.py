"""Sentence-level provenance (``MentionStore``) and the paged reads of exports (``ExportReads``) in
the PostgreSQL store, with the same semantics as :mod:`.sqlite_mentions`."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any

from ...models import Entity, LocalGraph, MentionRecord, Relation, SentenceRecord
from ..mention_rows import (
    LOCAL_ENTITY_COLUMNS,
    LOCAL_RELATION_COLUMNS,
    MENTION_COLUMNS,
    SENTENCE_COLUMNS,
    keyset_pages,
    local_entity_rows,
    local_graph_from_rows,
    local_relation_rows,
    mention_from_row,
    mention_row,
    sentence_row,
)


class PostgresMentions:
    """Mixed into :class:`~scholargraph.store.postgres.PostgresStore`, which provides these."""

    _rows: Callable[..., list]
    _many: Callable[..., None]
    _exec: Callable[..., Any]
    write: Callable[..., Any]
    get_entities: Callable[..., dict[str, Entity]]
    get_relations: Callable[..., dict[str, Relation]]

    def write_sentences(self, records: Sequence[SentenceRecord]) -> None:
        rows = [sentence_row(s) for s in records]
        if rows:
            self.write(lambda: self._many(
                f"INSERT INTO sentences({SENTENCE_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (document_id, ordinal) DO UPDATE SET text = excluded.text, chunk_id = excluded.chunk_id, "
                "section = excluded.section, section_no = excluded.section_no, paragraph_no = excluded.paragraph_no, "
                "page = excluded.page, char_start = excluded.char_start, char_end = excluded.char_end, iri = excluded.iri", rows))

    def write_mentions(self, records: Sequence[MentionRecord]) -> None:
        rows = [mention_row(m) for m in records]
        if rows:
            self.write(lambda: self._many(
                f"INSERT INTO mentions({MENTION_COLUMNS}) VALUES ({', '.join(['%s'] * 14)})", rows))

    def sentences_of(self, doc_id: str) -> list[SentenceRecord]:
        rows = self._rows(f"SELECT {SENTENCE_COLUMNS} FROM sentences WHERE document_id = %s ORDER BY ordinal", (doc_id,))
        return [SentenceRecord(*r) for r in rows]

    def mentions_of(self, doc_id: str) -> list[MentionRecord]:
        rows = self._rows(f"SELECT {MENTION_COLUMNS} FROM mentions WHERE document_id = %s "
                          "ORDER BY sentence_no, char_start, id", (doc_id,))
        return [mention_from_row(r) for r in rows]

    def write_local_graph(self, graph: LocalGraph) -> None:
        doc = graph.document_id

        def work() -> None:
            for table in ("local_entities", "local_relations"):
                self._exec(f"DELETE FROM {table} WHERE document_id = %s", (doc,))
            if graph.entities:
                self._many(f"INSERT INTO local_entities({LOCAL_ENTITY_COLUMNS}) VALUES ({', '.join(['%s'] * 10)})",
                     local_entity_rows(graph))
            if graph.relations:
                self._many(f"INSERT INTO local_relations({LOCAL_RELATION_COLUMNS}) VALUES ({', '.join(['%s'] * 8)})",
                     local_relation_rows(graph))

        self.write(work)

    def local_graph_of(self, doc_id: str) -> LocalGraph | None:
        entities = self._rows(f"SELECT {LOCAL_ENTITY_COLUMNS} FROM local_entities WHERE document_id = %s "
                              "ORDER BY local_id", (doc_id,))
        relations = self._rows(f"SELECT {LOCAL_RELATION_COLUMNS} FROM local_relations WHERE document_id = %s "
                               "ORDER BY ordinal", (doc_id,))
        return local_graph_from_rows(doc_id, entities, relations)

    # -- paged reads (exports) -----------------------------------------------------------------

    def iter_entity_pages(self, doc_ids: Collection[str] | None = None, size: int = 1000) -> Iterator[list[Entity]]:
        yield from self._pages("entities", "entity_sources", "entity_id", doc_ids, size, self.get_entities)

    def iter_relation_pages(self, doc_ids: Collection[str] | None = None, size: int = 1000) -> Iterator[list[Relation]]:
        yield from self._pages("relations", "relation_sources", "relation_id", doc_ids, size, self.get_relations)

    def _pages(self, table: str, sources: str, column: str, doc_ids: Collection[str] | None, size: int,
               load: Callable[..., dict]) -> Iterator[list]:
        """Keyset pages of ids (:func:`.mention_rows.keyset_pages`)."""
        docs = sorted(set(doc_ids)) if doc_ids is not None else None

        def page_ids(after: str) -> list[str]:
            if docs is None:
                rows = self._rows(f"SELECT id FROM {table} WHERE id > %s ORDER BY id LIMIT %s", (after, size))
            else:
                rows = self._rows(f"SELECT DISTINCT {column} FROM {sources} WHERE document_id = ANY(%s) "
                                  f"AND {column} > %s ORDER BY {column} LIMIT %s", (docs, after, size))
            return [r[0] for r in rows]

        yield from keyset_pages(page_ids, load)
