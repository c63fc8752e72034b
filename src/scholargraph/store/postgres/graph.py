"""Graph tables of the PostgreSQL store: entities, relations, keywords and their provenance
(``GraphStore`` and ``GraphEdits``), with the same semantics as :mod:`.sqlite_graph`.

Records keep their order of arrival in a ``seq`` column. Merged rows carry a ``version`` that every
new record or edit raises; a rebuild lands only if the version it read is still there. Several
workers write the same entities: each statement takes its row locks in id order, and a unit of
work that still deadlocks with another worker's is run again (:mod:`.conn`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ...models import Entity, EntityRecord, KeywordRecord, Relation, RelationRecord
from ..base import (
    RECORD_COLUMNS,
    GraphKind,
    GraphRemoval,
    RelationEnds,
    SourceDescriptions,
    SourceLimit,
    add_source_rows,
    entity_source_rows,
    first_sources,
    fold_apart,
    key_entities_sql,
    most_sourced,
    read_content_version,
    record_columns,
    record_placeholders,
    record_values,
    stored_record,
)

_KINDS = {"entities": "entities", "relations": "relations"}
_SOURCES = {"entities": ("entity_sources", "entity_id"), "relations": ("relation_sources", "relation_id")}
KEY_ENTITIES_SQL = key_entities_sql("unnest(%s::text[]) AS k(value)")
KEY_SOURCE_COUNTS_SQL = ("SELECT name_key, entity_id, count(*) AS n FROM entity_sources WHERE name_key = ANY(%s) "
                         "GROUP BY name_key, entity_id ORDER BY n DESC, entity_id")
_ENTITY_COLUMNS = "id, name, type, description, aliases, weight"
_RELATION_COLUMNS = "id, source_id, target_id, description, keywords, types, weight, directed, confidence"


def _table(kind: GraphKind) -> str:
    try:
        return _KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown graph element kind {kind!r}") from None


def _entity(r: Sequence) -> Entity:
    return Entity(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5])


def _relation(r: Sequence) -> Relation:
    return Relation(r[0], r[1], r[2], r[3], json.loads(r[4]), json.loads(r[5]), r[6], bool(r[7]), r[8])


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


class PostgresGraph:
    """``GraphStore`` and ``GraphEdits`` on PostgreSQL, over the store's connections: ``rows`` reads
    (on the unit of work's connection inside one), ``execute`` / ``execute_many`` write inside a unit
    of work and ``write`` runs one."""

    def __init__(self, rows: Callable[..., list], execute: Callable[..., Any], execute_many: Callable[..., None],
                 write: Callable[..., Any]):
        self._rows = rows
        self._exec = execute
        self._many = execute_many
        self.write = write

    # -- writing a document's records ----------------------------------------------------

    def write_entities(self, records: Sequence[EntityRecord]) -> None:
        if records:
            self.write(lambda: self._write_entities(records))

    def _write_entities(self, records: Sequence[EntityRecord]) -> None:
        now = time.time()
        first: dict[str, EntityRecord] = {}
        for r in records:
            first.setdefault(r.id, r)
        self._many(
            """INSERT INTO entities(id, name, type, description, aliases, dirty, updated_at)
               VALUES (%s, %s, %s, %s, '[]', TRUE, %s)
               ON CONFLICT (id) DO UPDATE SET dirty = TRUE, version = entities.version + 1,
                   updated_at = excluded.updated_at""",
            [(r.id, r.name, r.type, r.description, now) for _, r in sorted(first.items())],
        )
        self._many(
            """INSERT INTO entity_sources(entity_id, chunk_id, document_id, name, name_key, role, type, description)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s)""",
            entity_source_rows(records),
        )

    def write_relations(self, records: Sequence[RelationRecord]) -> None:
        if records:
            self.write(lambda: self._write_relations(records))

    def _write_relations(self, records: Sequence[RelationRecord]) -> None:
        now = time.time()
        records, folded = fold_apart(records)
        first: dict[str, RelationRecord] = {}
        for r in records:
            first.setdefault(r.id, r)
        self._many(
            """INSERT INTO relations(id, source_id, target_id, directed, description, dirty, updated_at)
               VALUES (%s, %s, %s, %s, %s, TRUE, %s)
               ON CONFLICT (id) DO UPDATE SET dirty = TRUE, version = relations.version + 1,
                   updated_at = excluded.updated_at""",
            [(r.id, r.source_id, r.target_id, bool(r.directed), r.description, now) for _, r in sorted(first.items())],
        )
        self._many(f"INSERT INTO relation_sources(relation_id, {RECORD_COLUMNS}) VALUES (%s, {record_placeholders('%s')})",
                   [(r.id, *record_values(r, _dumps)) for r in records])
        self._many(f"INSERT INTO folded_relations(entity_id, directed, {RECORD_COLUMNS}) VALUES (%s, %s, {record_placeholders('%s')})",
                   [(r.source_id, bool(r.directed), *record_values(r, _dumps)) for r in folded])

    def write_keywords(self, records: Sequence[KeywordRecord]) -> list[str]:
        return self.write(lambda: self._write_keywords(records)) if records else []

    def _write_keywords(self, records: Sequence[KeywordRecord]) -> list[str]:
        texts: dict[str, str] = {}
        for r in records:
            texts.setdefault(r.id, r.text)
        ids = sorted(texts)
        new = {r[0] for r in self._rows(
            "INSERT INTO keywords(id, text) SELECT * FROM unnest(%s::text[], %s::text[]) "
            "ON CONFLICT (id) DO NOTHING RETURNING id", (ids, [texts[i] for i in ids]))}
        self._many(
            "INSERT INTO keyword_sources(keyword_id, chunk_id, document_id) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
            sorted({(r.id, r.chunk_id, r.document_id) for r in records}),
        )
        return [i for i in dict.fromkeys(r.id for r in records) if i in new]

    def entities_by_keys(self, keys: Sequence[str]) -> dict[str, str]:
        keys = list(dict.fromkeys(keys))
        if not keys:
            return {}
        return most_sourced(keys, self._rows(KEY_ENTITIES_SQL, (keys,)),
                            lambda shared: self._rows(KEY_SOURCE_COUNTS_SQL, (shared,)))

    def delete_graph_of(self, doc_id: str) -> GraphRemoval:
        return self.write(lambda: self._delete_graph_of(doc_id))

    def _delete_graph_of(self, doc_id: str) -> GraphRemoval:
        touched = {
            kind: [r[0] for r in self._rows(f"DELETE FROM {table} WHERE document_id = %s RETURNING {column}", (doc_id,))]
            for kind, table, column in (("entity", "entity_sources", "entity_id"),
                                        ("relation", "relation_sources", "relation_id"),
                                        ("keyword", "keyword_sources", "keyword_id"))
        }
        for table in ("mentions", "sentences", "chunk_failures", "local_entities", "local_relations", "folded_relations"):
            self._exec(f"DELETE FROM {table} WHERE document_id = %s", (doc_id,))
        gone = GraphRemoval(
            entity=self._orphans("entity_sources", "entity_id", touched["entity"]),
            relation=self._orphans("relation_sources", "relation_id", touched["relation"]),
            keyword=self._orphans("keyword_sources", "keyword_id", touched["keyword"]),
        )
        gone.relation = sorted(set(gone.relation) | set(self.relations_touching(gone.entity)))
        self._delete_ids("relations", gone.relation)
        self._delete_ids("entities", gone.entity)
        self._delete_ids("keywords", gone.keyword)
        self._touch("entities", sorted(set(touched["entity"]) - set(gone.entity)))
        self._touch("relations", sorted(set(touched["relation"]) - set(gone.relation)))
        return gone

    def _orphans(self, sources: str, column: str, ids: Sequence[str]) -> list[str]:
        ids = sorted(set(ids))
        if not ids:
            return []
        alive = {r[0] for r in self._rows(f"SELECT DISTINCT {column} FROM {sources} WHERE {column} = ANY(%s)", (ids,))}
        return [x for x in ids if x not in alive]

    def _delete_ids(self, table: str, ids: Sequence[str]) -> None:
        if ids:
            self._exec(f"DELETE FROM {table} WHERE id = ANY(%s)", (sorted(ids),))

    def _touch(self, table: str, ids: Sequence[str]) -> None:
        if ids:
            self._exec(f"UPDATE {table} SET dirty = TRUE, version = version + 1 WHERE id = ANY(%s)", (sorted(ids),))

    # -- rebuilding merged values ---------------------------------------------------------

    def dirty_ids(self, kind: GraphKind, limit: int | None = None) -> list[str]:
        sql = f"SELECT id FROM {_table(kind)} WHERE dirty ORDER BY id" + (f" LIMIT {int(limit)}" if limit else "")
        return [r[0] for r in self._rows(sql)]

    def versions(self, kind: GraphKind, ids: Sequence[str]) -> dict[str, float]:
        rows = self._rows(f"SELECT id, version FROM {_table(kind)} WHERE id = ANY(%s)", (list(ids),))
        return {r[0]: float(r[1]) for r in rows}

    def entity_sources(self, ids: Sequence[str]) -> dict[str, SourceDescriptions]:
        out = {i: SourceDescriptions(i, [], [], [], 0.0, [], None) for i in ids}
        rows = self._rows(
            "SELECT entity_id, name, type, description, role, name_key FROM entity_sources WHERE entity_id = ANY(%s) "
            "ORDER BY document_id, seq", (list(ids),))
        for r in rows:
            src = out[r[0]]
            src.names.append(r[1])
            src.roles.append(r[4])
            src.keys.append(r[5] or "")
            src.types.append(r[2] or "")  # parallel to the names: a pass rebuilds a merged entity's parts
            src.descriptions.append(r[3] or "")
            src.weight += bool(r[3])
        return out

    def relation_sources(self, ids: Sequence[str]) -> dict[str, SourceDescriptions]:
        out = {i: SourceDescriptions(i, [], [], [], 0.0, [], None) for i in ids}
        rows = self._rows(
            "SELECT relation_id, description, keywords, types, strength, confidence FROM relation_sources "
            "WHERE relation_id = ANY(%s) ORDER BY document_id, seq", (list(ids),))
        for r in rows:
            src = out[r[0]]
            if r[1]:
                src.descriptions.append(r[1])
            src.keywords += json.loads(r[2])
            src.types += json.loads(r[3])
            src.weight += float(r[4])
            if r[5] is not None:
                src.confidence = max(src.confidence or 0.0, float(r[5]))
        return out

    def update_entity(self, entity: Entity, version: float) -> bool:
        return self.write(lambda: self._exec(
            "UPDATE entities SET name=%s, type=%s, description=%s, aliases=%s, weight=%s, dirty=FALSE "
            "WHERE id=%s AND version=%s",
            (entity.name, entity.type, entity.description, _dumps(entity.aliases), entity.weight, entity.id,
             int(version))).rowcount == 1)

    def update_relation(self, relation: Relation, version: float) -> bool:
        return self.write(lambda: self._exec(
            "UPDATE relations SET description=%s, keywords=%s, types=%s, weight=%s, confidence=%s, dirty=FALSE "
            "WHERE id=%s AND version=%s",
            (relation.description, _dumps(relation.keywords), _dumps(relation.types), relation.weight,
             relation.confidence, relation.id, int(version))).rowcount == 1)

    def mark_all_dirty(self) -> None:
        def work() -> None:
            self._exec("UPDATE entities SET dirty = TRUE, version = version + 1")
            self._exec("UPDATE relations SET dirty = TRUE, version = version + 1")

        self.write(work)

    # -- reading ------------------------------------------------------------------------

    def get_entities(self, ids: Iterable[str], sources: bool | SourceLimit = True) -> dict[str, Entity]:
        rows = self._rows(f"SELECT {_ENTITY_COLUMNS} FROM entities WHERE id = ANY(%s)", (list(dict.fromkeys(ids)),))
        out = {r[0]: _entity(r) for r in rows}
        if sources is not False:
            self._attach_sources("entity_sources", "entity_id", out, sources)
        return out

    def get_relations(self, ids: Iterable[str], sources: bool | SourceLimit = True) -> dict[str, Relation]:
        rows = self._rows(f"SELECT {_RELATION_COLUMNS} FROM relations WHERE id = ANY(%s)", (list(dict.fromkeys(ids)),))
        out = {r[0]: _relation(r) for r in rows}
        if sources is not False:
            self._attach_sources("relation_sources", "relation_id", out, sources)
        return out

    def _attach_sources(self, table: str, column: str, items: dict, limit: bool | SourceLimit) -> None:
        if not items:
            return
        if not isinstance(limit, SourceLimit):  # every source, in document order
            add_source_rows(items, self._rows(f"SELECT {column}, chunk_id, document_id FROM {table} "
                                              f"WHERE {column} = ANY(%s) ORDER BY document_id, seq", (list(items),)))
            return
        # each item's records in the preferred chunks (found through their documents), then its first
        # records in document order: index probes of (item, document_id, seq), never every record of
        # a hub stated in a hundred thousand chunks
        prefer = list(dict.fromkeys(limit.prefer))
        documents = [r[0] for r in self._rows("SELECT DISTINCT document_id FROM chunks WHERE id = ANY(%s)",
                                              (prefer,))] if prefer else []
        pending, read = list(items), max(16, 2 * limit.per_item)
        while pending:
            kept, pending = first_sources(self._rows(
                f"""SELECT i.item, s.chunk_id, s.document_id, s.seq, s.preferred
                    FROM unnest(%s::text[]) AS i(item) CROSS JOIN LATERAL (
                        (SELECT chunk_id, document_id, seq, true AS preferred FROM {table}
                         WHERE {column} = i.item AND document_id = ANY(%s) AND chunk_id = ANY(%s))
                        UNION ALL
                        (SELECT chunk_id, document_id, seq, false FROM {table}
                         WHERE {column} = i.item ORDER BY document_id, seq LIMIT %s)) s""",
                (pending, documents, prefer, read)), limit.per_item, read)
            add_source_rows(items, kept)
            read *= 8

    def chunk_counts(self, kind: GraphKind, ids: Sequence[str]) -> dict[str, int]:
        table, column = _SOURCES[_table(kind)]
        return {r[0]: int(r[1]) for r in self._rows(
            f"SELECT {column}, count(DISTINCT chunk_id) FROM {table} WHERE {column} = ANY(%s) GROUP BY {column}",
            (list(dict.fromkeys(ids)),))}

    def relation_provenance(self, ids: Sequence[str]) -> list[RelationRecord]:
        rows = self._rows(
            """SELECT s.relation_id, s.document_id, s.chunk_id, s.description, s.keywords, s.types, s.strength,
                   s.confidence, r.source_id, r.target_id, r.directed, s.sentence_no, s.level
               FROM relation_sources s JOIN relations r ON r.id = s.relation_id
               WHERE s.relation_id = ANY(%s) ORDER BY s.document_id, s.seq""", (list(ids),))
        return [RelationRecord(r[8], r[9], r[3], r[2], json.loads(r[4] or "[]"), r[6], json.loads(r[5] or "[]"),
                               bool(r[10]), r[7], id=r[0], source_id=r[8], target_id=r[9], document_id=r[1],
                               sentence=r[11], level=r[12] or "")
                for r in rows]

    def all_edges(self) -> list[tuple[str, str, str, float]]:
        return [(r[0], r[1], r[2], r[3]) for r in self._rows("SELECT id, source_id, target_id, weight FROM relations ORDER BY seq")]

    def all_entity_ids(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT id FROM entities ORDER BY id")]

    def edges_touching(self, entity_ids: Sequence[str]) -> list[tuple[str, str, str, float]]:
        ids = list(dict.fromkeys(entity_ids))
        if not ids:
            return []
        return [(r[0], r[1], r[2], r[3]) for r in self._rows(
            """SELECT id, source_id, target_id, weight FROM (
                   SELECT id, source_id, target_id, weight, seq FROM relations WHERE source_id = ANY(%s)
                   UNION SELECT id, source_id, target_id, weight, seq FROM relations WHERE target_id = ANY(%s)
               ) t ORDER BY seq""", (ids, ids))]

    def entities_in_chunks(self, chunk_ids: Sequence[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        ids = list(dict.fromkeys(chunk_ids))
        if not ids:
            return out
        for chunk_id, entity_id in self._rows(
                """SELECT DISTINCT s.chunk_id, s.entity_id FROM chunks c
                   JOIN entity_sources s ON s.document_id = c.document_id AND s.chunk_id = c.id
                   WHERE c.id = ANY(%s) ORDER BY s.chunk_id, s.entity_id""", (ids,)):
            out.setdefault(chunk_id, []).append(entity_id)
        return out

    def keywords_text(self, ids: Sequence[str]) -> dict[str, str]:
        return {r[0]: r[1] for r in self._rows("SELECT id, text FROM keywords WHERE id = ANY(%s)", (list(ids),))}

    def iter_keyword_texts(self) -> Iterator[tuple[str, str]]:
        for r in self._rows("SELECT id, text FROM keywords ORDER BY id"):
            yield r[0], r[1]

    def list_entities(self, type_: str | None = None, search: str | None = None, limit: int = 100) -> list[Entity]:
        where, params = [], []
        if type_:
            where.append("lower(e.type) = lower(%s)")
            params.append(type_)
        if search:
            where.append("e.id IN (SELECT entity_id FROM entity_sources WHERE name ILIKE %s OR name_key LIKE %s)")
            params += [f"%{_like(search)}%", f"%{_like(search.lower())}%"]
        sql = (
            f"SELECT {', '.join('e.' + c.strip() for c in _ENTITY_COLUMNS.split(','))}, "
            "(SELECT count(*) FROM relations r WHERE r.source_id = e.id OR r.target_id = e.id) AS degree "
            f"FROM entities e {'WHERE ' + ' AND '.join(where) if where else ''} "
            "ORDER BY degree DESC, e.name LIMIT %s"
        )
        out = []
        for r in self._rows(sql, [*params, limit]):
            entity = _entity(r)
            entity.degree = int(r[6])
            out.append(entity)
        docs: dict[str, set[str]] = {}
        if out:
            for r in self._rows("SELECT DISTINCT entity_id, document_id FROM entity_sources WHERE entity_id = ANY(%s)",
                                ([e.id for e in out],)):
                docs.setdefault(r[0], set()).add(r[1])
        for e in out:
            e.document_ids = sorted(docs.get(e.id, ()))
        return out

    def find_entity(self, ref: str) -> list[str]:
        if self._rows("SELECT 1 FROM entities WHERE id = %s", (ref,)):
            return [ref]
        rows = self._rows(
            "SELECT entity_id FROM entity_sources WHERE lower(name) = lower(%s) "
            "UNION SELECT id FROM entities WHERE lower(name) = lower(%s)", (ref, ref))
        return sorted(r[0] for r in rows)

    def graph_version(self) -> tuple:
        """The relations' version counter (schema v10): summed over the few rows of the backends that
        ever wrote, in one snapshot, so a commit of another worker is never half seen."""
        return (read_content_version(self._rows, "relations"),)

    def degrees(self, entity_ids: Iterable[str]) -> dict[str, int]:
        ids = list(dict.fromkeys(entity_ids))
        out = dict.fromkeys(ids, 0)
        if ids:
            rows = self._rows(
                """SELECT e, count(DISTINCT n) FROM (
                       SELECT source_id AS e, target_id AS n FROM relations WHERE source_id = ANY(%s)
                       UNION ALL
                       SELECT target_id AS e, source_id AS n FROM relations WHERE target_id = ANY(%s)
                   ) t GROUP BY e""", (ids, ids))
            out.update({r[0]: int(r[1]) for r in rows})
        return out

    def relations_touching(self, entity_ids: Sequence[str]) -> list[str]:
        ids = list(entity_ids)
        if not ids:
            return []
        return [r[0] for r in self._rows(
            "SELECT id FROM relations WHERE source_id = ANY(%s) UNION SELECT id FROM relations WHERE target_id = ANY(%s)",
            (ids, ids))]

    def relation_documents(self, relation_ids: Sequence[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {r: [] for r in relation_ids}
        for r in self._rows("SELECT DISTINCT relation_id, document_id FROM relation_sources WHERE relation_id = ANY(%s) "
                            "ORDER BY relation_id, document_id", (list(relation_ids),)):
            out[r[0]].append(r[1])
        return out

    # -- structural edits (GraphEdits) -----------------------------------------------------

    def move_entity(self, old: str, new: str) -> list[str]:
        def work() -> list[str]:
            self._exec("UPDATE entity_sources SET entity_id = %s WHERE entity_id = %s", (new, old))
            self._exec("UPDATE mentions SET entity_id = %s WHERE entity_id = %s", (new, old))
            self._exec("UPDATE local_entities SET entity_id = %s WHERE entity_id = %s", (new, old))
            self._exec("UPDATE folded_relations SET entity_id = %s WHERE entity_id = %s", (new, old))
            rels = self.relations_touching([old])
            self._exec("UPDATE relations SET source_id = %s WHERE source_id = %s", (new, old))
            self._exec("UPDATE relations SET target_id = %s WHERE target_id = %s", (new, old))
            self._exec("DELETE FROM entities WHERE id = %s", (old,))
            return rels

        return self.write(work)

    def rekey_relation(self, old: str, new: str) -> None:
        def work() -> None:
            self._exec(
                "INSERT INTO relations(id, source_id, target_id, directed, types, keywords, description, weight, "
                "confidence, dirty, version, updated_at) SELECT %s, source_id, target_id, directed, types, keywords, "
                "description, weight, confidence, TRUE, version, updated_at FROM relations WHERE id = %s "
                "ON CONFLICT (id) DO NOTHING", (new, old))
            self._exec("UPDATE relation_sources SET relation_id = %s WHERE relation_id = %s", (new, old))
            self._exec("UPDATE relations SET dirty = TRUE, version = version + 1 WHERE id = %s", (new,))
            self._exec("DELETE FROM relations WHERE id = %s", (old,))

        self.write(work)

    def delete_relations(self, ids: Sequence[str]) -> None:
        self.write(lambda: self._delete_ids("relations", list(ids)))

    def entity_name_keys(self, entity_id: str) -> list[tuple[str, str]]:
        rows = self._rows("SELECT chunk_id, name_key FROM entity_sources WHERE entity_id = %s ORDER BY seq", (entity_id,))
        return [(r[0], r[1]) for r in rows]

    def split_off(self, entity_id: str, name_key: str, new_id: str) -> None:
        def work() -> None:
            self._exec("INSERT INTO entities(id, name, type, description, aliases, weight, dirty, updated_at) "
                       "SELECT %s, name, type, '', '[]', 1.0, TRUE, updated_at FROM entities WHERE id = %s "
                       "ON CONFLICT (id) DO NOTHING", (new_id, entity_id))
            self._exec("UPDATE entity_sources SET entity_id = %s WHERE entity_id = %s AND name_key = %s",
                       (new_id, entity_id, name_key))

        self.write(work)

    def relation_record_ends(self, entity_id: str) -> list[RelationEnds]:
        rows = self._rows(
            "SELECT r.id, r.source_id, r.target_id, rs.chunk_id, rs.source_key, rs.target_key FROM relations r "
            "JOIN relation_sources rs ON rs.relation_id = r.id WHERE r.source_id = %s OR r.target_id = %s ORDER BY rs.seq",
            (entity_id, entity_id))
        return [RelationEnds(*r) for r in rows]

    def take_relation_records(self, relation_ids: Sequence[str]) -> list[RelationRecord]:
        ids = sorted(set(relation_ids))

        def work() -> list[RelationRecord]:
            rows = self._rows(
                f"SELECT r.id, r.source_id, r.target_id, r.directed, {record_columns('rs.')} FROM relation_sources rs "
                "JOIN relations r ON r.id = rs.relation_id WHERE rs.relation_id = ANY(%s) ORDER BY rs.seq", (ids,))
            self._exec("DELETE FROM relation_sources WHERE relation_id = ANY(%s)", (ids,))
            return [stored_record(tuple(r)[:4], tuple(r)[4:]) for r in rows]

        return self.write(work) if ids else []

    def take_folded(self, entity_id: str) -> list[RelationRecord]:
        def work() -> list[RelationRecord]:
            rows = self._rows(f"DELETE FROM folded_relations WHERE entity_id = %s RETURNING seq, directed, {RECORD_COLUMNS}",
                              (entity_id,))
            return [stored_record(("", entity_id, entity_id, r[1]), tuple(r)[2:]) for r in sorted(rows)]

        return self.write(work)

    def orient_relation(self, relation_id: str) -> None:
        self.write(lambda: self._exec("UPDATE relations SET source_id = target_id, target_id = source_id "
                                      "WHERE id = %s AND NOT directed "
                                      'AND source_id COLLATE "C" > target_id COLLATE "C"', (relation_id,)))

    def touch_entities(self, ids: Sequence[str]) -> None:
        self.write(lambda: self._touch("entities", list(ids)))

    def touch_relations(self, ids: Sequence[str]) -> None:
        self.write(lambda: self._touch("relations", list(ids)))


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
