"""GraphML for graph tools (Gephi, Cytoscape, yEd, ``networkx.read_graphml``), written element by
element: entity nodes, then one edge per relation record (a multigraph: two predicates between the
same entities are two edges), each edge with its predicate, evidence sentence and paper."""

from __future__ import annotations

from typing import TextIO
from xml.sax.saxutils import escape, quoteattr

from .source import ExportSource, predicate_of

NODE_KEYS = (("label", "string"), ("type", "string"), ("description", "string"), ("aliases", "string"),
             ("documents", "string"), ("weight", "double"))
EDGE_KEYS = (("predicate", "string"), ("description", "string"), ("directed", "boolean"), ("document", "string"),
             ("sentence", "string"), ("level", "string"), ("weight", "double"))


def _data(key: str, value: object) -> str:
    if isinstance(value, bool):
        value = "true" if value else "false"
    return f'<data key="{key}">{escape(str(value))}</data>'


def write_graphml(source: ExportSource, out: TextIO) -> dict[str, int]:
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n'
              '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
              'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
              'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
              'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">\n')
    for name, kind in NODE_KEYS:
        out.write(f'  <key id="n_{name}" for="node" attr.name="{name}" attr.type="{kind}"/>\n')
    for name, kind in EDGE_KEYS:
        out.write(f'  <key id="e_{name}" for="edge" attr.name="{name}" attr.type="{kind}"/>\n')
    out.write('  <graph id="scholargraph" edgedefault="directed" parse.nodeids="free" parse.edgeids="free">\n')
    nodes = edges = relations = 0
    texts: dict[tuple[str, int], str] = {}
    for page in source.entity_pages():
        for e in page:
            values = {"label": e.name, "type": e.type, "description": e.description, "aliases": "; ".join(e.aliases),
                      "documents": "; ".join(e.document_ids), "weight": float(e.weight)}
            out.write(f"    <node id={quoteattr(e.id)}>" + "".join(_data(f"n_{k}", v) for k, v in values.items())
                      + "</node>\n")
            nodes += 1
    for parts in source.relation_pages():
        for part in parts:
            r = part.relation
            relations += bool(part.records)
            for n, rec in enumerate(part.records):
                sentence = _sentence(source, texts, rec.document_id, rec.sentence)
                values = {"predicate": predicate_of(rec), "description": rec.description, "directed": rec.directed,
                          "document": rec.document_id, "sentence": sentence, "level": rec.level,
                          "weight": float(rec.strength)}
                out.write(f"    <edge id={quoteattr(f'{r.id}/{n}')} source={quoteattr(r.source_id)} "
                          f"target={quoteattr(r.target_id)}>"
                          + "".join(_data(f"e_{k}", v) for k, v in values.items() if v != "") + "</edge>\n")
                edges += 1
    out.write("  </graph>\n</graphml>\n")
    return {"nodes": nodes, "edges": edges, "relations": relations}


def _sentence(source: ExportSource, cache: dict[tuple[str, int], str], doc: str, ordinal: int | None) -> str:
    """The evidence sentence's text (a paper's sentences are read once, when first needed)."""
    if ordinal is None:
        return ""
    if (doc, ordinal) not in cache:
        if len(cache) > 200_000:
            cache.clear()
        cache.update({(doc, s.ordinal): s.text for s in source.sentences_of(doc)})
    return cache.get((doc, ordinal), "")
