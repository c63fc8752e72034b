"""Entity resolution after an indexing run: the entities this run touched are compared with
themselves and with their nearest stored neighbours (vector index), groups that ``resolve``
links are merged (provenance moves, relations re-key), and the refresher rebuilds them.

Incremental by construction: only groups that contain a touched entity are merged, so a run
costs in proportion to what it added, never a pass over the whole graph. The touched entities are
queued durably by each document's commit (``Store.queue_maintenance("resolve", ...)``) and leave
the queue in the unit of work that merges them: a run killed before or during this pass leaves
the work to the next one (docs/reliability.md).
"""

from __future__ import annotations

from ..store.base import SourceDescriptions, Store
from .edit import merge_entities
from .resolve import Candidate, ResolutionSettings, resolve


def candidate_pool(store: Store, touched: set[str], k: int) -> list[Candidate]:
    index = store.vector_index("entity")
    pool = dict.fromkeys(sorted(touched))
    for entity_id in sorted(touched):
        vector = index.get(entity_id)
        if vector is not None:
            pool.update(dict.fromkeys(i for i, _ in index.search(vector, k + 1)))
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


def resolve_touched(store: Store, touched: set[str], settings: ResolutionSettings) -> list[list[str]]:
    """Merge what the resolver links among ``touched`` entities and their neighbours, and take them
    off the resolution queue: every merge and the queue's update are ONE unit of work, so a process
    killed here leaves either all of it or none (the queue then still holds the entities). Returns
    the groups."""
    groups: list[list[str]] = []
    if touched and store.get_meta("embedding_dim"):
        groups = [g for g in resolve(candidate_pool(store, touched, settings.k), settings) if touched & set(g)]

    def work() -> None:
        for group in groups:
            # the smallest id is kept: ids come from name keys, so an entity merged from several always
            # has the smallest id of the names it holds, in whatever order papers arrived (the name it
            # shows is rebuilt from its sources anyway)
            keep = min(group)
            merge_entities(store, keep, [g for g in group if g != keep])
        store.finish_maintenance("resolve", touched)

    store.write(work)
    return groups


def resolve_pending(store: Store, settings: ResolutionSettings) -> list[list[str]]:
    """Resolve the entities indexing queued (``MaintenanceStore`` task "resolve"): this run's, and
    any a killed run left."""
    return resolve_touched(store, set(store.pending_maintenance("resolve")), settings)
