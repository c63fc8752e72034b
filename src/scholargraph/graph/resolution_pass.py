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

import numpy as np

from ..store.base import GraphUpkeep, SourceDescriptions
from .edit import merge_entities, rename_entity
from .merge import entity_id_for
from .resolve import Candidate, ResolutionSettings, resolve


def candidate_pool(store: GraphUpkeep, touched: set[str], k: int) -> list[Candidate]:
    index = store.vector_index("entity")
    pool = dict.fromkeys(sorted(touched))
    found = [(entity_id, vector) for entity_id in pool if (vector := index.get(entity_id)) is not None]
    if found:  # one batched search (a matrix product per block of rows), not one pass over the index per entity
        for hits in index.search_many(np.stack([v for _, v in found]), k + 1):
            pool.update(dict.fromkeys(i for i, _ in hits))
    entities = store.get_entities(pool)
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


def resolve_touched(store: GraphUpkeep, touched: set[str], settings: ResolutionSettings) -> list[list[str]]:
    """Merge what the resolver links among ``touched`` entities and their neighbours, and take them
    off the resolution queue: every merge and the queue's update are ONE unit of work, so a process
    killed here leaves either all of it or none (the queue then still holds the entities). Returns
    the groups."""
    groups: list[list[str]] = []
    if touched and store.get_meta("embedding_dim"):
        groups = [g for g in resolve(candidate_pool(store, touched, settings.k), settings) if touched & set(g)]

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
        canonical_ids(store, (touched - merged) | kept)
        store.finish_maintenance("resolve", touched)

    store.write(work)
    return groups


def canonical_id(store: GraphUpkeep, entity_ids: list[str]) -> str:
    """The id of the smallest name key the entities' records hold: what a paper naming them all
    first would have created (``merge.plan_writes`` gives a new entity the id of its smallest key)."""
    keys = {key for entity_id in entity_ids for _, key in store.entity_name_keys(entity_id) if key}
    return entity_id_for(min(keys)) if keys else min(entity_ids)


def canonical_ids(store: GraphUpkeep, ids: set[str]) -> int:
    """Give each of these entities the id its names imply (``canonical_id``).
    An entity's id otherwise depends on the order papers were committed in (a name joins the
    entity that already holds one of its keys, under that entity's id); with it, the ids depend on
    the names only, so indexing papers one by one or together gives the same graph. Returns how
    many were renamed (an id another entity holds already is left as it is)."""
    renamed = 0
    for entity_id, src in sorted(store.entity_sources(sorted(ids)).items()):
        keys = [key for key in src.keys if key]
        canonical = entity_id_for(min(keys)) if keys else entity_id
        if canonical != entity_id and not store.get_entities([canonical], sources=False):
            rename_entity(store, entity_id, canonical)
            renamed += 1
    return renamed


def resolve_pending(store: GraphUpkeep, settings: ResolutionSettings) -> list[list[str]]:
    """Resolve the entities indexing queued (``MaintenanceStore`` task "resolve"): this run's, and
    any a killed run left."""
    return resolve_touched(store, set(store.pending_maintenance("resolve")), settings)
