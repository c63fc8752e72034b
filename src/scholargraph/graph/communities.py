"""Hierarchical communities of the entity graph (seed 001 §III.C), with Leiden (igraph), or Louvain
as the seed used (``communities.algorithm = "louvain"``: igraph's multilevel method, same hierarchy).

Level 0 is Leiden (modularity, weighted) over the whole graph: the coarsest communities. Each
community of at least ``min_split_size`` entities is then clustered again on its own induced
subgraph; when that yields two or more parts with a modularity of at least ``min_modularity``,
the parts are its children at the next level, otherwise it goes down unchanged. Levels stop when
nothing splits any more or at ``max_levels``. Every level is thus a partition of the connected
entities, and each community has exactly one parent: reports can be written bottom-up.

Deterministic: nodes and edges are sorted, and every Leiden run draws from a ``random.Random``
seeded from ``seed`` (a community's split: from ``seed``, its level and its members). igraph's
random generator is process-wide, so runs are serialised by a lock and the previous generator is
put back afterwards. Given ``previous`` memberships, each run
starts from them (new entities alone), so an update moves only what the changes move; without
them the result depends on the graph and the seed only.

Entities without relations belong to no community, nor do the rare singletons Leiden leaves.
"""

from __future__ import annotations

import hashlib
import random
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import igraph as ig

from ..models import Community

_RNG_LOCK = threading.Lock()


@dataclass(frozen=True)
class HierarchyParams:
    seed: int = 42
    resolution: float = 1.0
    max_levels: int = 3
    min_split_size: int = 10
    min_modularity: float = 0.25
    # Leiden iterations per run: until the partition is stable, at most this many. A fixed small
    # count (igraph's default is 2) is ~2x faster on 50k entities, but an update started from a
    # partition that was not stable keeps moving it: 2,523 of 5,672 communities kept their id after
    # 200 new relations, against 5,042 of 5,558 until stable (benchmarks/bench_communities). The
    # bound matters: igraph's own "until stable" (n_iterations < 0) can cycle for ever on some graphs.
    iterations: int = 50
    algorithm: str = "leiden"  # or "louvain" (seed 001 §III.C used Louvain): igraph's multilevel method


@dataclass
class Hierarchy:
    communities: list[Community]
    modularity: dict[int, float] = field(default_factory=dict)  # level -> modularity of its partition
    nodes: int = 0  # entities with at least one relation (the clustered graph)
    edges: int = 0  # entity pairs joined by at least one relation

    @property
    def levels(self) -> list[int]:
        return sorted({c.level for c in self.communities})

    def at(self, level: int) -> list[Community]:
        return [c for c in self.communities if c.level == level]


class _Graph:
    """The undirected entity graph in igraph form: one edge per entity pair (weights summed)."""

    def __init__(self, edges: Sequence[tuple[str, str, str, float]]):
        self.names = sorted({n for _, s, t, _ in edges if s != t for n in (s, t)})
        self.index = {n: i for i, n in enumerate(self.names)}
        index = self.index
        weight: dict[tuple[int, int], float] = {}
        rids: dict[tuple[int, int], list[str]] = {}
        for rid, s, t, w in edges:
            if s == t:
                continue
            a, b = index[s], index[t]
            key = (a, b) if a < b else (b, a)  # names are sorted: same order as the names' pair
            weight[key] = weight.get(key, 0.0) + max(float(w or 0.0), 1e-6)
            rids.setdefault(key, []).append(rid)
        keys = sorted(weight)
        self.rids = [sorted(rids[k]) for k in keys]
        self.graph = ig.Graph(n=len(self.names), edges=keys)
        self.graph.es["weight"] = [weight[k] for k in keys]


def _leiden(graph: ig.Graph, params: HierarchyParams, rng: random.Random, initial: list[int] | None) -> list[int]:
    """Leiden iterations from ``initial`` until the membership stops changing (at most
    ``params.iterations``)."""
    if graph.ecount() == 0:
        return list(range(graph.vcount()))
    if params.algorithm == "louvain":
        return louvain(graph, params.resolution, rng)
    membership = initial
    with _RNG_LOCK:
        ig.set_random_number_generator(rng)
        try:
            for _ in range(max(1, params.iterations)):
                part = graph.community_leiden(objective_function="modularity", weights="weight",
                                              resolution=params.resolution, n_iterations=1,
                                              initial_membership=membership)
                if membership is not None and _same_partition(membership, part.membership):
                    break
                membership = list(part.membership)
        finally:
            ig.set_random_number_generator(random)
    return list(membership or [])


def louvain(graph: ig.Graph, resolution: float, rng: random.Random) -> list[int]:
    """Louvain (igraph's multilevel method, weighted modularity) with the generator ``rng``: the
    finest-grained final level."""
    if graph.ecount() == 0:
        return list(range(graph.vcount()))
    with _RNG_LOCK:
        ig.set_random_number_generator(rng)
        try:
            part = graph.community_multilevel(weights="weight", resolution=resolution)
        finally:
            ig.set_random_number_generator(random)
    return list(part.membership)


def leiden(graph: ig.Graph, resolution: float, rng: random.Random) -> list[int]:
    """One Leiden partition (weighted modularity, until stable) with the generator ``rng``."""
    return _leiden(graph, HierarchyParams(resolution=resolution), rng, None)


def _same_partition(a: Sequence[int], b: Sequence[int]) -> bool:
    """Whether two memberships group the vertices alike (labels may differ)."""
    seen: dict[int, int] = {}
    back: dict[int, int] = {}
    for x, y in zip(a, b, strict=True):
        if seen.setdefault(x, y) != y or back.setdefault(y, x) != x:
            return False
    return True


def _initial(names: Sequence[str], previous: Mapping[str, str] | None) -> list[int] | None:
    """Leiden's starting membership from a previous partition (new entities alone)."""
    if not previous:
        return None
    labels: dict[str, int] = {}
    out = []
    for n in names:
        key = previous.get(n)
        if key is None:
            key = f"\0{n}"  # a new entity starts alone
        out.append(labels.setdefault(key, len(labels)))
    return out


def _signature(members: Sequence[str], rids: Sequence[str]) -> str:
    h = hashlib.sha1()
    for m in members:
        h.update(m.encode())
        h.update(b"\0")
    h.update(b"|")
    for r in rids:
        h.update(r.encode())
        h.update(b"\0")
    return h.hexdigest()


def _groups(membership: Sequence[int], vertices: Sequence[int]) -> list[list[int]]:
    found: dict[int, list[int]] = {}
    for v, label in zip(vertices, membership, strict=True):
        found.setdefault(label, []).append(v)
    return [g for g in found.values() if len(g) > 1]


def detect_hierarchy(edges: Sequence[tuple[str, str, str, float]], params: HierarchyParams | None = None,
                     previous: Mapping[int, Mapping[str, str]] | None = None) -> Hierarchy:
    """Communities per level over ``edges`` = (relation id, source, target, weight).

    ``previous``: level -> {entity id: community id} of an earlier run, to start Leiden from."""
    params = params or HierarchyParams()
    g = _Graph(edges)
    graph = g.graph
    rng = random.Random(params.seed)
    previous = previous or {}
    all_vertices = list(range(graph.vcount()))
    level_groups: list[list[list[int]]] = [_groups(_leiden(graph, params, rng, _initial(g.names, previous.get(0))),
                                                   all_vertices)]
    parents: list[list[int]] = [[-1] * len(level_groups[0])]
    while len(level_groups) < params.max_levels:
        level = len(level_groups)
        children, child_parents, split_any = [], [], False
        for pi, members in enumerate(level_groups[-1]):
            names = [g.names[v] for v in members]
            # each community draws from its own generator, seeded by its members: an unchanged
            # community splits the same way in an update whatever happened elsewhere in the graph
            own_rng = random.Random(f"{params.seed}:{level}:{_signature(sorted(names), ())}")
            parts = _split(graph, members, params, own_rng, _initial(names, previous.get(level)))
            split_any |= len(parts) > 1
            for part in parts or [members]:
                children.append(part)
                child_parents.append(pi)
        if not split_any:
            break
        level_groups.append(children)
        parents.append(child_parents)
    return _hierarchy(g, level_groups, parents)


def _split(graph: ig.Graph, members: list[int], params: HierarchyParams, rng: random.Random,
           initial: list[int] | None) -> list[list[int]]:
    """The parts of one community at the next level, or [] when it does not split."""
    if len(members) < params.min_split_size:
        return []
    sub = graph.induced_subgraph(members, implementation="create_from_scratch")
    membership = _leiden(sub, params, rng, initial)
    if len(set(membership)) < 2 or sub.modularity(membership, weights="weight") < params.min_modularity:
        return []
    parts = _groups(membership, members)
    in_parts = {v for p in parts for v in p}
    if len(parts) < 2 or len(in_parts) < len(members) // 2:
        return []
    return parts


def _hierarchy(g: _Graph, level_groups: list[list[list[int]]], parents: list[list[int]]) -> Hierarchy:
    graph = g.graph
    edge_list = graph.get_edgelist()
    weights = graph.es["weight"] if graph.ecount() else []
    out: list[Community] = []
    modularity: dict[int, float] = {}
    ids_above: list[str] = []
    for level, groups in enumerate(level_groups):
        label = [-1] * graph.vcount()
        for ci, members in enumerate(groups):
            for v in members:
                label[v] = ci
        inner: list[list[int]] = [[] for _ in groups]
        for ei, (a, b) in enumerate(edge_list):
            if label[a] >= 0 and label[a] == label[b]:
                inner[label[a]].append(ei)
        ids = []
        for ci, members in enumerate(groups):
            names = sorted(g.names[v] for v in members)
            rids = sorted(r for ei in inner[ci] for r in g.rids[ei])
            sig = _signature(names, rids)
            cid = f"{level}-{sig[:16]}"
            ids.append(cid)
            parent = ids_above[parents[level][ci]] if level else None
            out.append(Community(cid, level, sig, names, parent, len(rids), round(sum(weights[e] for e in inner[ci]), 6)))
        ids_above = ids
        # entities left out (singletons) count as communities of their own
        nxt = len(groups)
        for v in range(graph.vcount()):
            if label[v] < 0:
                label[v], nxt = nxt, nxt + 1
        modularity[level] = graph.modularity(label, weights="weight") if graph.ecount() else 0.0
    return Hierarchy(out, modularity, graph.vcount(), graph.ecount())


def memberships(communities: Sequence[Community]) -> dict[int, dict[str, str]]:
    """level -> {entity id: community id}, e.g. to start the next run from."""
    out: dict[int, dict[str, str]] = {}
    for c in communities:
        level = out.setdefault(c.level, {})
        for m in c.members:
            level[m] = c.id
    return out
