"""Rows of the sentence and mention tables, and keyset paging, shared by both backends'
``MentionStore`` / ``ExportReads`` (:mod:`.sqlite.mentions`, :mod:`.postgres.mentions`): only the
SQL dialect differs between them, not what a row holds."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence

from ..models import LocalGraph, LocalKGEntity, LocalKGRelation, MentionRecord, SentenceRecord

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
