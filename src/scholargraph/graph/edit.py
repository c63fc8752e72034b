"""Structural edits of the stored graph: merge entities (resolution, `entities --merge`) and split
an entity back into one entity per name it was known by (`entities --split`, the escape hatch).

Both run inside one transaction, move provenance rows rather than text, re-key the relations
whose endpoints changed (two relations that become the same edge merge), and mark every
touched row dirty so the refresher rebuilds descriptions and vectors. Later documents resolve
against the edited graph, because resolution looks names up in the moved provenance rows.
"""

from __future__ import annotations

from collections import Counter

from ..store.sqlite import SQLiteStore
from .merge import entity_id_for, relation_id_for


def _rekey_relations(store: SQLiteStore, relation_ids: list[str]) -> list[str]:
    """Give relations the ids their (possibly new) endpoints imply; merge ones that collide.
    Returns the relation ids that stopped existing (their vectors must go)."""
    conn = store.conn
    gone: list[str] = []
    for rid in relation_ids:
        row = conn.execute("SELECT source_id, target_id, directed FROM relations WHERE id = ?", (rid,)).fetchone()
        if row is None:
            continue
        src, tgt, directed = row
        if src == tgt:  # the two ends were merged: the relation is a self-loop, drop it
            conn.execute("DELETE FROM relations WHERE id = ?", (rid,))
            gone.append(rid)
            continue
        new_id = relation_id_for(src, tgt, bool(directed))
        if new_id == rid:
            continue
        exists = conn.execute("SELECT 1 FROM relations WHERE id = ?", (new_id,)).fetchone()
        if not exists:
            conn.execute(
                "INSERT INTO relations(id, source_id, target_id, directed, types, keywords, description, weight, "
                "confidence, dirty, updated_at) SELECT ?, source_id, target_id, directed, types, keywords, description, "
                "weight, confidence, 1, updated_at FROM relations WHERE id = ?", (new_id, rid))
        conn.execute("UPDATE relation_sources SET relation_id = ? WHERE relation_id = ?", (new_id, rid))
        conn.execute("UPDATE relations SET dirty = 1, updated_at = updated_at + 0.000001 WHERE id = ?", (new_id,))
        conn.execute("DELETE FROM relations WHERE id = ?", (rid,))
        gone.append(rid)
    return gone


def _touch(store: SQLiteStore, entity_ids: list[str]) -> None:
    store.conn.executemany("UPDATE entities SET dirty = 1, updated_at = updated_at + 0.000001 WHERE id = ?",
                           [(e,) for e in entity_ids])


def merge_entities(store: SQLiteStore, keep: str, others: list[str]) -> dict[str, list[str]]:
    """Fold ``others`` into ``keep``. Returns ids that disappeared per vector namespace."""
    others = [o for o in dict.fromkeys(others) if o != keep]
    conn = store.conn
    with store.transaction():
        touched: list[str] = []
        for other in others:
            conn.execute("UPDATE entity_sources SET entity_id = ? WHERE entity_id = ?", (keep, other))
            conn.execute("UPDATE mentions SET entity_id = ? WHERE entity_id = ?", (keep, other))
            rels = [r[0] for r in conn.execute("SELECT id FROM relations WHERE source_id = ? OR target_id = ?", (other, other))]
            conn.execute("UPDATE relations SET source_id = ? WHERE source_id = ?", (keep, other))
            conn.execute("UPDATE relations SET target_id = ? WHERE target_id = ?", (keep, other))
            touched += rels
            conn.execute("DELETE FROM entities WHERE id = ?", (other,))
        gone_rel = _rekey_relations(store, touched)
        _touch(store, [keep])
        store.delete_vectors("entity", others)
        store.delete_vectors("relation", gone_rel)
    return {"entity": others, "relation": gone_rel}


def split_entity(store: SQLiteStore, entity_id: str) -> list[str]:
    """Undo merges: one entity per distinct name key among the entity's sources. Relations follow
    the name that occurs in the same chunk (else the most frequent name). Returns the new ids."""
    conn = store.conn
    rows = conn.execute("SELECT rowid, chunk_id, name_key FROM entity_sources WHERE entity_id = ?", (entity_id,)).fetchall()
    keys = Counter(r[2] for r in rows if r[2])
    if len(keys) < 2:
        return [entity_id]
    main_key = keys.most_common(1)[0][0]
    new_ids = {k: (entity_id if k == main_key else entity_id_for(k)) for k in keys}
    by_chunk: dict[str, str] = {}
    for _, chunk_id, key in rows:
        by_chunk.setdefault(chunk_id, key)
    with store.transaction():
        for key, new_id in new_ids.items():
            if new_id != entity_id:
                conn.execute("INSERT OR IGNORE INTO entities(id, name, type, description, aliases, weight, dirty, updated_at) "
                             "SELECT ?, name, type, '', '[]', 1.0, 1, updated_at FROM entities WHERE id = ?", (new_id, entity_id))
            conn.execute("UPDATE entity_sources SET entity_id = ? WHERE entity_id = ? AND name_key = ?", (new_id, entity_id, key))
        rels = conn.execute(
            "SELECT r.id, r.source_id, rs.chunk_id FROM relations r JOIN relation_sources rs ON rs.relation_id = r.id "
            "WHERE r.source_id = ? OR r.target_id = ?", (entity_id, entity_id)).fetchall()
        moved: list[str] = []
        for rid, source_id, chunk_id in rels:
            target = new_ids.get(by_chunk.get(chunk_id, main_key), entity_id)
            column = "source_id" if source_id == entity_id else "target_id"
            if target != entity_id:
                conn.execute(f"UPDATE relations SET {column} = ? WHERE id = ?", (target, rid))
                moved.append(rid)
        gone = _rekey_relations(store, list(dict.fromkeys(moved)))
        store.delete_vectors("relation", gone)
        _touch(store, list(new_ids.values()))
    return list(new_ids.values())
