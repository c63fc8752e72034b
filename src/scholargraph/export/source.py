"""What an export reads, in pieces: papers one at a time (with their sentences, mentions and
passages), entities and relations a page at a time (``ExportReads``), so a workspace of any size
is written without being held in memory (and never twice)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from ..errors import NotFoundError
from ..models import Chunk, DocStatus, Entity, LocalGraph, MentionRecord, Relation, RelationRecord, SentenceRecord
from ..store.base import BrowseStore, DocumentRow
from ..text.printable import clean

PAGE = 1000
BROADER = "skos:broader"  # the relation type of taxonomy links (localkg stage 5)


@dataclass
class PaperPart:
    """One paper and the text its graph came from."""

    row: DocumentRow
    chunks: list[Chunk]
    sentences: list[SentenceRecord]
    mentions: list[MentionRecord]
    local: LocalGraph | None = None  # the paper's own local KG (localkg), as it was built


@dataclass
class RelationPart:
    relation: Relation
    records: list[RelationRecord] = field(default_factory=list)  # of the selected papers, in document order


def predicate_of(record: RelationRecord) -> str:
    """A record's predicate: its (canonical) type, else its first keyword, else "related to"."""
    for value in (*record.types, *record.keywords):
        if value and value.strip():
            return value.strip()
    return "related to"


class ExportSource:
    """What the exports read, every text field cleaned of characters no format may carry."""

    def __init__(self, store: BrowseStore, doc_ids: Sequence[str] | None = None, page: int = PAGE):
        self.store = store
        self.page = page
        self.doc_ids = list(dict.fromkeys(doc_ids)) if doc_ids else None
        if self.doc_ids:
            found = self.store.documents_by_id(self.doc_ids)
            missing = [d for d in self.doc_ids if d not in found]
            if missing:
                raise NotFoundError(f"no document with id {', '.join(map(repr, missing))} (see `scholargraph status`)")

    def rows(self) -> list[DocumentRow]:
        """The selected papers (all indexed ones by default), in a stable order."""
        if self.doc_ids:
            found = self.store.documents_by_id(self.doc_ids)
            return [clean(found[d]) for d in self.doc_ids]
        return [clean(r) for r in sorted(self.store.list_documents(DocStatus.PROCESSED), key=lambda r: r.id)]

    def papers(self) -> Iterator[PaperPart]:
        for row in self.rows():
            local = self.store.local_graph_of(row.id)
            yield PaperPart(row, [clean(c) for c in self.store.chunks_of(row.id)], self.sentences_of(row.id),
                            [clean(m) for m in self.store.mentions_of(row.id)], _clean_local(local))

    def narrowed(self, doc_ids: Sequence[str]) -> ExportSource | None:
        """The same export over fewer papers (None: none left)."""
        return ExportSource(self.store, doc_ids, self.page) if doc_ids else None

    def linked_entities(self, ids: Sequence[str]) -> set[str]:
        """Those of ``ids`` that still are workspace entities (the targets of local KG links)."""
        return set(self.store.get_entities(list(dict.fromkeys(i for i in ids if i))))

    def sentences_of(self, doc_id: str) -> list[SentenceRecord]:
        return [clean(s) for s in self.store.sentences_of(doc_id)]

    def entity_pages(self) -> Iterator[list[Entity]]:
        for page in self.store.iter_entity_pages(self.doc_ids, self.page):
            yield [clean(e) for e in page]

    def relation_pages(self) -> Iterator[list[RelationPart]]:
        wanted = set(self.doc_ids) if self.doc_ids else None
        for page in self.store.iter_relation_pages(self.doc_ids, self.page):
            parts = {r.id: RelationPart(clean(r)) for r in page}
            for record in self.store.relation_provenance([r.id for r in page]):
                if wanted is None or record.document_id in wanted:
                    parts[record.id].records.append(clean(record))
            yield list(parts.values())


def _clean_local(graph: LocalGraph | None) -> LocalGraph | None:
    if graph is None:
        return None
    return LocalGraph(graph.document_id, [clean(e) for e in graph.entities], [clean(r) for r in graph.relations])
