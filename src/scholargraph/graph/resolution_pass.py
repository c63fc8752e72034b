"""Entity resolution after an indexing run: the entities this run touched are compared with
themselves and with their nearest stored neighbours (vector index), groups that ``resolve``
links are merged (provenance moves, relations re-key), and the refresher rebuilds them.

Incremental by construction: only the part of the link graph that holds a touched entity is
regrouped, so a run costs in proportion to what it added, never a pass over the whole graph. The
stored entities there are taken apart into the names they were merged from and partitioned again
with the new names, by the rule one pass over them all uses; the difference is applied with
``split_parts`` and ``merge_entities``, so papers indexed one by one give the graph indexed at once. The touched entities are
queued durably by each document's commit (``MaintenanceStore.queue_maintenance("resolve", ...)``) and leave
the queue in the unit of work that merges them: a run killed before or during this pass leaves
the work to the next one (docs/reliability.md).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from ..models import Entity
from ..store.base import GraphUpkeep, SourceDescriptions, batches
from .edit import merge_entities, rename_entity, split_parts
from .merge import entity_id_for
from .refresh import entity_text, merge_entity
from .resolve import Candidate, ResolutionSettings, clique_partition, link_pairs
from .resolve_names import compact_key, surface_texts, surfaces_of

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

    def add(self, names: list[str], entity_id: str) -> None:
        """``entity_id`` now holds ``names`` (a part split off another entity)."""
        for text in names:
            if key := compact_key(text):
                self._ids[key].add(entity_id)

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


PartEmbedder = Callable[[list[str]], np.ndarray]  # texts -> one vector per text (the entity embedder)


@dataclass
class Pool:
    """The candidates of a pass and, per candidate, the name groups it was merged from (keys and
    names: a paper's aliases joined to the name they were given for; one group when it never merged)
    and, where it has several, each group as a candidate of its own (``part_candidates``: the name,
    aliases, type, description and vector an entity of that group's records alone has)."""

    candidates: list[Candidate]
    parts: dict[str, list[tuple[list[str], list[str]]]]
    part_candidates: dict[tuple[str, int], Candidate] = field(default_factory=dict)


def candidate_pool(store: GraphUpkeep, touched: set[str], settings: ResolutionSettings,
                   mates: NameMates | None = None, embed: PartEmbedder | None = None) -> Pool:
    """The touched entities, their ``k`` nearest stored neighbours, the stored entities rule d may
    link them with (same first letter, an acronym-like word on a side, cosine >= ``alias_threshold``,
    up to ``acronym_range``: a range, not the nearest k), and (``mates``) the stored entities of the
    same compact names. Each part of a merged entity is a candidate of its own, with its own vector
    where ``embed`` is given (the merged entity's otherwise)."""
    index = store.vector_index("entity")
    ids = sorted(touched)
    entities = store.get_entities(ids, sources=False)
    sources = store.entity_sources([i for i in ids if i in entities])
    parts = {i: _member_groups(sources[i]) for i in sources}
    part_cands = _part_candidates(sources, parts, embed)
    vectors = store.get_vectors("entity", ids)  # one read, not one round trip per entity
    pool = dict.fromkeys(ids)
    probes = [*vectors.items(), *((node[0], c.vector) for node, c in part_cands.items() if c.vector is not None)]
    if probes:  # one batched search (a matrix product per block of rows), not one pass over the index per entity
        reach = settings.k + 1 if mates is None else max(settings.k, settings.acronym_range) + 1
        far: dict[str, set[str]] = defaultdict(set)  # entity -> stored entities beyond its k nearest
        for (entity_id, _), hits in zip(probes, index.search_many(np.stack([v for _, v in probes]), reach), strict=True):
            pool.update(dict.fromkeys(i for i, _ in hits[: settings.k + 1]))
            far[entity_id].update(i for i, cos in hits[settings.k + 1:] if cos >= settings.alias_threshold)
        if mates is not None:
            pool.update(dict.fromkeys(_rule_d_mates(store, entities, far, set(pool))))
    # names, types, descriptions: a candidate needs no source record (a hub entity holds thousands)
    entities.update(store.get_entities([i for i in pool if i not in entities], sources=False))
    if mates is not None:  # and the stored entities of the same compact names, however far their vectors are
        named = sorted(mates.of(entities[i] for i in ids if i in entities) - set(pool))
        pool.update(dict.fromkeys(named))
        entities.update(store.get_entities(named, sources=False))
    rest = [i for i in pool if i in entities and i not in sources]
    sources.update(store.entity_sources(rest))
    new_parts = {i: _member_groups(sources[i]) for i in rest}
    part_cands.update(_part_candidates({i: sources[i] for i in rest}, new_parts, embed))
    parts.update(new_parts)
    vectors.update(store.get_vectors("entity", [i for i in pool if i in entities and i not in vectors]))
    for (entity_id, _), part in part_cands.items():
        if part.vector is None:  # not embedded (no ``embed``): the merged entity's vector
            part.vector = vectors.get(entity_id)
    return Pool([Candidate(e.id, e.name, e.type, e.description, list(e.aliases), vectors.get(e.id))
                 for e in (entities[i] for i in pool if i in entities)],
                {i: [(keys, names) for keys, names, _ in parts[i]] for i in pool if i in entities}, part_cands)


def _rule_d_sides(entity: Entity) -> tuple[set[str], bool]:
    """The first letters of an entity's names and whether one of them has an acronym-like word."""
    surfaces = surfaces_of(Candidate(entity.id, entity.name, aliases=list(entity.aliases)))
    return {s.compact[:1] for s in surfaces if s.compact}, any(s.has_acronym for s in surfaces)


def _rule_d_mates(store: GraphUpkeep, touched: dict[str, Entity], far: dict[str, set[str]], pooled: set[str]) -> list[str]:
    """Of the stored entities found beyond a touched entity's k nearest, those rule d may link
    with it (a first letter in common, an acronym-like word on a side): what a pass over all of
    them pairs by its range (``resolve_blocks``), whatever else is stored."""
    wanted = sorted({i for found in far.values() for i in found} - pooled)
    stored = store.get_entities(wanted, sources=False)
    sides = {i: _rule_d_sides(e) for i, e in stored.items()}
    out: set[str] = set()
    for entity_id, found in far.items():
        if entity_id not in touched:
            continue
        letters, acronym = _rule_d_sides(touched[entity_id])
        out.update(i for i in found if i in sides and letters & sides[i][0] and (acronym or sides[i][1]))
    return sorted(out)


def _part_candidates(sources: dict[str, SourceDescriptions],
                     parts: dict[str, list[tuple[list[str], list[str], list[int]]]],
                     embed: PartEmbedder | None) -> dict[tuple[str, int], Candidate]:
    """Each part of a merged entity as the entity its records alone make: the name, aliases, type
    and description the refresher gives such an entity and (``embed``) the vector it embeds for it
    (``refresh.entity_text``). A later pass then compares a new name with the names an entity was
    merged from as a pass over all of them does (issue 27 item 11), not through the merged entity's
    one vector, type and description (which a rule may read: two names of one sentence)."""
    nodes: list[tuple[str, int]] = []
    found: list[Entity] = []
    for entity_id, groups in parts.items():
        if len(groups) < 2:
            continue
        src = sources[entity_id]
        for n, (_, _, records) in enumerate(groups):
            nodes.append((entity_id, n))
            found.append(merge_entity(SourceDescriptions(
                f"{entity_id}#{n}", [src.names[r] for r in records], [src.types[r] for r in records],
                [src.descriptions[r] for r in records], 0.0, [], None, [src.roles[r] for r in records])))
    vectors: list[np.ndarray | None] = [None] * len(found)
    if found and embed is not None:
        vectors = list(embed([entity_text(e.name, e.type, e.description, e.aliases) for e in found]))
    return {node: Candidate(e.id, e.name, e.type, e.description, list(e.aliases), vector)
            for node, e, vector in zip(nodes, found, vectors, strict=True)}


def _member_groups(src: SourceDescriptions) -> list[tuple[list[str], list[str], list[int]]]:
    """The name keys, names and records of each entity this one was merged from: its records' name
    keys, a paper's aliases joined to the name they were given for (an alias record follows its
    canonical one: ``store.base.entity_source_rows`` writes them so)."""
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        parent.setdefault(key, key)
        while parent[key] != key:
            key = parent[key]
        return key

    canonical = ""
    for key, role in zip(src.keys, src.roles, strict=False):
        find(key)
        if role != "alias":
            canonical = key if role == "canonical" else ""
        elif canonical:
            a, b = find(canonical), find(key)
            if a != b:
                parent[max(a, b)] = min(a, b)
    groups: dict[str, tuple[list[str], list[str], list[int]]] = {}
    for record, (name, key) in enumerate(zip(src.names, src.keys, strict=False)):
        keys, names, records = groups.setdefault(find(key), ([], [], []))
        if key and key not in keys:
            keys.append(key)
        if name not in names:
            names.append(name)
        records.append(record)
    return list(groups.values())


@dataclass
class Regrouping:
    """What a pass changes: stored entities to split (entity -> its parts' key lists, the part that
    keeps the entity first) and groups to merge (of (entity, part index) nodes)."""

    splits: dict[str, list[list[str]]]
    merges: list[list[tuple[str, int]]]


def regroup(pool: Pool, touched: set[str], settings: ResolutionSettings) -> Regrouping:
    """Partition the names of the pool with the rule a single pass over all of them uses: every
    merged entity is taken apart into the entities it was merged from (its parts, which stay
    linked to one another: they were when they merged), all are linked by the rules and cut into
    maximum cliques, in the order of the ids their names imply (as a pass over them all orders
    them). Where the partition of a part of the link graph that holds a touched entity differs
    from the stored groups, the difference is what to split and merge: a later paper's name can
    take a member from the group an earlier run merged it into (issue 27 item 11)."""
    nodes: list[tuple[str, int]] = []
    cands: list[Candidate] = []
    order: list[str] = []
    for c in pool.candidates:
        groups = pool.parts.get(c.id) or [([], [c.name])]
        for n, (keys, _) in enumerate(groups):
            nodes.append((c.id, n))
            cands.append(c if len(groups) == 1 else pool.part_candidates[(c.id, n)])
            order.append(entity_id_for(min(keys)) if keys else c.id)
    ranked = sorted(range(len(nodes)), key=lambda i: (order[i], nodes[i]))
    nodes, cands = [nodes[i] for i in ranked], [cands[i] for i in ranked]
    node_of = {c.id: node for c, node in zip(cands, nodes, strict=True)}
    label = {node: c.id for c, node in zip(cands, nodes, strict=True)}
    links = [(node_of[a], node_of[b]) for a, b in link_pairs(cands, settings)]
    by_entity: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for node in nodes:
        by_entity[node[0]].append(node)
    links += [(a, b) for parts in by_entity.values() for i, a in enumerate(parts) for b in parts[i + 1:]]
    cliques = [[node_of[i] for i in g] for g in
               clique_partition([c.id for c in cands], [(label[a], label[b]) for a, b in links], settings.max_group)]
    group_of = {node: n for n, g in enumerate(cliques) for node in g}
    live = _components_touching(nodes, links, touched)
    splits: dict[str, list[list[str]]] = {}
    for entity, parts in by_entity.items():
        if len(parts) < 2 or parts[0] not in live:
            continue
        into: dict[object, list[str]] = {}
        for node in parts:
            into.setdefault(group_of.get(node, node), []).extend(pool.parts[entity][node[1]][0])
        if len(into) > 1:
            splits[entity] = list(into.values())
    merges = [g for g in cliques if g[0] in live]  # a group of one entity's parts leaves it as it is
    return Regrouping(splits, merges)


def _components_touching(nodes: list[tuple[str, int]], links: list[tuple[tuple[str, int], tuple[str, int]]],
                         touched: set[str]) -> set[tuple[str, int]]:
    """The nodes connected by links to a node of a touched entity."""
    adj: dict[tuple[str, int], list[tuple[str, int]]] = defaultdict(list)
    for a, b in links:
        adj[a].append(b)
        adj[b].append(a)
    seen = {node for node in nodes if node[0] in touched}
    frontier = list(seen)
    while frontier:
        for other in adj[frontier.pop()]:
            if other not in seen:
                seen.add(other)
                frontier.append(other)
    return seen


def resolve_touched(store: GraphUpkeep, touched: set[str], settings: ResolutionSettings,
                    mates: NameMates | None = None, embed: PartEmbedder | None = None) -> list[list[str]]:
    """Regroup what the resolver links among ``touched`` entities, their neighbours and (``mates``)
    the stored entities of the same compact names (``regroup``: split what a later name takes a
    member from, merge the new groups), and take them off the resolution queue: every edit and the
    queue's update are ONE unit of work, so a process killed here leaves either all of it or none
    (the queue then still holds the entities). Returns the groups merged."""
    plan = Regrouping({}, [])
    pool = Pool([], {})
    if touched and store.get_meta("embedding_dim"):
        pool = candidate_pool(store, touched, settings, mates, embed)
        plan = regroup(pool, touched, settings)
    groups: list[list[str]] = []

    def work() -> None:
        at: dict[tuple[str, int], str] = {}  # node -> the entity holding it after the splits
        created: set[str] = set()
        for entity, parts in plan.splits.items():
            ids = split_parts(store, entity, parts)
            created.update(ids)
            part_id = {key: i for part, i in zip(parts, ids, strict=True) for key in part}
            for n, (keys, names) in enumerate(pool.parts[entity]):
                at[(entity, n)] = part_id.get(keys[0], entity) if keys else entity
                if mates is not None:
                    mates.add(names, at[(entity, n)])
        merged: set[str] = set()
        kept: set[str] = set()
        for nodes in plan.merges:
            group = list(dict.fromkeys(at.get(node, node[0]) for node in nodes))
            if len(group) < 2:
                continue
            # ids come from name keys: the group keeps the id its names imply where one of its entities
            # has it (canonical_ids gives it otherwise), so the ids do not depend on the order of papers
            keep = canonical_id(store, group)
            keep = keep if keep in group else min(group)
            merge_entities(store, keep, [g for g in group if g != keep])
            groups.append([keep, *(g for g in group if g != keep)])
            merged.update(g for g in group if g != keep)
            kept.add(keep)
            if mates is not None:
                for g in group:
                    mates.moved(g, keep)
        renamed = canonical_ids(store, ((touched | created) - merged) | kept)
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
