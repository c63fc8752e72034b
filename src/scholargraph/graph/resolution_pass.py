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

from ..store.base import Store
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
    return [Candidate(e.id, e.name, e.type, e.description, list(e.aliases), index.get(e.id))
            for e in (entities[i] for i in pool if i in entities)]


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
            merge_entities(store, group[0], group[1:])
        store.finish_maintenance("resolve", touched)

    store.write(work)
    return groups


def resolve_pending(store: Store, settings: ResolutionSettings) -> list[list[str]]:
    """Resolve the entities indexing queued (``MaintenanceStore`` task "resolve"): this run's, and
    any a killed run left."""
    return resolve_touched(store, set(store.pending_maintenance("resolve")), settings)
