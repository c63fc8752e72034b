"""Keep the communities and their reports in step with the graph.

``update_communities`` recomputes the hierarchy (:mod:`.communities`) when the graph changed
enough since the last computation (or when forced: ``communities.min_change``, measured from what
changed since alone: the relations whose arrival number is above the one recorded then, their
ends in no level-0 community, and the running counts of what merges, splits and deletions
removed or re-pointed; never a pass over the whole graph, so a long-lived worker's batch costs in
proportion to the batch), starting Leiden from the stored memberships
unless ``rebuild``; then it writes the reports that are missing (:mod:`.community_reports`):
only communities whose members or inner relations changed get a new one. The state of the last
computation is kept in the store's meta (``communities``), read by ``stats --graph``.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from ..config import CommunitySettings
from ..models import Community
from ..store.base import CommunityDrift, CommunityGrowth, CommunityStore, CommunityUpkeep, MetaStore
from .communities import HierarchyParams, detect_hierarchy, memberships
from .community_reports import ReportParams, write_reports

META_KEY = "communities"
ARRIVED_NONE = 1 << 62  # an arrival number no relation has: community_growth(ARRIVED_NONE) reads the last one only


@dataclass
class CommunityRun:
    computed: bool
    reason: str
    levels: dict[int, int] = field(default_factory=dict)  # level -> communities
    modularity: dict[int, float] = field(default_factory=dict)
    nodes: int = 0
    edges: int = 0
    changed_share: float = 0.0
    reports_written: int = 0
    reports_kept: int = 0
    llm_reports: int = 0
    report_fallbacks: list[str] = field(default_factory=list)
    seconds: float = 0.0
    detect_seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["modularity"] = {k: round(v, 4) for k, v in self.modularity.items()}
        data["seconds"] = round(self.seconds, 3)
        data["detect_seconds"] = round(self.detect_seconds, 3)
        data["changed_share"] = round(self.changed_share, 4)
        return data


def hierarchy_params(settings: CommunitySettings) -> HierarchyParams:
    return HierarchyParams(seed=settings.seed, resolution=settings.resolution, max_levels=settings.max_levels,
                           min_split_size=settings.min_split_size, min_modularity=settings.min_modularity,
                           algorithm=settings.algorithm)


def state(store: MetaStore) -> dict[str, Any]:
    """What the last computation recorded (empty when never computed)."""
    raw = store.get_meta(META_KEY)
    return json.loads(raw) if raw else {}


def drift_share(drift: CommunityDrift, relations_before: int) -> float:
    """Share of the graph's connected entities that are new or gone since the communities were
    computed, or of relations added/removed (against ``relations_before``, recorded then),
    whichever is larger (1.0 when never computed)."""
    if not drift.communities:
        return 1.0 if drift.relations else 0.0
    node_share = (drift.unassigned + drift.gone) / max(1, drift.connected)
    edge_share = abs(drift.relations - relations_before) / max(1, relations_before)
    return max(node_share, edge_share)


def growth_share(growth: CommunityGrowth, recorded: dict[str, Any], edits: tuple[int, int]) -> float:
    """The same measure from what changed since the computation alone: the relations that arrived
    since (their arrival numbers are above the one ``recorded``) and their ends in no level-0
    community, plus the entities and relations that merges, splits and deletions removed or
    re-pointed since (``edits``, running counts, against those recorded), over the connected
    entities and relations recorded then (1.0 when never computed)."""
    if not growth.communities:
        return 1.0 if growth.seq else 0.0
    entities_then, relations_then = (int(n) for n in recorded.get("edits", (0, 0)))
    node_share = (growth.unassigned + edits[0] - entities_then) / max(1, int(recorded.get("nodes", 0)))
    edge_share = (growth.relations + edits[1] - relations_then) / max(1, int(recorded.get("relations", 0)))
    return max(node_share, edge_share)


def change_share(store: CommunityUpkeep) -> tuple[float, bool]:
    """(How much the graph changed since the communities were computed, whether any are stored),
    read in proportion to the change: the relations that arrived since and the edit counts. A
    computation recorded before arrival numbers were (an older knowledge base) is measured against
    the whole graph once more (``community_drift``) until the next one."""
    recorded = state(store)
    growth = store.community_growth(int(recorded.get("seq", ARRIVED_NONE)))
    if not growth.communities:
        return (1.0 if growth.seq else 0.0), False
    if "seq" not in recorded:
        return drift_share(store.community_drift(), int(recorded.get("relations", 0))), True
    return growth_share(growth, recorded, store.graph_edits()), True


def pending_reports(store: CommunityStore, llm: bool) -> int:
    """Distinct communities (by signature) with no report yet; with ``llm``, extractive reports
    count as pending too (they are rewritten by the LLM when next needed)."""
    return store.missing_reports(extractive_too=llm)


def report_counts(store: CommunityStore) -> dict[str, int]:
    """Stored reports of the current communities by how they were written."""
    known = store.community_reports(list({c.signature for c in store.list_communities()}))
    return {"written": sum(1 for r in known.values() if r.method == "llm"),
            "extractive": sum(1 for r in known.values() if r.method == "extractive")}


def use_llm(settings: CommunitySettings, llm) -> bool:
    return settings.reports == "llm" or (settings.reports == "auto" and llm is not None)


async def update_communities(store: CommunityUpkeep, settings: CommunitySettings, llm=None, *, force: bool = False,
                             rebuild: bool = False, reports: bool = True) -> CommunityRun:
    """Recompute when forced or when the graph changed by ``settings.min_change``; then write the
    missing reports (with ``llm`` when the settings ask for it and one is given; ``reports=False``:
    the communities only)."""
    started = time.perf_counter()
    run, communities, edges = await refresh_communities(store, settings, force=force, rebuild=rebuild)
    if reports:
        await add_reports(store, settings, llm, run, communities, edges)
    run.seconds = time.perf_counter() - started
    return run


Edges = list[tuple[str, str, str, float]]


async def refresh_communities(store: CommunityUpkeep, settings: CommunitySettings, *, force: bool = False, rebuild: bool = False
                              ) -> tuple[CommunityRun, list[Community], Edges | None]:
    """The communities, recomputed when forced or when the graph changed by ``settings.min_change``,
    with the edges they were computed from; else the stored ones, without members or edges (the
    change is counted by the store: an unchanged graph is not read, see :func:`add_reports`)."""
    started = time.perf_counter()
    share, stored_any = await asyncio.to_thread(change_share, store)
    run = CommunityRun(False, "")
    run.changed_share = share
    edges: Edges | None = None
    if not force and not rebuild and stored_any and share < settings.min_change:
        run.reason = f"graph changed by {share:.1%} (< communities.min_change {settings.min_change:.0%}); kept"
        communities = await asyncio.to_thread(store.list_communities)
    else:
        # what the next update measures the change from: read before the edges, so a relation
        # committed meanwhile counts as new next time (on PostgreSQL one whose number was drawn
        # before but that commits after both reads is left out of both until the next computation:
        # the measure is a threshold, not an inventory)
        seq = (await asyncio.to_thread(store.community_growth, ARRIVED_NONE)).seq
        edits = await asyncio.to_thread(store.graph_edits)
        edges = await asyncio.to_thread(store.all_edges)
        stored = [] if rebuild else await asyncio.to_thread(store.list_communities, None, True)
        t = time.perf_counter()
        hierarchy = await asyncio.to_thread(detect_hierarchy, edges, hierarchy_params(settings),
                                            memberships(stored) if stored else None)
        run.detect_seconds = time.perf_counter() - t
        communities = hierarchy.communities
        meta = json.dumps({
            "computed_at": time.time(), "relations": len(edges), "nodes": hierarchy.nodes, "edges": hierarchy.edges,
            "modularity": {str(k): v for k, v in hierarchy.modularity.items()}, "seed": settings.seed,
            "resolution": settings.resolution, "rebuild": not stored, "seq": seq, "edits": list(edits)})

        def save() -> None:
            store.replace_communities(communities)
            store.set_meta(META_KEY, meta)

        await store.awrite(save)
        run.computed = True
        run.reason = "rebuilt from scratch" if not stored else "updated from the stored communities"
        run.modularity = hierarchy.modularity
        run.nodes, run.edges = hierarchy.nodes, hierarchy.edges
    for c in communities:
        run.levels[c.level] = run.levels.get(c.level, 0) + 1
    if not run.modularity:
        run.modularity = {int(k): v for k, v in state(store).get("modularity", {}).items()}
        run.nodes, run.edges = int(state(store).get("nodes", 0)), int(state(store).get("edges", 0))
    run.seconds = time.perf_counter() - started
    return run, list(communities), edges


async def add_reports(store: CommunityUpkeep, settings: CommunitySettings, llm, run: CommunityRun, communities: list[Community],
                      edges: Edges | None) -> None:
    """Write the missing reports of ``communities`` (shared with other workers writing them at the
    same time: :func:`.community_reports.write_reports`), counted in ``run``. Kept communities
    (``edges`` None) are read with their members and edges only when some report is missing."""
    started = time.perf_counter()
    params = ReportParams(settings.report_entities, settings.report_relations, use_llm(settings, llm))
    if edges is None:
        if not await asyncio.to_thread(store.missing_reports, params.use_llm and llm is not None):
            run.reports_kept = len({c.signature for c in communities})
            run.seconds += time.perf_counter() - started
            return
        communities = await asyncio.to_thread(store.list_communities, None, True)
        edges = await asyncio.to_thread(store.all_edges)
    written = await write_reports(store, communities, edges, params, llm)
    if run.computed:
        await asyncio.to_thread(store.delete_orphan_reports)
    run.reports_written, run.reports_kept, run.llm_reports = written.written, written.kept, written.llm
    run.report_fallbacks = written.fallbacks
    run.seconds += time.perf_counter() - started
