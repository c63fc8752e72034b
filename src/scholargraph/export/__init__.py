"""``scholargraph export``: the workspace (or some papers) as Turtle, JSON-LD, GraphML, Neo4j CSV or
node-link JSON, streamed (papers one at a time, entities and relations a page at a time). Works on
any workspace, whatever profile built it and whether or not an LLM is configured.

See docs/export.md for the RDF model (namespaces, classes, properties) and the Neo4j import command.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from ..errors import ConfigError
from ..store.base import BrowseStore
from .source import PAGE, ExportSource

FORMATS = ("turtle", "jsonld", "graphml", "neo4j-csv", "json")
SUFFIX = {"turtle": ".ttl", "jsonld": ".jsonld", "graphml": ".graphml", "json": ".json"}

__all__ = ["FORMATS", "export_workspace"]


@contextlib.contextmanager
def _output(out: str | Path | TextIO | None) -> Iterator[TextIO]:
    if out is None or out == "-":
        yield sys.stdout
    elif isinstance(out, (str, Path)):
        path = Path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as fh:
            yield fh
    else:
        yield out


def export_workspace(store: BrowseStore, fmt: str, out: str | Path | TextIO | None = None,
                     doc_ids: Sequence[str] | None = None, base: str | None = None, page: int = PAGE) -> dict[str, Any]:
    """Write the export; returns what was written (counts, paths). ``out``: a file path, an open
    text stream, or None / "-" for stdout; for ``neo4j-csv`` a directory (default ./scholargraph_neo4j)."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")
    source = ExportSource(store, doc_ids, page)
    report: dict[str, Any] = {"format": fmt, "documents": [r.id for r in source.rows()]}
    if fmt == "neo4j-csv":
        if out is not None and not isinstance(out, (str, Path)):
            raise ConfigError("neo4j-csv writes a directory of files: give --out DIRECTORY")
        from .neo4j_csv import write_neo4j

        return {**report, **write_neo4j(source, Path(out or "scholargraph_neo4j"))}
    with _output(out) as stream:
        if fmt == "graphml":
            from .graphml import write_graphml

            report.update(write_graphml(source, stream))
        elif fmt == "json":
            from .nodelink import write_nodelink

            report.update(write_nodelink(source, stream))
        else:
            report["triples"] = _write_rdf(source, fmt, stream, base)
    if isinstance(out, (str, Path)) and out != "-":
        report["path"] = str(out)
    return report


def _write_rdf(source: ExportSource, fmt: str, stream: TextIO, base: str | None) -> int:
    """The workspace view (no ``--doc``): every paper, the merged graph, and each local KG with its
    ``skos:exactMatch`` links. The paper view (``--doc``): a localkg paper's own local KG exactly as
    it was built (no later paper changes it); other selected papers as their part of the merged graph."""
    from .rdf import (
        DEFAULT_BASE,
        JsonLdWriter,
        Terms,
        TurtleWriter,
        entity_graph,
        local_kg_graph,
        paper_graph,
        relation_graph,
    )

    terms = Terms(base or DEFAULT_BASE)
    writer: TurtleWriter | JsonLdWriter = TurtleWriter(stream) if fmt == "turtle" else JsonLdWriter(stream, terms)
    paper_view = source.doc_ids is not None
    local_docs: set[str] = set()
    seen: set[str] = set()  # predicates defined so far
    for part in source.papers():
        writer.write(paper_graph(part, terms, local=paper_view))
        if part.local is not None:
            local_docs.add(part.row.id)
            links = None if paper_view else source.linked_entities([e.entity_id for e in part.local.entities])
            writer.write(local_kg_graph(part.local, terms, seen, links))
    merged = source if not paper_view else source.narrowed([d for d in source.doc_ids or [] if d not in local_docs])
    if merged is not None:
        for page in merged.entity_pages():
            writer.write(entity_graph(page, terms))
        for parts in merged.relation_pages():
            writer.write(relation_graph(parts, terms, seen))
    writer.close()
    return writer.triples
