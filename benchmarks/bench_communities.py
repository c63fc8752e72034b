"""Communities on a 50k-entity graph: hierarchical Leiden (graph/communities.py) from scratch and as
an update, and the store round trip, against networkx Louvain (the seed's algorithm) on the same
graph in the same process.

    .venv/bin/python -m benchmarks.bench_communities [--entities 50000] [--edges 240000] [--repeats 3]

The graph is synthetic (no corpus of that size exists offline): 500 planted groups of 100 entities,
80% of the edges inside a group, degree-skewed endpoints, seeded. Prints JSON and writes
benchmarks/results/communities.json.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.common import machine, write_result
from scholargraph.config import CommunitySettings
from scholargraph.graph.communities import HierarchyParams, detect_hierarchy, memberships
from scholargraph.models import EntityRecord, RelationRecord
from scholargraph.store import open_store


def synthetic(entities: int, edges: int, seed: int = 1) -> list[tuple[str, str, str, float]]:
    rng = random.Random(seed)
    group = 100
    found: set[tuple[int, int]] = set()
    while len(found) < edges:
        a = min(int(rng.paretovariate(1.2)) - 1, entities - 1) if rng.random() < 0.3 else rng.randrange(entities)
        b = (a // group) * group + rng.randrange(group) if rng.random() < 0.8 else rng.randrange(entities)
        b = min(b, entities - 1)
        if a != b:
            found.add((min(a, b), max(a, b)))
    return [(f"r{i}", f"e{a:06d}", f"e{b:06d}", 1.0 + (i % 5)) for i, (a, b) in enumerate(sorted(found))]


def timed(fn, repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def store_round_trip(edges, hierarchy) -> dict:
    """Write the graph and the communities to a SQLite workspace, read them back, update (detect +
    store, no reports), as `scholargraph communities --force` does."""
    from scholargraph.graph.community_update import update_communities

    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "ws")
        try:
            ends = sorted({x for _, s, t, _ in edges for x in (s, t)})
            store.write(lambda: (
                store.write_entities([EntityRecord(e, "Concept", "", "c", id=e, key=e, document_id="d") for e in ends]),
                store.write_relations([RelationRecord(s, t, "", "c", id=r, source_id=s, target_id=t, document_id="d",
                                                      strength=w) for r, s, t, w in edges])))
            t = time.perf_counter()
            store.replace_communities(hierarchy.communities)
            write_s = time.perf_counter() - t
            t = time.perf_counter()
            back = store.list_communities(None, members=True)
            read_s = time.perf_counter() - t
            assert sum(len(c.members) for c in back) == sum(len(c.members) for c in hierarchy.communities)

            t = time.perf_counter()
            # detection + store, as `scholargraph communities --force` (reports need chunks: left out)
            run = asyncio.run(update_communities(store, CommunitySettings(), None, force=True, reports=False))
            update_s = time.perf_counter() - t
        finally:
            store.close()
    return {"store_write_s": round(write_s, 3), "store_read_s": round(read_s, 3),
            "update_command_s": round(update_s, 3), "update_detect_s": round(run.detect_seconds, 3)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entities", type=int, default=50_000)
    ap.add_argument("--edges", type=int, default=240_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args()
    edges = synthetic(args.entities, args.edges)
    params = HierarchyParams()
    leiden_s, hierarchy = timed(lambda: detect_hierarchy(edges, params), args.repeats)
    again = detect_hierarchy(edges, params)
    deterministic = [c.id for c in again.communities] == [c.id for c in hierarchy.communities]
    previous = memberships(hierarchy.communities)
    grown = edges + [(f"x{i}", f"new{i % 50}", f"e{(i * 7919) % args.entities:06d}", 1.0) for i in range(200)]
    update_s, updated = timed(lambda: detect_hierarchy(grown, params, previous), args.repeats)
    kept = len({c.id for c in hierarchy.communities} & {c.id for c in updated.communities})

    import networkx as nx

    g = nx.Graph()
    g.add_weighted_edges_from((s, t, w) for _, s, t, w in edges)
    louvain_s, parts = timed(lambda: nx.community.louvain_communities(g, weight="weight", seed=42), 1)
    louvain_q = nx.community.modularity(g, parts, weight="weight")

    result = {
        "benchmark": "communities", "machine": machine(),
        "note": "shared 2-core machine, other helpers' tests running: loaded-machine figures",
        "graph": {"entities": hierarchy.nodes, "entity_pairs": hierarchy.edges, "relations": len(edges)},
        "leiden_hierarchy_s": round(leiden_s, 3),
        "levels": {str(lv): len(hierarchy.at(lv)) for lv in hierarchy.levels},
        "modularity": {str(k): round(v, 4) for k, v in hierarchy.modularity.items()},
        "deterministic": deterministic,
        "update_200_new_relations_s": round(update_s, 3),
        "update_communities_kept": f"{kept} of {len(hierarchy.communities)}",
        "baseline_networkx_louvain_s": round(louvain_s, 3),
        "baseline_networkx_louvain_modularity": round(louvain_q, 4),
        "baseline_networkx_louvain_communities": len(parts),
        "speedup_vs_networkx_louvain": round(louvain_s / leiden_s, 2),
        **store_round_trip(edges, hierarchy),
    }
    write_result("communities", result, args.out)


if __name__ == "__main__":
    main()
