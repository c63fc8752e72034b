"""Entity resolution after an indexing run: the entities this run touched are compared with
themselves and with their nearest stored neighbours (vector index), groups that ``resolve``
links are merged (provenance moves, relations re-key), and the refresher rebuilds them.

Incremental by construction: only groups that contain a touched entity are merged, so a run
costs in proportion to what it added, never a pass over the whole graph. The touched entities are
queued durably by each document's commit (``MaintenanceStore.queue_maintenance("resolve", ...)``) and leave
the queue in the unit of work that merges them: a run killed before or during this pass leaves
the work to the next one (docs/reliability.md).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import numpy as np

from ..models import Entity
from ..store.base import GraphUpkeep, SourceDescriptions, batches
from .edit import merge_entities, rename_entity
from .merge import entity_id_for
from .resolve import Candidate, ResolutionSettings, resolve
from .resolve_names import compact_key, surface_texts

NAME_MATES_LIMIT = 64  # a compact key held by more entities than this adds none of them (like a large name block)


def _compact_keys(entity: Entity) -> set[str]:
    return {key for text in surface_texts(entity.name, entity.aliases) if (key := compact_key(text))}


class NameMates:
    """The stored entities by the compact keys of their names (rule c's name block). A pass over
    the entities a run touched compares them with every stored entity of the same compact name, not
    only with their vector neighbours: "JSON objects" of one paper and "JSONObject" of another
    merge whether the papers are indexed together or one by one (issue 27 item 11). Read once per
    run (names and aliases of every entity, no sources); the run's merges and renames are followed."""

    def __init__(self, store: GraphUpkeep):
        self._ids: dict[str, set[str]] = defaultdict(set)
        self._moved: dict[str, str] = {}
        for part in batches(store.all_entity_ids(), 1000):
            for entity in store.get_entities(part, sources=False).values():
                for key in _compact_keys(entity):
                    self._ids[key].add(entity.id)

    def moved(self, old: str, new: str) -> None:
        if old != new:
            self._moved[old] = new

    def _current(self, entity_id: str) -> str:
        seen = {entity_id}
        while (entity_id := self._moved.get(entity_id, entity_id)) not in seen:
            seen.add(entity_id)
        return entity_id

    def of(self, entities: Iterable[Entity]) -> set[str]:
        """Stored entities sharing a compact name with one of ``entities`` (by their ids now)."""
        out: set[str] = set()
        for entity in entities:
            for key in _compact_keys(entity):
                ids = self._ids.get(key, ())
                if len(ids) <= NAME_MATES_LIMIT:
                    out.update(self._current(i) for i in ids)
        return out


def candidate_pool(store: GraphUpkeep, touched: set[str], k: int, mates: NameMates | None = None) -> list[Candidate]:
    index = store.vector_index("entity")
    pool = dict.fromkeys(sorted(touched))
    found = [(entity_id, vector) for entity_id in pool if (vector := index.get(entity_id)) is not None]
    if found:  # one batched search (a matrix product per block of rows), not one pass over the index per entity
        for hits in index.search_many(np.stack([v for _, v in found]), k + 1):
            pool.update(dict.fromkeys(i for i, _ in hits))
    entities = store.get_entities(pool)
    if mates is not None:  # and the stored entities of the same compact names, however far their vectors are
        named = sorted(mates.of(entities[i] for i in sorted(touched) if i in entities) - set(pool))
        pool.update(dict.fromkeys(named))
        entities.update(store.get_entities(named))
    sources = store.entity_sources([i for i in pool if i in entities])
    return [Candidate(e.id, e.name, e.type, e.description, list(e.aliases), index.get(e.id), _members(sources[e.id]))
            for e in (entities[i] for i in pool if i in entities)]


def _members(src: SourceDescriptions) -> list[list[str]] | None:
    """The names of each entity this one was merged from: its records' name keys, a paper's aliases
    joined to the name they were given for (an alias record follows its canonical one)."""
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        parent.setdefault(key, key)
        while parent[key] != key:
            key = parent[key]
        return key

    canonical = ""
    for key, role in zip(src.keys, src.roles, strict=False):
        find(key)
        if role == "alias" and canonical:
            a, b = find(canonical), find(key)
            if a != b:
                parent[max(a, b)] = min(a, b)
        elif role == "canonical":
            canonical = key
    groups: dict[str, list[str]] = {}
    for name, key in zip(src.names, src.keys, strict=False):
        names = groups.setdefault(find(key), [])
        if name not in names:
            names.append(name)
    return list(groups.values()) if len(groups) > 1 else None


def resolve_touched(store: GraphUpkeep, touched: set[str], settings: ResolutionSettings,
                    mates: NameMates | None = None) -> list[list[str]]:
    """Merge what the resolver links among ``touched`` entities, their neighbours and (``mates``)
    the stored entities of the same compact names, and take them off the resolution queue: every
    merge and the queue's update are ONE unit of work, so a process killed here leaves either all
    of it or none (the queue then still holds the entities). Returns the groups."""
    groups: list[list[str]] = []
    if touched and store.get_meta("embedding_dim"):
        groups = [g for g in resolve(candidate_pool(store, touched, settings.k, mates), settings) if touched & set(g)]

    def work() -> None:
        merged: set[str] = set()
        kept: set[str] = set()
        for group in groups:
            # ids come from name keys: the group keeps the id its names imply where one of its entities
            # has it (canonical_ids gives it otherwise), so the ids do not depend on the order of papers
            keep = canonical_id(store, group)
            keep = keep if keep in group else min(group)
            merge_entities(store, keep, [g for g in group if g != keep])
            merged.update(g for g in group if g != keep)
            kept.add(keep)
            if mates is not None:
                for g in group:
                    mates.moved(g, keep)
        renamed = canonical_ids(store, (touched - merged) | kept)
        if mates is not None:
            for old, new in renamed.items():
                mates.moved(old, new)
        store.finish_maintenance("resolve", touched)

    store.write(work)
    return groups


def canonical_id(store: GraphUpkeep, entity_ids: list[str]) -> str:
    """The id of the smallest name key the entities' records hold: what a paper naming them all
    first would have created (``merge.plan_writes`` gives a new entity the id of its smallest key)."""
    keys = {key for entity_id in entity_ids for _, key in store.entity_name_keys(entity_id) if key}
    return entity_id_for(min(keys)) if keys else min(entity_ids)


def canonical_ids(store: GraphUpkeep, ids: set[str]) -> dict[str, str]:
    """Give each of these entities the id its names imply (``canonical_id``).
    An entity's id otherwise depends on the order papers were committed in (a name joins the
    entity that already holds one of its keys, under that entity's id); with it, the ids depend on
    the names only, so indexing papers one by one or together gives the same graph. Returns how
    old id -> new id of those renamed (an id another entity holds already is left as it is)."""
    renamed: dict[str, str] = {}
    for entity_id, src in sorted(store.entity_sources(sorted(ids)).items()):
        keys = [key for key in src.keys if key]
        canonical = entity_id_for(min(keys)) if keys else entity_id
        if canonical != entity_id and not store.get_entities([canonical], sources=False):
            rename_entity(store, entity_id, canonical)
            renamed[entity_id] = canonical
    return renamed


def resolve_pending(store: GraphUpkeep, settings: ResolutionSettings) -> list[list[str]]:
    """Resolve the entities indexing queued (``MaintenanceStore`` task "resolve"): this run's, and
    any a killed run left."""
    touched = set(store.pending_maintenance("resolve"))
    return resolve_touched(store, touched, settings, NameMates(store) if touched else None)
