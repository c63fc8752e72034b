"""The graph roles (``GraphStore`` and ``GraphEdits`` of :mod:`.base`) as a role object: each
backend builds one (``sqlite.graph.SQLiteGraph``, ``postgres.graph.PostgresGraph``) over its
connections, and :class:`KeepsGraph` answers the store's part of the contract from it, once for
both. Claiming dirty elements for a rebuild is maintenance (``MaintenanceStore``): each backend's
store answers it (SQLite from its graph object, PostgreSQL with the workers' leases)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol

from ..models import Entity, EntityRecord, KeywordRecord, Relation, RelationRecord
from .base import GraphEdits, GraphKind, GraphRemoval, GraphStore, RelationEnds, SourceDescriptions, SourceLimit


class GraphParts(GraphStore, GraphEdits, Protocol):
    """What a backend's graph object implements."""


class KeepsGraph:
    """A store whose entities, relations and keywords are its ``graph`` role object."""

    graph: GraphParts

    def write_entities(self, records: Sequence[EntityRecord]) -> None:
        self.graph.write_entities(records)

    def write_relations(self, records: Sequence[RelationRecord]) -> None:
        self.graph.write_relations(records)

    def write_keywords(self, records: Sequence[KeywordRecord]) -> list[str]:
        return self.graph.write_keywords(records)

    def entities_by_keys(self, keys: Sequence[str]) -> dict[str, str]:
        return self.graph.entities_by_keys(keys)

    def delete_graph_of(self, doc_id: str) -> GraphRemoval:
        return self.graph.delete_graph_of(doc_id)

    def dirty_ids(self, kind: GraphKind, limit: int | None = None) -> list[str]:
        return self.graph.dirty_ids(kind, limit)

    def versions(self, kind: GraphKind, ids: Sequence[str]) -> dict[str, float]:
        return self.graph.versions(kind, ids)

    def entity_sources(self, ids: Sequence[str]) -> dict[str, SourceDescriptions]:
        return self.graph.entity_sources(ids)

    def relation_sources(self, ids: Sequence[str]) -> dict[str, SourceDescriptions]:
        return self.graph.relation_sources(ids)

    def update_entity(self, entity: Entity, version: float) -> bool:
        return self.graph.update_entity(entity, version)

    def update_relation(self, relation: Relation, version: float) -> bool:
        return self.graph.update_relation(relation, version)

    def mark_all_dirty(self) -> None:
        self.graph.mark_all_dirty()

    def get_entities(self, ids: Iterable[str], sources: bool | SourceLimit = True) -> dict[str, Entity]:
        return self.graph.get_entities(ids, sources)

    def get_relations(self, ids: Iterable[str], sources: bool | SourceLimit = True) -> dict[str, Relation]:
        return self.graph.get_relations(ids, sources)

    def chunk_counts(self, kind: GraphKind, ids: Sequence[str]) -> dict[str, int]:
        return self.graph.chunk_counts(kind, ids)

    def relation_provenance(self, ids: Sequence[str]) -> list[RelationRecord]:
        return self.graph.relation_provenance(ids)

    def all_edges(self) -> list[tuple[str, str, str, float]]:
        return self.graph.all_edges()

    def all_entity_ids(self) -> list[str]:
        return self.graph.all_entity_ids()

    def edges_touching(self, entity_ids: Sequence[str]) -> list[tuple[str, str, str, float]]:
        return self.graph.edges_touching(entity_ids)

    def entities_in_chunks(self, chunk_ids: Sequence[str]) -> dict[str, list[str]]:
        return self.graph.entities_in_chunks(chunk_ids)

    def keywords_text(self, ids: Sequence[str]) -> dict[str, str]:
        return self.graph.keywords_text(ids)

    def iter_keyword_texts(self) -> Iterator[tuple[str, str]]:
        return self.graph.iter_keyword_texts()

    def list_entities(self, type_: str | None = None, search: str | None = None, limit: int = 100) -> list[Entity]:
        return self.graph.list_entities(type_, search, limit)

    def find_entity(self, ref: str) -> list[str]:
        return self.graph.find_entity(ref)

    def graph_version(self) -> tuple:
        return self.graph.graph_version()

    def degrees(self, entity_ids: Iterable[str]) -> dict[str, int]:
        return self.graph.degrees(entity_ids)

    def relations_touching(self, entity_ids: Sequence[str]) -> list[str]:
        return self.graph.relations_touching(entity_ids)

    def relation_documents(self, relation_ids: Sequence[str]) -> dict[str, list[str]]:
        return self.graph.relation_documents(relation_ids)

    def move_entity(self, old: str, new: str) -> list[str]:
        return self.graph.move_entity(old, new)

    def rekey_relation(self, old: str, new: str) -> None:
        self.graph.rekey_relation(old, new)

    def delete_relations(self, ids: Sequence[str]) -> None:
        self.graph.delete_relations(ids)

    def entity_name_keys(self, entity_id: str) -> list[tuple[str, str]]:
        return self.graph.entity_name_keys(entity_id)

    def split_off(self, entity_id: str, name_key: str, new_id: str) -> None:
        self.graph.split_off(entity_id, name_key, new_id)

    def relation_record_ends(self, entity_id: str) -> list[RelationEnds]:
        return self.graph.relation_record_ends(entity_id)

    def take_relation_records(self, relation_ids: Sequence[str]) -> list[RelationRecord]:
        return self.graph.take_relation_records(relation_ids)

    def take_folded(self, entity_id: str) -> list[RelationRecord]:
        return self.graph.take_folded(entity_id)

    def orient_relation(self, relation_id: str) -> None:
        self.graph.orient_relation(relation_id)

    def touch_entities(self, ids: Sequence[str]) -> None:
        self.graph.touch_entities(ids)

    def touch_relations(self, ids: Sequence[str]) -> None:
        self.graph.touch_relations(ids)
