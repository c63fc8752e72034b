"""Read-only views of the stored graph for browsing (HTTP API, web app, notebooks).

Neighbourhoods and subgraphs come from the in-memory graph (:mod:`.memory`); node and edge
details from the store. Each view is plain JSON-ready data: ``{"nodes": [...], "edges": [...]}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from ..errors import ConfigError
from ..text.printable import clean
from ..text.sentences import split_sentences
from .memory import MemoryGraph, PartialGraph, load_graph

DESCRIPTION_CHARS = 400
EVIDENCE_CHUNKS = 20
SENTENCES_PER_CHUNK = 3


def _graph(store, max_relations: int | None) -> MemoryGraph:
    """The whole graph, or above ``max_relations`` relations the part a view reads (:class:`PartialGraph`)."""
    if max_relations is not None and store.count("relations") > max_relations:
        return PartialGraph(store)
    return load_graph(store)


def neighbourhood(store, entity_id: str, depth: int = 1, limit: int = 60, max_relations: int | None = None) -> dict:
    """``entity_id`` and its neighbours up to ``depth`` hops, heaviest edges first, at most ``limit``
    nodes; every stored edge among the returned nodes is included."""
    graph = _graph(store, max_relations)
    order, seen, frontier = [entity_id], {entity_id}, [entity_id]
    truncated = False
    for _ in range(max(depth, 1)):
        grown = []
        for node in frontier:
            for neighbour in _by_weight(graph, node):
                if neighbour in seen:
                    continue
                if len(order) >= limit:
                    truncated = True
                    break
                seen.add(neighbour)
                order.append(neighbour)
                grown.append(neighbour)
        frontier = grown
    view = graph_view(store, graph, order)
    view.update(center=entity_id, truncated=truncated, degree=graph.degree(entity_id))
    return view


def subgraph(store, entity_ids: Sequence[str], max_length: int = 4, max_relations: int | None = None) -> dict:
    """The given entities plus the shortest paths (at most ``max_length`` edges) joining them."""
    graph = _graph(store, max_relations)
    nodes, _, paths = graph.union_of_shortest_paths(list(entity_ids), max_length=max_length)
    view = graph_view(store, graph, [*entity_ids, *sorted(nodes - set(entity_ids))])
    view["paths"] = paths
    return view


def _by_weight(graph: MemoryGraph, node: str) -> list[str]:
    adj = graph.adjacency(node)
    if not adj:
        return []
    return sorted(adj, key=lambda n: (-float(adj[n]["weight"]), n))


def graph_view(store, graph: MemoryGraph, node_ids: Iterable[str]) -> dict:
    ids = list(dict.fromkeys(node_ids))
    entities = store.get_entities(ids)
    ids = [i for i in ids if i in entities]
    present = set(ids)
    graph.fetch(ids)
    adj = graph.graph.adj
    pairs = [(a, b, adj[a][b]) for a in ids if a in adj for b in adj[a] if b in present and a < b]
    relations = store.get_relations(d["rid"] for _, _, d in pairs)
    nodes = [_node(entities[i], graph.degree(i)) for i in ids]
    edges = [_edge(a, b, d, relations.get(d["rid"])) for a, b, d in pairs]
    return {"nodes": nodes, "edges": edges}


def _node(entity, degree: int) -> dict:
    return {"id": entity.id, "name": entity.name, "type": entity.type, "description": _short(entity.description),
            "aliases": entity.aliases, "weight": entity.weight, "degree": degree, "documents": len(entity.document_ids)}


def _edge(a: str, b: str, data: dict, relation) -> dict:
    source, target = (relation.source_id, relation.target_id) if relation else (a, b)
    return {"id": data["rid"], "source": source, "target": target, "weight": float(data["weight"]),
            "relations": list(data["rids"]), "description": _short(relation.description) if relation else "",
            "keywords": relation.keywords if relation else [], "directed": bool(relation and relation.directed)}


def _short(text: str | None) -> str:
    text = text or ""
    return text if len(text) <= DESCRIPTION_CHARS else text[: DESCRIPTION_CHARS - 1].rstrip() + "…"


def relation_evidence(store, relation_id: str) -> dict | None:
    """A relation with the sentences of its source passages that name its two entities."""
    relation = store.get_relations([relation_id]).get(relation_id)
    if relation is None:
        return None
    ends = store.get_entities([relation.source_id, relation.target_id])
    names = {i: _names(ends[i]) if i in ends else [] for i in (relation.source_id, relation.target_id)}
    chunks = store.get_chunks(relation.chunk_ids[:EVIDENCE_CHUNKS])
    docs = store.documents_by_id(c.document_id for c in chunks.values())
    evidence = []
    for chunk_id in relation.chunk_ids[:EVIDENCE_CHUNKS]:
        chunk = chunks.get(chunk_id)
        if chunk is None:
            continue
        doc = docs.get(chunk.document_id)
        evidence.append({
            "chunk_id": chunk.id, "document_id": chunk.document_id, "title": doc.title if doc else None,
            "section": chunk.section, "page_start": chunk.page_start, "page_end": chunk.page_end,
            "sentences": evidence_sentences(chunk.text, names[relation.source_id], names[relation.target_id]),
        })
    return {
        "id": relation.id, "description": relation.description, "keywords": relation.keywords,
        "types": relation.types, "weight": relation.weight, "directed": relation.directed,
        "source": _end(ends.get(relation.source_id), relation.source_id),
        "target": _end(ends.get(relation.target_id), relation.target_id),
        "evidence": evidence,
    }


def _names(entity) -> list[str]:
    return [n.lower() for n in dict.fromkeys([entity.name, *entity.aliases]) if n and len(n) > 1]


def _end(entity, entity_id: str) -> dict:
    return {"id": entity_id, "name": entity.name if entity else entity_id, "type": entity.type if entity else None}


def evidence_sentences(text: str, source_names: Sequence[str], target_names: Sequence[str]) -> list[str]:
    """Sentences naming both ends first; else those naming either; at most a few."""
    sentences = split_sentences(text)
    lowered = [s.lower() for s in sentences]

    def names_any(names: Sequence[str], sentence: str) -> bool:
        return any(n in sentence for n in names)

    both = [s for s, low in zip(sentences, lowered, strict=True)
            if names_any(source_names, low) and names_any(target_names, low)]
    if both:
        return both[:SENTENCES_PER_CHUNK]
    either = [s for s, low in zip(sentences, lowered, strict=True)
              if names_any(source_names, low) or names_any(target_names, low)]
    return either[:SENTENCES_PER_CHUNK]


def export_graph(store, fmt: str = "json") -> str:
    """The whole graph: node-link JSON, or GraphML for graph tools (Gephi, Cytoscape, yEd)."""
    import networkx as nx

    entities = {i: clean(e) for i, e in store.get_entities(store.all_entity_ids()).items()}
    relations = {i: clean(r) for i, r in store.get_relations(rid for rid, *_ in store.all_edges()).items()}
    if fmt == "json":
        return json.dumps({
            "nodes": [{"id": e.id, "name": e.name, "type": e.type, "description": e.description, "aliases": e.aliases,
                       "weight": e.weight, "documents": e.document_ids} for e in entities.values()],
            "edges": [{"id": r.id, "source": r.source_id, "target": r.target_id, "description": r.description,
                       "keywords": r.keywords, "types": r.types, "weight": r.weight, "directed": r.directed,
                       "documents": r.document_ids} for r in relations.values()],
        }, ensure_ascii=False)
    if fmt != "graphml":
        raise ConfigError(f"unknown export format {fmt!r} (use json or graphml)")
    g = nx.MultiDiGraph()
    for e in entities.values():
        g.add_node(e.id, name=e.name, type=e.type or "", description=e.description or "", weight=float(e.weight or 0))
    for r in relations.values():
        g.add_edge(r.source_id, r.target_id, key=r.id, description=r.description or "", weight=float(r.weight or 0),
                   keywords=", ".join(r.keywords), directed=bool(r.directed))
    return "\n".join(nx.generate_graphml(g))
