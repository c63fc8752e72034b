"""Node-link JSON (``networkx.node_link_graph(data, edges="edges")`` reads it back as a
MultiDiGraph), streamed: nodes are the entities and the papers, edges the relation records with
their predicate and evidence, plus ``mentioned_in`` edges from entities to their papers."""

from __future__ import annotations

import json
from typing import Any, TextIO

from .source import ExportSource, predicate_of


class _Array:
    def __init__(self, out: TextIO):
        self.out = out
        self.first = True
        self.count = 0

    def add(self, item: dict[str, Any]) -> None:
        self.out.write(("" if self.first else ",\n") + "  " + json.dumps(item, ensure_ascii=False))
        self.first = False
        self.count += 1


def write_nodelink(source: ExportSource, out: TextIO) -> dict[str, int]:
    out.write('{"directed": true, "multigraph": true, "graph": {"name": "scholargraph"},\n "nodes": [\n')
    nodes = _Array(out)
    for row in source.rows():
        nodes.add({"id": f"paper:{row.id}", "kind": "paper", "label": row.title, "authors": row.authors,
                   "year": row.year, "doi": row.doi})
    for page in source.entity_pages():
        for e in page:
            nodes.add({"id": e.id, "kind": "entity", "label": e.name, "type": e.type, "description": e.description,
                       "aliases": e.aliases, "weight": e.weight, "documents": e.document_ids})
    out.write('\n ],\n "edges": [\n')
    edges = _Array(out)
    relations = 0
    wanted = set(source.doc_ids) if source.doc_ids else None
    for page in source.entity_pages():  # a second pass: entity -> paper edges (nothing kept in memory)
        for e in page:
            for doc in e.document_ids:
                if wanted is None or doc in wanted:
                    edges.add({"source": e.id, "target": f"paper:{doc}", "key": f"{e.id}|{doc}",
                               "predicate": "mentioned_in"})
    for parts in source.relation_pages():
        for part in parts:
            r = part.relation
            relations += bool(part.records)
            for n, rec in enumerate(part.records):
                edges.add({"source": r.source_id, "target": r.target_id, "key": f"{r.id}/{n}",
                           "predicate": predicate_of(rec), "written": rec.keywords[0] if rec.keywords else "",
                           "description": rec.description, "directed": rec.directed, "document": rec.document_id,
                           "chunk": rec.chunk_id, "sentence": rec.sentence, "level": rec.level,
                           "weight": rec.strength})
    out.write("\n ]\n}\n")
    return {"nodes": nodes.count, "edges": edges.count, "relations": relations}
