"""Structural edits of the stored graph: merge entities (resolution, `entities --merge`) and split
an entity back into one entity per name it was known by (`entities --split`, the escape hatch).

Both run as one unit of work, move provenance records rather than text, re-key the relations
whose endpoints changed (two relations that become the same edge merge), and mark every
touched element dirty so the refresher rebuilds descriptions and vectors. Later documents
resolve against the edited graph, because resolution looks names up in the moved records.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from ..models import RelationRecord
from ..store.base import GraphUpkeep, RelationEnds
from .merge import entity_id_for, relation_id_for


def _rekey_relations(store: GraphUpkeep, relation_ids: list[str]) -> list[str]:
    """Give relations the ids their (possibly new) endpoints imply; merge ones that collide; an
    undirected relation gets the smaller id of its ends as its source (``merge.plan_writes``); one
    whose two ends became one entity is folded (its records kept for a split to restore).
    Returns the relation ids that stopped existing (their vectors must go)."""
    gone: list[str] = []
    for rid in relation_ids:
        relation = store.get_relations([rid], sources=False).get(rid)
        if relation is None:
            continue
        if relation.source_id == relation.target_id:  # the two ends were merged: no self-loop, its records fold
            records = store.take_relation_records([rid])
            store.delete_relations([rid])
            store.write_relations(records)
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
    """Undo merges: one entity per distinct name key among the entity's records. Each relation
    record follows the name it gave that end. Returns the new ids."""
    return split_parts(store, entity_id, None)


def split_parts(store: GraphUpkeep, entity_id: str, parts: list[list[str]] | None) -> list[str]:
    """Split an entity into one entity per part, a list of the name keys its records hold (``None``:
    one part per key); keys no part names stay with the entity. Each relation record follows the
    name it gave that end (one written before end names were kept: the name first met in its chunk),
    and a record between two names the split takes apart becomes a relation between them again.
    Returns the id of each part, in order (all the entity's own where there is nothing to split, or a
    concurrent merge took it away)."""

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
        ends = _SplitEnds(entity_id, set(keys), new_ids, by_chunk, main_key)
        moving = list(dict.fromkeys(e.relation_id for e in store.relation_record_ends(entity_id) if ends.moves(e)))
        for key, new_id in new_ids.items():
            if new_id != entity_id:
                store.split_off(entity_id, key, new_id)
        records = [ends.rewritten(r) for r in store.take_relation_records(moving)]
        records += [ends.unfolded(r) for r in store.take_folded(entity_id)]
        store.write_relations(records)
        kept = {r.id for r in records}
        gone = [rid for rid in moving if rid not in kept]
        store.delete_relations(gone)
        store.count_graph_edits(sum(1 for p in part_ids if p != entity_id), len(moving))
        store.delete_vectors("relation", gone)
        store.touch_entities(list(dict.fromkeys([entity_id, *part_ids])))
        return part_ids

    return store.write(work)


@dataclass(frozen=True)
class _SplitEnds:
    """Where a split sends each relation record's end at the entity: to the part holding the name
    the record gave that end."""

    entity_id: str
    keys: set[str]  # the entity's name keys before the split
    new_ids: dict[str, str]  # name key -> the part's id
    by_chunk: dict[str, str]  # chunk -> the entity's name first met there (records without end names)
    main_key: str

    def _own_key(self, chunk_id: str, source_key: str, target_key: str) -> str:
        """The name a record gave the entity's end: the one of its end names the entity holds."""
        named = [k for k in (source_key, target_key) if k in self.keys]
        return named[0] if len(named) == 1 else self.by_chunk.get(chunk_id, self.main_key)

    def _end(self, chunk_id: str, source_key: str, target_key: str) -> str:
        return self.new_ids.get(self._own_key(chunk_id, source_key, target_key), self.entity_id)

    def moves(self, e: RelationEnds) -> bool:
        return self._end(e.chunk_id, e.source_key, e.target_key) != self.entity_id

    def rewritten(self, r: RelationRecord) -> RelationRecord:
        """A record of a relation at the entity, with its new ends and id."""
        end = self._end(r.chunk_id, r.source_key, r.target_key)
        source = end if r.source_id == self.entity_id else r.source_id
        target = end if r.target_id == self.entity_id else r.target_id
        return _with_ends(r, source, target)

    def unfolded(self, r: RelationRecord) -> RelationRecord:
        """A folded record (both ends the entity): each end to the part of the name it gave it."""
        return _with_ends(r, self.new_ids.get(r.source_key, self.entity_id), self.new_ids.get(r.target_key, self.entity_id))


def _with_ends(r: RelationRecord, source: str, target: str) -> RelationRecord:
    """``r`` between ``source`` and ``target`` (undirected: ends in id order; one entity: folded, no id)."""
    if not r.directed:
        source, target = min(source, target), max(source, target)
    rid = relation_id_for(source, target, r.directed) if source != target else ""
    return replace(r, id=rid, source_id=source, target_id=target)


def _free_id(store: GraphUpkeep, keys: list[str]) -> str:
    """The id of the smallest of ``keys`` that no entity holds (a split part never joins another entity)."""
    ids = [entity_id_for(k) for k in sorted(keys)]
    taken = store.get_entities(ids, sources=False)
    free = [i for i in ids if i not in taken]
    return free[0] if free else entity_id_for(min(keys) + "#split")
