"""Sentence-level provenance (``MentionStore``) and the paged reads of exports (``ExportReads``) in
the SQLite store. Write methods run inside a unit of work (``SQLiteStore.write``); called alone
they are one."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any

from ..models import Entity, MentionRecord, Relation, SentenceRecord

_SENTENCE_COLUMNS = "document_id, ordinal, text, chunk_id, section, section_no, paragraph_no, page, char_start, char_end"
_MENTION_COLUMNS = ("surface, sentence_no, char_start, char_end, chunk_id, category, types, description, level, sentence, "
                    "section, page, entity_id, document_id")


def _mention(r: sqlite3.Row) -> MentionRecord:
    return MentionRecord(r[0], r[1], r[2], r[3], r[4], category=r[5], types=json.loads(r[6] or "[]"), description=r[7],
                         level=r[8], sentence=r[9], section=r[10], page=r[11], entity_id=r[12], document_id=r[13])


class SQLiteMentions:
    """Mixed into :class:`~scholargraph.store.sqlite.SQLiteStore`, which provides these."""

    _rows: Callable[..., list[sqlite3.Row]]
    _wconn: Callable[[], sqlite3.Connection]
    write: Callable[..., Any]
    get_entities: Callable[..., dict[str, Entity]]
    get_relations: Callable[..., dict[str, Relation]]

    def write_sentences(self, records: Sequence[SentenceRecord]) -> None:
        rows = [(s.document_id, s.ordinal, s.text, s.chunk_id, s.section, s.section_no, s.paragraph_no, s.page,
                 s.char_start, s.char_end) for s in records]
        self.write(lambda: self._wconn().executemany(
            f"INSERT OR REPLACE INTO sentences({_SENTENCE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)", rows))

    def write_mentions(self, records: Sequence[MentionRecord]) -> None:
        rows = [(m.surface, m.sentence_no, m.char_start, m.char_end, m.chunk_id, m.category,
                 json.dumps(list(m.types), ensure_ascii=False), m.description, m.level, m.sentence, m.section, m.page,
                 m.entity_id, m.document_id) for m in records]
        self.write(lambda: self._wconn().executemany(
            f"INSERT INTO mentions({_MENTION_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows))

    def sentences_of(self, doc_id: str) -> list[SentenceRecord]:
        rows = self._rows(f"SELECT {_SENTENCE_COLUMNS} FROM sentences WHERE document_id = ? ORDER BY ordinal", (doc_id,))
        return [SentenceRecord(*r) for r in rows]

    def mentions_of(self, doc_id: str) -> list[MentionRecord]:
        rows = self._rows(f"SELECT {_MENTION_COLUMNS} FROM mentions WHERE document_id = ? "
                          "ORDER BY sentence_no, char_start, id", (doc_id,))
        return [_mention(r) for r in rows]

    # -- paged reads (exports) -----------------------------------------------------------------

    def iter_entity_pages(self, doc_ids: Collection[str] | None = None, size: int = 1000) -> Iterator[list[Entity]]:
        yield from self._pages("entities", "entity_sources", "entity_id", doc_ids, size, self.get_entities)

    def iter_relation_pages(self, doc_ids: Collection[str] | None = None, size: int = 1000) -> Iterator[list[Relation]]:
        yield from self._pages("relations", "relation_sources", "relation_id", doc_ids, size, self.get_relations)

    def _pages(self, table: str, sources: str, column: str, doc_ids: Collection[str] | None, size: int,
               load: Callable[..., dict]) -> Iterator[list]:
        """Keyset pages of ids (never an OFFSET scan, never the whole table at once)."""
        after = ""
        docs = sorted(set(doc_ids)) if doc_ids is not None else None
        while True:
            if docs is None:
                rows = self._rows(f"SELECT id FROM {table} WHERE id > ? ORDER BY id LIMIT ?", (after, size))
            else:
                marks = ",".join("?" * len(docs))
                rows = self._rows(f"SELECT DISTINCT {column} FROM {sources} WHERE document_id IN ({marks}) "
                                  f"AND {column} > ? ORDER BY {column} LIMIT ?", (*docs, after, size))
            ids = [r[0] for r in rows]
            if not ids:
                return
            found = load(ids)
            yield [found[i] for i in ids if i in found]
            after = ids[-1]
