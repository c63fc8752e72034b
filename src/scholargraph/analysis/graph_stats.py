"""Graph statistics (seed 001 §IV, Table I, Figs. 3-5): size, density, degrees, components,
clustering, communities per level with modularity, entity/relation type distributions, papers per
year and the citation network, for ``scholargraph stats --graph``.

The graph is taken undirected and simple for the structural measures (one edge per entity pair,
as in the in-memory graph); ``relations`` counts the stored relations themselves.
"""

from __future__ import annotations

from collections import Counter
from statistics import mean
from typing import Any

import igraph as ig

from ..graph.citations import citation_counts
from ..graph.community_update import state
from ..models import DocStatus
from ..store.base import BrowseStore

TOP = 10


def simple_graph(entity_ids: list[str], edges: list[tuple[str, str, str, float]]) -> tuple[ig.Graph, list[str]]:
    """Every entity (isolated ones too) and one undirected edge per entity pair, in sorted order."""
    names = sorted(set(entity_ids) | {x for _, s, t, _ in edges for x in (s, t)})
    index = {n: i for i, n in enumerate(names)}
    pairs = sorted({(min(index[s], index[t]), max(index[s], index[t])) for _, s, t, _ in edges if s != t})
    return ig.Graph(n=len(names), edges=pairs), names


def _sizes(sizes: list[int]) -> dict[str, Any]:
    if not sizes:
        return {"communities": 0, "average_size": 0.0, "max_size": 0, "min_size": 0}
    return {"communities": len(sizes), "average_size": round(mean(sizes), 2), "max_size": max(sizes),
            "min_size": min(sizes)}


def community_levels(store: BrowseStore) -> list[dict[str, Any]]:
    info = state(store)
    by_level: dict[int, list[int]] = {}
    for c in store.list_communities(None, members=True):
        by_level.setdefault(c.level, []).append(len(c.members))
    return [{"level": lv, **_sizes(sizes), "entities_covered": sum(sizes),
             "modularity": round(float(info.get("modularity", {}).get(str(lv), 0.0)), 4)}
            for lv, sizes in sorted(by_level.items())]


def type_distributions(store: BrowseStore, entity_ids: list[str], relation_ids: list[str]) -> dict[str, Any]:
    entities = store.get_entities(entity_ids, sources=False)
    relations = store.get_relations(relation_ids, sources=False)
    entity_types = Counter(e.type or "(untyped)" for e in entities.values())
    relation_types = Counter(t for r in relations.values() for t in (r.types or ["(untyped)"]))
    keywords = Counter(k.lower() for r in relations.values() for k in r.keywords if k.strip())
    return {"entity_types": dict(entity_types.most_common()), "relation_types": dict(relation_types.most_common()),
            "relation_keywords": dict(keywords.most_common(30)), "names": {i: (e.name, e.type) for i, e in entities.items()}}


def papers_per_year(store: BrowseStore) -> dict[str, int]:
    years = Counter(str(d.year) if d.year else "unknown" for d in store.list_documents() if d.status == DocStatus.PROCESSED)
    return dict(sorted(years.items()))


def citation_summary(store: BrowseStore) -> dict[str, Any]:
    refs = store.references()
    docs = {d.id for d in store.list_documents() if d.status == DocStatus.PROCESSED}
    cited_by, cites = citation_counts(refs)
    edges = {(r.citing_id, r.target_id) for r in refs if r.target_id in docs}
    return {
        "references": len(refs), "references_matched": sum(1 for r in refs if r.target_id in docs),
        "stub_papers": len(store.stub_papers()), "edges_between_papers": len(edges),
        "papers_citing": sum(1 for d in docs if cites[d]), "papers_cited": sum(1 for d in docs if cited_by[d]),
        "most_cited": [{"id": p, "cited_by": n} for p, n in cited_by.most_common(TOP)],
    }


def graph_stats(store: BrowseStore) -> dict[str, Any]:
    """Every measure of ``stats --graph``; the keys are stable (see docs/cli.md)."""
    edges = store.all_edges()
    entity_ids = store.all_entity_ids()
    g, names = simple_graph(entity_ids, edges)
    n, m = g.vcount(), g.ecount()
    degrees = g.degree() if n else []
    components = g.connected_components() if n else []
    sizes = sorted((len(c) for c in components), reverse=True)
    types = type_distributions(store, entity_ids, [e[0] for e in edges])
    label = types.pop("names")
    top = sorted(range(n), key=lambda i: (-degrees[i], names[i]))[:TOP]
    levels = community_levels(store)
    return {
        "nodes": n,
        "edges": m,
        "relations": len(edges),
        "density": round(2 * m / (n * (n - 1)), 8) if n > 1 else 0.0,
        "average_degree": round(2 * m / n, 4) if n else 0.0,
        "max_degree": max(degrees) if degrees else 0,
        "isolated_nodes": sum(1 for d in degrees if d == 0),
        "connected_components": len(sizes),
        "largest_component": sizes[0] if sizes else 0,
        "largest_component_share": round(sizes[0] / n, 4) if n else 0.0,
        "clustering_coefficient": round(g.transitivity_avglocal_undirected(mode="zero"), 4) if n else 0.0,
        "transitivity": round(g.transitivity_undirected(), 4) if m else 0.0,
        "communities": {"levels": levels, "per_level": {str(lv["level"]): lv["communities"] for lv in levels},
                        "modularity": {str(lv["level"]): lv["modularity"] for lv in levels}},
        "entity_types": types["entity_types"],
        "relation_types": types["relation_types"],
        "relation_keywords": types["relation_keywords"],
        "papers_per_year": papers_per_year(store),
        "top_nodes_by_degree": [{"id": names[i], "name": label.get(names[i], ("", ""))[0],
                                 "type": label.get(names[i], ("", ""))[1], "degree": degrees[i]} for i in top],
        "citations": citation_summary(store),
    }
