"""Structural edits of the stored graph: merge entities (resolution, `entities --merge`) and split
an entity back into one entity per name it was known by (`entities --split`, the escape hatch).

Both run as one unit of work, move provenance records rather than text, re-key the relations
whose endpoints changed (two relations that become the same edge merge), and mark every
touched element dirty so the refresher rebuilds descriptions and vectors. Later documents
resolve against the edited graph, because resolution looks names up in the moved records.
"""

from __future__ import annotations

from collections import Counter

from ..store.base import GraphUpkeep
from .merge import entity_id_for, relation_id_for


def _rekey_relations(store: GraphUpkeep, relation_ids: list[str]) -> list[str]:
    """Give relations the ids their (possibly new) endpoints imply; merge ones that collide; an
    undirected relation gets the smaller id of its ends as its source (``merge.plan_writes``).
    Returns the relation ids that stopped existing (their vectors must go)."""
    gone: list[str] = []
    for rid in relation_ids:
        relation = store.get_relations([rid], sources=False).get(rid)
        if relation is None:
            continue
        if relation.source_id == relation.target_id:  # the two ends were merged: a self-loop, drop it
            store.delete_relations([rid])
            gone.append(rid)
            continue
        new_id = relation_id_for(relation.source_id, relation.target_id, relation.directed)
        if new_id != rid:
            store.rekey_relation(rid, new_id)
            gone.append(rid)
        store.orient_relation(new_id)  # an undirected one: ends in id order, whichever paper wrote the pair first
    return gone


def merge_entities(store: GraphUpkeep, keep: str, others: list[str]) -> dict[str, list[str]]:
    """Fold ``others`` into ``keep``. Returns ids that disappeared per vector namespace. Merges of
    concurrent workers take turns (``MaintenanceStore.lock_merges``); one another worker's merge already folded
    away is left out (``keep`` gone: nothing is merged)."""
    wanted = [o for o in dict.fromkeys(others) if o != keep]

    def work() -> dict[str, list[str]]:
        store.lock_merges()
        alive = store.get_entities([keep, *wanted], sources=False)
        others = [o for o in wanted if o in alive] if keep in alive else []
        touched: list[str] = []
        for other in others:
            touched += store.move_entity(other, keep)
        gone_rel = _rekey_relations(store, touched)
        store.count_graph_edits(len(others), len(touched))  # what the communities measure the change by
        store.touch_entities([keep])
        store.delete_vectors("entity", others)
        store.delete_vectors("relation", gone_rel)
        return {"entity": others, "relation": gone_rel}

    return store.write(work)


def rename_entity(store: GraphUpkeep, old: str, new: str) -> None:
    """Give entity ``old`` the id ``new`` (which no entity has): its records, mentions and relation
    ends follow, relations are re-keyed, and it is rebuilt under the new id."""
    keys = [key for _, key in store.entity_name_keys(old) if key]
    if not keys:
        return

    def work() -> None:
        store.split_off(old, keys[0], new)  # creates ``new`` with the records of one of its names
        merge_entities(store, new, [old])  # and the rest

    store.write(work)


def split_entity(store: GraphUpkeep, entity_id: str) -> list[str]:
    """Undo merges: one entity per distinct name key among the entity's records. Relations follow
    the name that occurs in the same chunk (else the most frequent name). Returns the new ids."""
    return split_parts(store, entity_id, None)


def split_parts(store: GraphUpkeep, entity_id: str, parts: list[list[str]] | None) -> list[str]:
    """Split an entity into one entity per part, a list of the name keys its records hold (``None``:
    one part per key); keys no part names stay with the entity. Relations follow the name that
    occurs in the same chunk (else the most frequent name). Returns the id of each part, in order
    (all the entity's own where there is nothing to split, or a concurrent merge took it away)."""

    def work() -> list[str]:
        store.lock_merges()  # merges and splits of concurrent workers take turns
        rows = store.entity_name_keys(entity_id)
        keys = Counter(key for _, key in rows if key)
        wanted = [[k] for k in keys] if parts is None else [[k for k in part if k in keys] for part in parts]
        if len([p for p in wanted if p]) < 2:
            return [entity_id] * len(wanted)
        # The entity keeps the part holding the name its id was made from (when it still has records
        # of it), else the part of its most frequent name; every other part gets the id its smallest
        # key implies (or, where another entity has that id, the id of another of its keys).
        own = [k for k in keys if entity_id_for(k) == entity_id]
        main_key = own[0] if own else keys.most_common(1)[0][0]
        part_ids = [entity_id if main_key in part else _free_id(store, part) for part in wanted]
        new_ids = {k: part_id for part, part_id in zip(wanted, part_ids, strict=True) for k in part}
        by_chunk: dict[str, str] = {}
        for chunk_id, key in rows:
            by_chunk.setdefault(chunk_id, key)
        for key, new_id in new_ids.items():
            if new_id != entity_id:
                store.split_off(entity_id, key, new_id)
        ends: dict[str, str] = {}  # relation -> the entity its end moves to (its last record that moves decides)
        for rid, chunk_id in store.relation_chunks(entity_id):
            target = new_ids.get(by_chunk.get(chunk_id, main_key), entity_id)
            if target != entity_id:
                ends[rid] = target
        moved = list(ends)
        for rid in moved:
            store.set_relation_end(rid, entity_id, ends[rid])
        gone = _rekey_relations(store, moved)
        store.count_graph_edits(sum(1 for p in part_ids if p != entity_id), len(moved))
        store.delete_vectors("relation", gone)
        store.touch_entities(list(dict.fromkeys([entity_id, *part_ids])))
        return part_ids

    return store.write(work)


def _free_id(store: GraphUpkeep, keys: list[str]) -> str:
    """The id of the smallest of ``keys`` that no entity holds (a split part never joins another entity)."""
    ids = [entity_id_for(k) for k in sorted(keys)]
    taken = store.get_entities(ids, sources=False)
    free = [i for i in ids if i not in taken]
    return free[0] if free else entity_id_for(min(keys) + "#split")
