"""Graph tables of the SQLite store: entities, relations, keywords and their provenance
(``GraphStore`` and ``GraphEdits``).

Every fact is stored with its source (chunk, document). Merged values (descriptions, weights,
aliases) are derived from the sources, so deleting a document only removes its sources and
rebuilds what is left (``dirty`` rows) — never a re-extraction, never a full rebuild.

Write methods run inside a unit of work (``SQLiteStore.write``); called alone they are one.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from ...models import Entity, EntityRecord, KeywordRecord, Relation, RelationRecord
from ..base import (
    RECORD_COLUMNS,
    GraphKind,
    GraphRemoval,
    RelationEnds,
    SourceDescriptions,
    SourceLimit,
    add_source_rows,
    batches,
    entity_source_rows,
    fold_apart,
    key_entities_sql,
    most_sourced,
    read_content_version,
    record_columns,
    record_placeholders,
    record_values,
    stored_record,
)

T = TypeVar("T")
_KINDS = {"entities": "entities", "relations": "relations"}
_SOURCES = {"entities": ("entity_sources", "entity_id"), "relations": ("relation_sources", "relation_id")}
KEY_ENTITIES_SQL = key_entities_sql("json_each(?) AS k")
KEY_SOURCE_COUNTS_SQL = ("SELECT name_key, entity_id, COUNT(*) AS n FROM entity_sources "
                         "WHERE name_key IN (SELECT value FROM json_each(?)) GROUP BY name_key, entity_id ORDER BY n DESC, entity_id")
VERSION_STEP = 0.000001  # added to ``updated_at`` to invalidate a rebuild in flight


def _in(ids: Sequence) -> str:
    return ",".join("?" * len(ids))


def _table(kind: GraphKind) -> str:
    try:
        return _KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown graph element kind {kind!r}") from None


def _entity(r: sqlite3.Row) -> Entity:
    return Entity(r["id"], r["name"], r["type"], r["description"], json.loads(r["aliases"]), r["weight"])


def _relation(r: sqlite3.Row) -> Relation:
    return Relation(r["id"], r["source_id"], r["target_id"], r["description"], json.loads(r["keywords"]),
                    json.loads(r["types"]), r["weight"], bool(r["directed"]), r["confidence"])


class SQLiteGraph:
    """``GraphStore`` and ``GraphEdits`` on SQLite, over the store's connections: ``rows`` reads (on
    the write connection inside a unit of work), ``wconn`` is the unit of work's connection,
    ``write`` runs a unit of work and ``delete_vectors`` drops the vectors of deleted elements."""

    def __init__(self, rows: Callable[..., list[sqlite3.Row]], wconn: Callable[[], sqlite3.Connection],
                 write: Callable[..., Any], delete_vectors: Callable[..., None]):
        self._rows = rows
        self._wconn = wconn
        self.write = write
        self.delete_vectors = delete_vectors

    # -- writing a document's records ----------------------------------------------------

    def write_entities(self, records: Sequence[EntityRecord]) -> None:
        self.write(lambda: self._write_entities(records))

    def _write_entities(self, records: Sequence[EntityRecord]) -> None:
        now = time.time()
        c = self._wconn()
        c.executemany(
            """INSERT INTO entities(id, name, type, description, aliases, dirty, updated_at) VALUES (?, ?, ?, ?, '[]', 1, ?)
               ON CONFLICT(id) DO UPDATE SET dirty = 1, updated_at = excluded.updated_at""",
            [(r.id, r.name, r.type, r.description, now) for r in records],
        )
        c.executemany(
            """INSERT INTO entity_sources(entity_id, chunk_id, document_id, name, name_key, role, type, description)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
            entity_source_rows(records),
        )

    def write_relations(self, records: Sequence[RelationRecord]) -> None:
        self.write(lambda: self._write_relations(records))

    def _write_relations(self, records: Sequence[RelationRecord]) -> None:
        now = time.time()
        c = self._wconn()
        records, folded = fold_apart(records)
        c.executemany(
            """INSERT INTO relations(id, source_id, target_id, directed, description, dirty, updated_at)
               VALUES (?, ?, ?, ?, ?, 1, ?) ON CONFLICT(id) DO UPDATE SET dirty = 1, updated_at = excluded.updated_at""",
            [(r.id, r.source_id, r.target_id, int(r.directed), r.description, now) for r in records],
        )
        c.executemany(f"INSERT INTO relation_sources(relation_id, {RECORD_COLUMNS}) VALUES (?, {record_placeholders('?')})",
                      [(r.id, *record_values(r, json.dumps)) for r in records])
        c.executemany(f"INSERT INTO folded_relations(entity_id, directed, {RECORD_COLUMNS}) VALUES (?, ?, {record_placeholders('?')})",
                      [(r.source_id, int(r.directed), *record_values(r, json.dumps)) for r in folded])

    def write_keywords(self, records: Sequence[KeywordRecord]) -> list[str]:
        return self.write(lambda: self._write_keywords(records))

    def _write_keywords(self, records: Sequence[KeywordRecord]) -> list[str]:
        ids = list(dict.fromkeys(r.id for r in records))
        existing: set[str] = set()
        for part in batches(ids):
            existing.update(r[0] for r in self._rows(f"SELECT id FROM keywords WHERE id IN ({_in(part)})", part))
        c = self._wconn()
        c.executemany("INSERT OR IGNORE INTO keywords(id, text) VALUES (?, ?)", [(r.id, r.text) for r in records])
        c.executemany(
            "INSERT OR IGNORE INTO keyword_sources(keyword_id, chunk_id, document_id) VALUES (?, ?, ?)",
            [(r.id, r.chunk_id, r.document_id) for r in records],
        )
        return [i for i in ids if i not in existing]

    def entities_by_keys(self, keys: Sequence[str]) -> dict[str, str]:
        keys = list(dict.fromkeys(keys))
        if not keys:
            return {}
        return most_sourced(keys, self._rows(KEY_ENTITIES_SQL, (json.dumps(keys),)),
                            lambda shared: self._rows(KEY_SOURCE_COUNTS_SQL, (json.dumps(shared),)))

    def delete_graph_of(self, doc_id: str) -> GraphRemoval:
        return self.write(lambda: self._delete_graph_of(doc_id))

    def _delete_graph_of(self, doc_id: str) -> GraphRemoval:
        c = self._wconn()
        touched = {
            "entity": self._ids_of_document("entity_sources", "entity_id", doc_id),
            "relation": self._ids_of_document("relation_sources", "relation_id", doc_id),
            "keyword": self._ids_of_document("keyword_sources", "keyword_id", doc_id),
        }
        for table in ("entity_sources", "relation_sources", "keyword_sources", "mentions", "sentences",
                      "local_entities", "local_relations", "chunk_failures", "folded_relations"):
            c.execute(f"DELETE FROM {table} WHERE document_id = ?", (doc_id,))
        gone = GraphRemoval(
            entity=self._orphans("entity_sources", "entity_id", touched["entity"]),
            relation=self._orphans("relation_sources", "relation_id", touched["relation"]),
            keyword=self._orphans("keyword_sources", "keyword_id", touched["keyword"]),
        )
        gone.relation = sorted(set(gone.relation) | set(self.relations_touching(gone.entity)))
        self._delete_ids("relations", gone.relation)
        self._delete_ids("entities", gone.entity)
        self._delete_ids("keywords", gone.keyword)
        self._mark_dirty("entities", sorted(set(touched["entity"]) - set(gone.entity)))
        self._mark_dirty("relations", sorted(set(touched["relation"]) - set(gone.relation)))
        return gone

    def _ids_of_document(self, table: str, column: str, doc_id: str) -> list[str]:
        return [r[0] for r in self._rows(f"SELECT DISTINCT {column} FROM {table} WHERE document_id = ?", (doc_id,))]

    def _orphans(self, sources: str, column: str, ids: Sequence[str]) -> list[str]:
        orphans = []
        for part in batches(ids):
            alive = {r[0] for r in self._rows(f"SELECT DISTINCT {column} FROM {sources} WHERE {column} IN ({_in(part)})", part)}
            orphans += [x for x in part if x not in alive]
        return orphans

    def _delete_ids(self, table: str, ids: Sequence[str]) -> None:
        for part in batches(ids):
            self._wconn().execute(f"DELETE FROM {table} WHERE id IN ({_in(part)})", part)

    def _mark_dirty(self, table: str, ids: Sequence[str]) -> None:
        self._wconn().executemany(f"UPDATE {table} SET dirty = 1 WHERE id = ?", [(i,) for i in ids])

    # -- rebuilding merged values ---------------------------------------------------------

    def dirty_ids(self, kind: GraphKind, limit: int | None = None) -> list[str]:
        sql = f"SELECT id FROM {_table(kind)} WHERE dirty = 1 ORDER BY id" + (f" LIMIT {int(limit)}" if limit else "")
        return [r[0] for r in self._rows(sql)]

    def versions(self, kind: GraphKind, ids: Sequence[str]) -> dict[str, float]:
        out: dict[str, float] = {}
        for part in batches(ids):
            rows = self._rows(f"SELECT id, updated_at FROM {_table(kind)} WHERE id IN ({_in(part)})", part)
            out.update({r[0]: r[1] for r in rows})
        return out

    def entity_sources(self, ids: Sequence[str]) -> dict[str, SourceDescriptions]:
        out = {i: SourceDescriptions(i, [], [], [], 0.0, [], None) for i in ids}
        for part in batches(ids):
            rows = self._rows(
                f"SELECT entity_id, name, type, description, role, name_key FROM entity_sources WHERE entity_id IN ({_in(part)}) "
                "ORDER BY document_id, rowid",  # merged values must not depend on arrival order
                part,
            )
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
        for part in batches(ids):
            rows = self._rows(
                f"""SELECT relation_id, description, keywords, types, strength, confidence FROM relation_sources
                    WHERE relation_id IN ({_in(part)}) ORDER BY document_id, rowid""",
                part,
            )
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
        return self.write(lambda: self._wconn().execute(
            "UPDATE entities SET name=?, type=?, description=?, aliases=?, weight=?, dirty=0 WHERE id=? AND updated_at=?",
            (entity.name, entity.type, entity.description, json.dumps(entity.aliases, ensure_ascii=False), entity.weight,
             entity.id, version),
        ).rowcount == 1)

    def update_relation(self, relation: Relation, version: float) -> bool:
        return self.write(lambda: self._wconn().execute(
            "UPDATE relations SET description=?, keywords=?, types=?, weight=?, confidence=?, dirty=0 WHERE id=? AND updated_at=?",
            (relation.description, json.dumps(relation.keywords, ensure_ascii=False),
             json.dumps(relation.types, ensure_ascii=False), relation.weight, relation.confidence, relation.id, version),
        ).rowcount == 1)

    def mark_all_dirty(self) -> None:
        def work() -> None:
            c = self._wconn()
            c.execute("UPDATE entities SET dirty = 1, updated_at = updated_at + ?", (VERSION_STEP,))
            c.execute("UPDATE relations SET dirty = 1, updated_at = updated_at + ?", (VERSION_STEP,))

        self.write(work)

    # -- reading ------------------------------------------------------------------------

    def get_entities(self, ids: Iterable[str], sources: bool | SourceLimit = True) -> dict[str, Entity]:
        ids = list(dict.fromkeys(ids))
        out: dict[str, Entity] = {}
        for part in batches(ids):
            out.update((r["id"], _entity(r)) for r in self._rows(f"SELECT * FROM entities WHERE id IN ({_in(part)})", part))
        if sources is not False:
            self._attach_sources("entity_sources", "entity_id", out, sources)
        return out

    def get_relations(self, ids: Iterable[str], sources: bool | SourceLimit = True) -> dict[str, Relation]:
        ids = list(dict.fromkeys(ids))
        out: dict[str, Relation] = {}
        for part in batches(ids):
            out.update((r["id"], _relation(r)) for r in self._rows(f"SELECT * FROM relations WHERE id IN ({_in(part)})", part))
        if sources is not False:
            self._attach_sources("relation_sources", "relation_id", out, sources)
        return out

    def _attach_sources(self, table: str, column: str, items: dict, limit: bool | SourceLimit) -> None:
        for part in batches(list(items)):
            if not isinstance(limit, SourceLimit):  # every source, in document order
                add_source_rows(items, self._rows(
                    f"SELECT {column}, chunk_id, document_id FROM {table} WHERE {column} IN ({_in(part)}) "
                    "ORDER BY document_id, rowid", part))
                continue
            # each item's distinct chunks, the preferred first, numbered in the database: only the first
            # ``per_item`` of each item come back
            prefer = list(dict.fromkeys(limit.prefer))
            preferred = f"chunk_id IN ({_in(prefer)})" if prefer else "0"
            add_source_rows(items, self._rows(
                f"""SELECT item, chunk_id, document_id FROM (
                        SELECT item, chunk_id, document_id, row_number() OVER (
                            PARTITION BY item ORDER BY {preferred} DESC, document_id, first) AS n
                        FROM (SELECT {column} AS item, chunk_id, document_id, min(rowid) AS first FROM {table}
                              WHERE {column} IN ({_in(part)}) GROUP BY {column}, chunk_id, document_id)
                    ) WHERE n <= ? ORDER BY item, n""", [*prefer, *part, limit.per_item]))

    def chunk_counts(self, kind: GraphKind, ids: Sequence[str]) -> dict[str, int]:
        table, column = _SOURCES[_table(kind)]
        out: dict[str, int] = {}
        for part in batches(list(dict.fromkeys(ids))):
            out.update((r[0], int(r[1])) for r in self._rows(
                f"SELECT {column}, count(DISTINCT chunk_id) FROM {table} WHERE {column} IN ({_in(part)}) GROUP BY {column}",
                part))
        return out

    def relation_provenance(self, ids: Sequence[str]) -> list[RelationRecord]:
        out: list[RelationRecord] = []
        for part in batches(list(ids), 400):
            rows = self._rows(
                f"""SELECT s.relation_id, s.document_id, s.chunk_id, s.description, s.keywords, s.types, s.strength,
                        s.confidence, r.source_id, r.target_id, r.directed, s.sentence_no, s.level
                    FROM relation_sources s JOIN relations r ON r.id = s.relation_id
                    WHERE s.relation_id IN ({_in(part)}) ORDER BY s.document_id, s.rowid""",
                part,
            )
            out += [RelationRecord(r[8], r[9], r[3], r[2], json.loads(r[4] or "[]"), r[6], json.loads(r[5] or "[]"),
                                   bool(r[10]), r[7], id=r[0], source_id=r[8], target_id=r[9], document_id=r[1],
                                   sentence=r[11], level=r[12] or "")
                    for r in rows]
        return out

    def all_edges(self) -> list[tuple[str, str, str, float]]:
        return [(r[0], r[1], r[2], r[3]) for r in self._rows("SELECT id, source_id, target_id, weight FROM relations")]

    def all_entity_ids(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT id FROM entities")]

    def edges_touching(self, entity_ids: Sequence[str]) -> list[tuple[str, str, str, float]]:
        rows: dict[int, tuple[str, str, str, float]] = {}
        ids = list(dict.fromkeys(entity_ids))
        for part in batches(ids, 400):
            for end in ("source_id", "target_id"):
                for r in self._rows(f"SELECT rowid, id, source_id, target_id, weight FROM relations "
                                    f"WHERE {end} IN ({_in(part)})", part):
                    rows[r[0]] = (r[1], r[2], r[3], r[4])
        return [rows[k] for k in sorted(rows)]  # the order of all_edges

    def entities_in_chunks(self, chunk_ids: Sequence[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for part in batches(list(dict.fromkeys(chunk_ids)), 400):
            rows = self._rows(
                f"""SELECT DISTINCT s.chunk_id, s.entity_id FROM chunks c
                    JOIN entity_sources s ON s.document_id = c.document_id AND s.chunk_id = c.id
                    WHERE c.id IN ({_in(part)}) ORDER BY s.chunk_id, s.entity_id""", part)
            for chunk_id, entity_id in rows:
                out.setdefault(chunk_id, []).append(entity_id)
        return out

    def keywords_text(self, ids: Sequence[str]) -> dict[str, str]:
        out = {}
        for part in batches(ids):
            out.update({r[0]: r[1] for r in self._rows(f"SELECT id, text FROM keywords WHERE id IN ({_in(part)})", part)})
        return out

    def iter_keyword_texts(self) -> Iterator[tuple[str, str]]:
        for r in self._rows("SELECT id, text FROM keywords"):
            yield r[0], r[1]

    def list_entities(self, type_: str | None = None, search: str | None = None, limit: int = 100) -> list[Entity]:
        where, params = [], []
        if type_:
            where.append("e.type = ? COLLATE NOCASE")
            params.append(type_)
        if search:
            # the search is literal text: LIKE's own wildcards (% _) and the escape are escaped
            where.append("e.id IN (SELECT entity_id FROM entity_sources "
                         "WHERE name LIKE ? ESCAPE '\\' OR name_key LIKE ? ESCAPE '\\')")
            params += [f"%{_like_literal(search)}%", f"%{_like_literal(search.lower())}%"]
        sql = (
            "SELECT e.*, (SELECT COUNT(*) FROM relations r WHERE r.source_id = e.id OR r.target_id = e.id) AS degree "
            f"FROM entities e {'WHERE ' + ' AND '.join(where) if where else ''} ORDER BY degree DESC, e.name LIMIT ?"
        )
        out = []
        for r in self._rows(sql, [*params, limit]):
            entity = _entity(r)
            entity.degree = r["degree"]
            out.append(entity)
        docs: dict[str, set[str]] = {}
        for part in batches([e.id for e in out]):
            for r in self._rows(
                    f"SELECT DISTINCT entity_id, document_id FROM entity_sources WHERE entity_id IN ({_in(part)})", part):
                docs.setdefault(r[0], set()).add(r[1])
        for e in out:
            e.document_ids = sorted(docs.get(e.id, ()))
        return out

    def find_entity(self, ref: str) -> list[str]:
        if self._rows("SELECT 1 FROM entities WHERE id = ?", (ref,)):
            return [ref]
        rows = self._rows(
            "SELECT DISTINCT entity_id FROM entity_sources WHERE name = ? COLLATE NOCASE "
            "UNION SELECT id FROM entities WHERE name = ? COLLATE NOCASE", (ref, ref))
        return sorted(r[0] for r in rows)

    def graph_version(self) -> tuple:
        """The relations' version counter (schema v10), raised by triggers: one row read."""
        return (read_content_version(self._rows, "relations"),)

    def degrees(self, entity_ids: Iterable[str]) -> dict[str, int]:
        ids = list(dict.fromkeys(entity_ids))
        out = dict.fromkeys(ids, 0)
        for part in batches(ids, 400):
            rows = self._rows(
                f"""SELECT e, COUNT(DISTINCT n) FROM (
                        SELECT source_id AS e, target_id AS n FROM relations WHERE source_id IN ({_in(part)})
                        UNION ALL
                        SELECT target_id AS e, source_id AS n FROM relations WHERE target_id IN ({_in(part)})
                    ) GROUP BY e""",
                part + part,
            )
            out.update({r[0]: int(r[1]) for r in rows})
        return out

    def relations_touching(self, entity_ids: Sequence[str]) -> list[str]:
        out: list[str] = []
        for part in batches(entity_ids, 400):
            out += [r[0] for r in self._rows(
                f"SELECT id FROM relations WHERE source_id IN ({_in(part)}) OR target_id IN ({_in(part)})", part + part)]
        return out

    def relation_documents(self, relation_ids: Sequence[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {r: [] for r in relation_ids}
        for part in batches(list(relation_ids), 400):
            for r in self._rows(
                    f"SELECT DISTINCT relation_id, document_id FROM relation_sources WHERE relation_id IN ({_in(part)})",
                    part):
                out[r[0]].append(r[1])
        return out

    # -- structural edits (GraphEdits) -----------------------------------------------------

    def move_entity(self, old: str, new: str) -> list[str]:
        def work() -> list[str]:
            c = self._wconn()
            c.execute("UPDATE entity_sources SET entity_id = ? WHERE entity_id = ?", (new, old))
            c.execute("UPDATE mentions SET entity_id = ? WHERE entity_id = ?", (new, old))
            c.execute("UPDATE local_entities SET entity_id = ? WHERE entity_id = ?", (new, old))
            c.execute("UPDATE folded_relations SET entity_id = ? WHERE entity_id = ?", (new, old))
            rels = self.relations_touching([old])
            c.execute("UPDATE relations SET source_id = ? WHERE source_id = ?", (new, old))
            c.execute("UPDATE relations SET target_id = ? WHERE target_id = ?", (new, old))
            c.execute("DELETE FROM entities WHERE id = ?", (old,))
            return rels

        return self.write(work)

    def rekey_relation(self, old: str, new: str) -> None:
        def work() -> None:
            c = self._wconn()
            if not self._rows("SELECT 1 FROM relations WHERE id = ?", (new,)):
                c.execute(
                    "INSERT INTO relations(id, source_id, target_id, directed, types, keywords, description, weight, "
                    "confidence, dirty, updated_at) SELECT ?, source_id, target_id, directed, types, keywords, "
                    "description, weight, confidence, 1, updated_at FROM relations WHERE id = ?", (new, old))
            c.execute("UPDATE relation_sources SET relation_id = ? WHERE relation_id = ?", (new, old))
            c.execute("UPDATE relations SET dirty = 1, updated_at = updated_at + ? WHERE id = ?", (VERSION_STEP, new))
            c.execute("DELETE FROM relations WHERE id = ?", (old,))

        self.write(work)

    def delete_relations(self, ids: Sequence[str]) -> None:
        self.write(lambda: self._delete_ids("relations", list(ids)))

    def entity_name_keys(self, entity_id: str) -> list[tuple[str, str]]:
        rows = self._rows("SELECT chunk_id, name_key FROM entity_sources WHERE entity_id = ? ORDER BY rowid", (entity_id,))
        return [(r[0], r[1]) for r in rows]

    def split_off(self, entity_id: str, name_key: str, new_id: str) -> None:
        def work() -> None:
            c = self._wconn()
            c.execute("INSERT OR IGNORE INTO entities(id, name, type, description, aliases, weight, dirty, updated_at) "
                      "SELECT ?, name, type, '', '[]', 1.0, 1, updated_at FROM entities WHERE id = ?", (new_id, entity_id))
            c.execute("UPDATE entity_sources SET entity_id = ? WHERE entity_id = ? AND name_key = ?",
                      (new_id, entity_id, name_key))

        self.write(work)

    def relation_record_ends(self, entity_id: str) -> list[RelationEnds]:
        rows = self._rows(
            "SELECT r.id, r.source_id, r.target_id, rs.chunk_id, rs.source_key, rs.target_key FROM relations r "
            "JOIN relation_sources rs ON rs.relation_id = r.id WHERE r.source_id = ? OR r.target_id = ? ORDER BY rs.rowid",
            (entity_id, entity_id))
        return [RelationEnds(*r) for r in rows]

    def take_relation_records(self, relation_ids: Sequence[str]) -> list[RelationRecord]:
        def work() -> list[RelationRecord]:
            out: list[RelationRecord] = []
            for part in batches(list(dict.fromkeys(relation_ids))):
                rows = self._rows(
                    f"SELECT r.id, r.source_id, r.target_id, r.directed, {record_columns('rs.')} FROM relation_sources rs "
                    f"JOIN relations r ON r.id = rs.relation_id WHERE rs.relation_id IN ({_in(part)}) ORDER BY rs.rowid",
                    part)
                out += [stored_record(tuple(r)[:4], tuple(r)[4:]) for r in rows]
                self._wconn().execute(f"DELETE FROM relation_sources WHERE relation_id IN ({_in(part)})", part)
            return out

        return self.write(work)

    def take_folded(self, entity_id: str) -> list[RelationRecord]:
        def work() -> list[RelationRecord]:
            rows = self._rows(f"SELECT directed, {RECORD_COLUMNS} FROM folded_relations WHERE entity_id = ? ORDER BY rowid",
                              (entity_id,))
            self._wconn().execute("DELETE FROM folded_relations WHERE entity_id = ?", (entity_id,))
            return [stored_record(("", entity_id, entity_id, r[0]), tuple(r)[1:]) for r in rows]

        return self.write(work)

    def orient_relation(self, relation_id: str) -> None:
        self.write(lambda: self._wconn().execute(
            "UPDATE relations SET source_id = target_id, target_id = source_id "
            "WHERE id = ? AND directed = 0 AND source_id > target_id", (relation_id,)))

    def touch_entities(self, ids: Sequence[str]) -> None:
        self._touch("entities", ids)

    def touch_relations(self, ids: Sequence[str]) -> None:
        self._touch("relations", ids)

    def _touch(self, table: str, ids: Sequence[str]) -> None:
        self.write(lambda: self._wconn().executemany(
            f"UPDATE {table} SET dirty = 1, updated_at = updated_at + ? WHERE id = ?", [(VERSION_STEP, e) for e in ids]))


def _like_literal(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
