"""Graph tables of the SQLite store: entities, relations, keywords and their provenance.

Every fact is stored with its source (chunk, document). Merged values (descriptions, weights,
aliases) are derived from the sources, so deleting a document only removes its sources and
rebuilds what is left (``dirty`` rows) — never a re-extraction, never a full rebuild.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .base import StoredEntity, StoredRelation, batches


@dataclass
class EntityWrite:
    id: str
    name: str
    key: str
    type: str
    description: str
    chunk_id: str
    document_id: str
    aliases: Sequence[tuple[str, str]] = ()  # (alias, alias key)


@dataclass
class RelationWrite:
    id: str
    source_id: str
    target_id: str
    description: str
    chunk_id: str
    document_id: str
    keywords: Sequence[str] = ()
    types: Sequence[str] = ()
    strength: float = 1.0
    directed: bool = False
    confidence: float | None = None


@dataclass
class KeywordWrite:
    id: str
    text: str
    chunk_id: str
    document_id: str


@dataclass
class SourceDescriptions:
    """What a dirty row is rebuilt from."""

    id: str
    names: list[str]
    types: list[str]
    descriptions: list[str]
    weight: float
    keywords: list[str]
    confidence: float | None
    roles: list[str] = field(default_factory=list)  # parallel to names (entities only)


def _in(ids: Sequence[str]) -> str:
    return ",".join("?" * len(ids))


class GraphTables:
    conn: sqlite3.Connection

    # write paths run inside the caller's transaction (SQLiteStore.transaction)

    def write_entities(self, rows: Sequence[EntityWrite]) -> None:
        now = time.time()
        self.conn.executemany(
            """INSERT INTO entities(id, name, type, description, aliases, dirty, updated_at) VALUES (?, ?, ?, ?, '[]', 1, ?)
               ON CONFLICT(id) DO UPDATE SET dirty = 1, updated_at = excluded.updated_at""",
            [(r.id, r.name, r.type, r.description, now) for r in rows],
        )
        self.conn.executemany(
            """INSERT INTO entity_sources(entity_id, chunk_id, document_id, name, name_key, role, type, description)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
            [(r.id, r.chunk_id, r.document_id, r.name, r.key, "canonical" if r.aliases else "name", r.type, r.description)
             for r in rows]
            + [(r.id, r.chunk_id, r.document_id, a, k, "alias", r.type, "") for r in rows for a, k in r.aliases],
        )

    def entities_by_keys(self, keys: Sequence[str]) -> dict[str, str]:
        """name key -> entity id, for keys some stored entity is already known by."""
        out: dict[str, str] = {}
        keys = list(dict.fromkeys(keys))
        for part in batches(keys):
            rows = self.conn.execute(
                f"SELECT name_key, entity_id, COUNT(*) AS n FROM entity_sources WHERE name_key IN ({_in(part)}) "
                "GROUP BY name_key, entity_id ORDER BY n DESC, entity_id",
                part,
            )
            for r in rows:
                out.setdefault(r[0], r[1])
        return out

    def write_relations(self, rows: Sequence[RelationWrite]) -> None:
        now = time.time()
        self.conn.executemany(
            """INSERT INTO relations(id, source_id, target_id, directed, description, dirty, updated_at)
               VALUES (?, ?, ?, ?, ?, 1, ?) ON CONFLICT(id) DO UPDATE SET dirty = 1, updated_at = excluded.updated_at""",
            [(r.id, r.source_id, r.target_id, int(r.directed), r.description, now) for r in rows],
        )
        self.conn.executemany(
            """INSERT INTO relation_sources(relation_id, chunk_id, document_id, description, keywords, types, strength,
                   confidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
            [(r.id, r.chunk_id, r.document_id, r.description, json.dumps(list(r.keywords)), json.dumps(list(r.types)),
              r.strength, r.confidence) for r in rows],
        )

    def write_keywords(self, rows: Sequence[KeywordWrite]) -> list[str]:
        """Returns the ids of keywords that did not exist before (they need vectors)."""
        ids = list(dict.fromkeys(r.id for r in rows))
        existing = set()
        for part in batches(ids):
            existing.update(r[0] for r in self.conn.execute(f"SELECT id FROM keywords WHERE id IN ({_in(part)})", part))
        self.conn.executemany("INSERT OR IGNORE INTO keywords(id, text) VALUES (?, ?)", [(r.id, r.text) for r in rows])
        self.conn.executemany(
            "INSERT OR IGNORE INTO keyword_sources(keyword_id, chunk_id, document_id) VALUES (?, ?, ?)",
            [(r.id, r.chunk_id, r.document_id) for r in rows],
        )
        return [i for i in ids if i not in existing]

    def delete_graph_of(self, doc_id: str) -> dict[str, list[str]]:
        """Drop a document's provenance; returns the ids of rows that disappeared, per namespace."""
        c = self.conn
        touched = {
            "entity": self._ids_of_document("entity_sources", "entity_id", doc_id),
            "relation": self._ids_of_document("relation_sources", "relation_id", doc_id),
            "keyword": self._ids_of_document("keyword_sources", "keyword_id", doc_id),
        }
        for table in ("entity_sources", "relation_sources", "keyword_sources", "mentions", "extraction_failures"):
            c.execute(f"DELETE FROM {table} WHERE document_id = ?", (doc_id,))
        gone = {
            "entity": self._orphans("entity_sources", "entity_id", touched["entity"]),
            "relation": self._orphans("relation_sources", "relation_id", touched["relation"]),
            "keyword": self._orphans("keyword_sources", "keyword_id", touched["keyword"]),
        }
        gone["relation"] = sorted(set(gone["relation"]) | set(self._relations_touching(gone["entity"])))
        self._delete_ids("relations", gone["relation"])
        self._delete_ids("entities", gone["entity"])
        self._delete_ids("keywords", gone["keyword"])
        self._mark_dirty("entities", sorted(set(touched["entity"]) - set(gone["entity"])))
        self._mark_dirty("relations", sorted(set(touched["relation"]) - set(gone["relation"])))
        return gone

    def _ids_of_document(self, table: str, column: str, doc_id: str) -> list[str]:
        return [r[0] for r in self.conn.execute(f"SELECT DISTINCT {column} FROM {table} WHERE document_id = ?", (doc_id,))]

    def _orphans(self, sources: str, column: str, ids: Sequence[str]) -> list[str]:
        orphans = []
        for part in batches(ids):
            alive = {r[0] for r in self.conn.execute(f"SELECT DISTINCT {column} FROM {sources} WHERE {column} IN ({_in(part)})", part)}
            orphans += [x for x in part if x not in alive]
        return orphans

    def _relations_touching(self, entity_ids: Sequence[str]) -> list[str]:
        out = []
        for part in batches(entity_ids, 400):
            out += [r[0] for r in self.conn.execute(
                f"SELECT id FROM relations WHERE source_id IN ({_in(part)}) OR target_id IN ({_in(part)})", part + part)]
        return out

    def _delete_ids(self, table: str, ids: Sequence[str]) -> None:
        for part in batches(ids):
            self.conn.execute(f"DELETE FROM {table} WHERE id IN ({_in(part)})", part)

    def _mark_dirty(self, table: str, ids: Sequence[str]) -> None:
        self.conn.executemany(f"UPDATE {table} SET dirty = 1 WHERE id = ?", [(i,) for i in ids])

    # -- rebuilding merged values ---------------------------------------------------------

    def dirty_ids(self, table: str, limit: int | None = None) -> list[str]:
        sql = f"SELECT id FROM {table} WHERE dirty = 1 ORDER BY id" + (f" LIMIT {int(limit)}" if limit else "")
        return [r[0] for r in self.conn.execute(sql)]

    def entity_sources(self, ids: Sequence[str]) -> dict[str, SourceDescriptions]:
        out = {i: SourceDescriptions(i, [], [], [], 0.0, [], None) for i in ids}
        for part in batches(ids):
            rows = self.conn.execute(
                f"SELECT entity_id, name, type, description, role FROM entity_sources WHERE entity_id IN ({_in(part)}) "
                "ORDER BY document_id, rowid",  # merged values must not depend on arrival order
                part,
            )
            for r in rows:
                src = out[r[0]]
                src.names.append(r[1])
                src.roles.append(r[4])
                if r[2]:
                    src.types.append(r[2])
                if r[3]:
                    src.descriptions.append(r[3])
                    src.weight += 1
        return out

    def relation_sources(self, ids: Sequence[str]) -> dict[str, SourceDescriptions]:
        out = {i: SourceDescriptions(i, [], [], [], 0.0, [], None) for i in ids}
        for part in batches(ids):
            rows = self.conn.execute(
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

    def versions(self, table: str, ids: Sequence[str]) -> dict[str, float]:
        """updated_at per row: a rebuild only lands if no new source arrived meanwhile."""
        out: dict[str, float] = {}
        for part in batches(ids):
            out.update({r[0]: r[1] for r in self.conn.execute(f"SELECT id, updated_at FROM {table} WHERE id IN ({_in(part)})", part)})
        return out

    def update_entity(self, entity_id: str, version: float, name: str, type_: str, description: str, aliases: list[str],
                      weight: float) -> bool:
        cur = self.conn.execute(
            "UPDATE entities SET name=?, type=?, description=?, aliases=?, weight=?, dirty=0 WHERE id=? AND updated_at=?",
            (name, type_, description, json.dumps(aliases, ensure_ascii=False), weight, entity_id, version),
        )
        return cur.rowcount == 1

    def update_relation(self, relation_id: str, version: float, description: str, keywords: list[str], types: list[str],
                        weight: float, confidence: float | None) -> bool:
        cur = self.conn.execute(
            "UPDATE relations SET description=?, keywords=?, types=?, weight=?, confidence=?, dirty=0 WHERE id=? AND updated_at=?",
            (description, json.dumps(keywords, ensure_ascii=False), json.dumps(types, ensure_ascii=False), weight,
             confidence, relation_id, version),
        )
        return cur.rowcount == 1

    # -- reading ------------------------------------------------------------------------

    def get_entities(self, ids: Iterable[str]) -> dict[str, StoredEntity]:
        ids = list(dict.fromkeys(ids))
        out: dict[str, StoredEntity] = {}
        for part in batches(ids):
            for r in self.conn.execute(f"SELECT * FROM entities WHERE id IN ({_in(part)})", part):
                out[r["id"]] = StoredEntity(r["id"], r["name"], r["type"], r["description"], json.loads(r["aliases"]),
                                            r["weight"], [], [])
        self._attach_sources("entity_sources", "entity_id", out)
        return out

    def get_relations(self, ids: Iterable[str]) -> dict[str, StoredRelation]:
        ids = list(dict.fromkeys(ids))
        out: dict[str, StoredRelation] = {}
        for part in batches(ids):
            for r in self.conn.execute(f"SELECT * FROM relations WHERE id IN ({_in(part)})", part):
                out[r["id"]] = StoredRelation(
                    r["id"], r["source_id"], r["target_id"], r["description"], json.loads(r["keywords"]),
                    json.loads(r["types"]), r["weight"], bool(r["directed"]), r["confidence"], [], [])
        self._attach_sources("relation_sources", "relation_id", out)
        return out

    def _attach_sources(self, table: str, column: str, items: dict) -> None:
        ids = list(items)
        for part in batches(ids):
            rows = self.conn.execute(
                f"SELECT DISTINCT {column}, chunk_id, document_id FROM {table} WHERE {column} IN ({_in(part)}) "
                "ORDER BY document_id, rowid",
                part,
            )
            for r in rows:
                item = items[r[0]]
                if r[1] not in item.chunk_ids:
                    item.chunk_ids.append(r[1])
                if r[2] not in item.document_ids:
                    item.document_ids.append(r[2])

    def all_edges(self) -> list[tuple[str, str, str, float]]:
        """(relation id, source, target, weight) for loading the in-memory graph."""
        return [(r[0], r[1], r[2], r[3]) for r in self.conn.execute("SELECT id, source_id, target_id, weight FROM relations")]

    def all_entity_ids(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT id FROM entities")]

    def keywords_text(self, ids: Sequence[str]) -> dict[str, str]:
        out = {}
        for part in batches(ids):
            out.update({r[0]: r[1] for r in self.conn.execute(f"SELECT id, text FROM keywords WHERE id IN ({_in(part)})", part)})
        return out

    def entity_type_counts(self) -> Counter:
        return Counter({r[0]: r[1] for r in self.conn.execute("SELECT type, COUNT(*) FROM entities GROUP BY type")})

    def list_entities(self, type_: str | None = None, search: str | None = None, limit: int = 100) -> list[dict]:
        """Entities with degree and source documents; ``search`` matches names and aliases."""
        where, params = [], []
        if type_:
            where.append("e.type = ? COLLATE NOCASE")
            params.append(type_)
        if search:
            where.append("e.id IN (SELECT entity_id FROM entity_sources WHERE name LIKE ? OR name_key LIKE ?)")
            params += [f"%{search}%", f"%{search.lower()}%"]
        sql = (
            "SELECT e.id, e.name, e.type, e.description, e.aliases, e.weight, "
            "(SELECT COUNT(*) FROM relations r WHERE r.source_id = e.id OR r.target_id = e.id) AS degree "
            f"FROM entities e {'WHERE ' + ' AND '.join(where) if where else ''} ORDER BY degree DESC, e.name LIMIT ?"
        )
        rows = self.conn.execute(sql, [*params, limit]).fetchall()
        docs: dict[str, list[str]] = {}
        ids = [r[0] for r in rows]
        for part in batches(ids):
            for r in self.conn.execute(
                f"SELECT DISTINCT entity_id, document_id FROM entity_sources WHERE entity_id IN ({_in(part)})", part):
                docs.setdefault(r[0], []).append(r[1])
        return [{"id": r[0], "name": r[1], "type": r[2], "description": r[3], "aliases": json.loads(r[4]),
                 "weight": r[5], "degree": r[6], "documents": sorted(docs.get(r[0], []))} for r in rows]

    def find_entity(self, ref: str) -> list[str]:
        """Entity ids for an id, exact name or alias (case-insensitive)."""
        if self.conn.execute("SELECT 1 FROM entities WHERE id = ?", (ref,)).fetchone():
            return [ref]
        rows = self.conn.execute(
            "SELECT DISTINCT entity_id FROM entity_sources WHERE name = ? COLLATE NOCASE "
            "UNION SELECT id FROM entities WHERE name = ? COLLATE NOCASE", (ref, ref)).fetchall()
        return sorted(r[0] for r in rows)
