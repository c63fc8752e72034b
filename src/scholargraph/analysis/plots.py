"""``scholargraph plot``: figures of the graph as PNG (matplotlib, Agg; seed 001 Figs. 2-5) and the
interactive HTML view (:mod:`.graph_view`).

Figures: degree distribution, entity types, relation types (or keywords when relations are
untyped), top nodes by degree, community sizes per level, papers per year by topic (the coarsest
communities' papers) and the community map (communities as nodes, sized by members, joined by the
relations between them). Layouts are seeded: the same workspace gives the same pictures.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only; never a display
import igraph as ig  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ..models import DocStatus  # noqa: E402
from ..store.base import BrowseStore  # noqa: E402
from .graph_stats import graph_stats, simple_graph  # noqa: E402

DPI = 110
TOPICS = 6


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _bar(counts: dict[str, int], title: str, xlabel: str, path: Path, limit: int = 20) -> Path:
    items = list(counts.items())[:limit][::-1]
    fig, ax = plt.subplots(figsize=(7, max(2.5, 0.32 * len(items) + 1)))
    ax.barh([k[:40] for k, _ in items] or ["(none)"], [v for _, v in items] or [0], color="#4C72B0")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    return _save(fig, path)


def degree_distribution(degrees: list[int], path: Path) -> Path:
    counts = Counter(d for d in degrees if d > 0)
    fig, ax = plt.subplots(figsize=(6, 4))
    if counts:
        xs = sorted(counts)
        ax.loglog(xs, [counts[x] for x in xs], "o", markersize=4, color="#4C72B0")
    ax.set_title("Degree distribution")
    ax.set_xlabel("degree (distinct neighbours)")
    ax.set_ylabel("entities")
    return _save(fig, path)


def community_sizes(levels: dict[int, list[int]], path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(6, 4))
    for level, sizes in sorted(levels.items()):
        bins = np.logspace(np.log10(2), np.log10(max(max(sizes), 3)), 20).tolist()
        ax.hist(sizes, bins=bins, alpha=0.55, label=f"level {level} ({len(sizes)})")
    ax.set_xscale("log")
    ax.set_title("Community sizes per level")
    ax.set_xlabel("entities per community")
    ax.set_ylabel("communities")
    if levels:
        ax.legend()
    return _save(fig, path)


def _topics(store: BrowseStore) -> list[tuple[str, list[str]]]:
    """(title, supporting paper ids) of the coarsest communities, largest first."""
    top = store.list_communities(0)[:TOPICS]
    reports = store.community_reports([c.signature for c in top])
    return [(reports[c.signature].title if c.signature in reports else c.id, reports[c.signature].documents
             if c.signature in reports else []) for c in top]


def papers_per_year(store: BrowseStore, path: Path) -> Path:
    years = {d.id: d.year for d in store.list_documents() if d.status == DocStatus.PROCESSED and d.year}
    all_years = sorted(set(years.values()))
    fig, ax = plt.subplots(figsize=(7, 4))
    if all_years:
        xs = np.arange(len(all_years))
        total = Counter(years.values())
        ax.bar(xs, [total[y] for y in all_years], color="#DDDDDD", label="all papers")
        topics = _topics(store)
        width = 0.8 / max(1, len(topics))
        for i, (title, docs) in enumerate(topics):
            per = Counter(years[d] for d in docs if d in years)
            ax.bar(xs - 0.4 + width * (i + 0.5), [per[y] for y in all_years], width, label=title[:35])
        ax.set_xticks(xs, [str(y) for y in all_years], rotation=45)
        ax.legend(fontsize=7)
    ax.set_title("Papers per year, by topic (coarsest communities)")
    ax.set_ylabel("papers")
    return _save(fig, path)


def community_map(store: BrowseStore, edges: list[tuple[str, str, str, float]], level: int, seed: int, path: Path) -> Path:
    communities = store.list_communities(level, members=True)
    member_of = {m: i for i, c in enumerate(communities) for m in c.members}
    links: dict[tuple[int, int], float] = defaultdict(float)
    for _, s, t, w in edges:
        a, b = member_of.get(s), member_of.get(t)
        if a is not None and b is not None and a != b:
            links[(min(a, b), max(a, b))] += float(w or 0.0) or 1.0
    fig, ax = plt.subplots(figsize=(8, 8))
    if communities:
        g = ig.Graph(n=len(communities), edges=sorted(links))
        start = np.random.default_rng(seed).uniform(-1, 1, (len(communities), 2)).tolist()
        layout = np.array(g.layout_fruchterman_reingold(seed=start, weights=[links[k] for k in sorted(links)] or None)
                          .coords) if len(communities) > 1 else np.zeros((1, 2))
        sizes = np.array([len(c.members) for c in communities], dtype=float)
        for (a, b), w in links.items():
            ax.plot(*layout[[a, b]].T, color="#999999", alpha=min(0.8, 0.1 + 0.05 * w), linewidth=0.5 + np.log1p(w) / 2)
        ax.scatter(layout[:, 0], layout[:, 1], s=20 + 600 * sizes / sizes.max(), c=np.arange(len(communities)),
                   cmap="tab20", alpha=0.85, edgecolors="white", zorder=3)
        reports = store.community_reports([c.signature for c in communities])
        for i in np.argsort(-sizes)[:15]:
            r = reports.get(communities[i].signature)
            ax.annotate((r.title if r else communities[i].id)[:30], layout[i], fontsize=7, ha="center", zorder=4)
    ax.set_title(f"Community map (level {level}: {len(communities)} communities)")
    ax.axis("off")
    return _save(fig, path)


def write_plots(store: BrowseStore, out: Path, level: int = 0, seed: int = 42, max_nodes: int = 1500) -> dict[str, Any]:
    """Write every figure and the HTML view into ``out``; returns {name: path} and the stats used."""
    from .graph_view import write_graph_view

    out.mkdir(parents=True, exist_ok=True)
    stats = graph_stats(store)
    edges = store.all_edges()
    g, _ = simple_graph(store.all_entity_ids(), edges)
    levels: dict[int, list[int]] = defaultdict(list)
    for c in store.list_communities(None, members=True):
        levels[c.level].append(len(c.members))
    relation_counts = stats["relation_types"]
    if set(relation_counts) <= {"(untyped)"}:
        relation_counts, relation_title = stats["relation_keywords"], "Relation keywords (relations are untyped)"
    else:
        relation_title = "Relation types"
    top = {f"{n['name']} ({n['type']})": n["degree"] for n in stats["top_nodes_by_degree"]}
    files = {
        "degree_distribution": degree_distribution(g.degree(), out / "degree_distribution.png"),
        "entity_types": _bar(stats["entity_types"], "Entity types", "entities", out / "entity_types.png"),
        "relation_types": _bar(relation_counts, relation_title, "relations", out / "relation_types.png"),
        "top_nodes": _bar(top, "Top 10 entities by degree", "degree", out / "top_nodes.png"),
        "community_sizes": community_sizes(dict(levels), out / "community_sizes.png"),
        "papers_per_year": papers_per_year(store, out / "papers_per_year.png"),
        "community_map": community_map(store, edges, level if level in levels or not levels else min(levels), seed,
                                       out / "community_map.png"),
        "graph_view": write_graph_view(store, out / "graph.html", max_nodes=max_nodes, seed=seed),
    }
    return {"files": {k: str(v) for k, v in files.items()}, "nodes": stats["nodes"], "edges": stats["edges"]}
