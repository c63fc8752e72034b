"""CSV files for ``neo4j-admin database import`` (Neo4j 5), written row by row into a directory,
with the import command in ``import.sh`` beside them:

    papers.csv        (:Paper)                 entities.csv   (:Entity plus :NamedEntity ... when known)
    sentences.csv     (:Sentence, localkg)     relations.csv  (Entity)-[:PREDICATE {sentence, paper, level}]->(Entity)
    mentioned_in.csv  (Entity)-[:MENTIONED_IN]->(Paper)
    mentions.csv      (Entity)-[:MENTION {surface, charStart, charEnd, category}]->(Sentence)
    sentence_of.csv   (Sentence)-[:PART_OF]->(Paper)

Relationship types are the predicates in upper snake case (``is part of`` -> ``IS_PART_OF``,
``skos:broader`` -> ``BROADER``); arrays use ``;`` (neo4j-admin's default array delimiter).
"""

from __future__ import annotations

import csv
import re
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from .source import BROADER, ExportSource, predicate_of

FILES = {
    "papers": ["paperId:ID(Paper)", "title", "authors:string[]", "year:int", "doi", ":LABEL"],
    "entities": ["entityId:ID(Entity)", "name", "type", "description", "aliases:string[]", "weight:float", ":LABEL"],
    "sentences": ["sentenceId:ID(Sentence)", "paper", "ordinal:int", "section", "page:int", "text", ":LABEL"],
    "relations": [":START_ID(Entity)", ":END_ID(Entity)", ":TYPE", "predicate", "written", "description", "paper",
                  "sentence", "level", "directed:boolean", "weight:float"],
    "mentioned_in": [":START_ID(Entity)", ":END_ID(Paper)", ":TYPE"],
    "mentions": [":START_ID(Entity)", ":END_ID(Sentence)", ":TYPE", "surface", "charStart:int", "charEnd:int",
                 "category", "level"],
    "sentence_of": [":START_ID(Sentence)", ":END_ID(Paper)", ":TYPE"],
}
NODE_FILES = ("papers", "entities", "sentences")
LABELS = {"Named Entity": "Entity;NamedEntity", "General Concept": "Entity;GeneralConcept",
          "Other Entity": "Entity;OtherEntity"}


def relationship_type(predicate: str) -> str:
    if predicate == BROADER:
        return "BROADER"
    name = re.sub(r"[^A-Za-z0-9]+", "_", predicate).strip("_").upper()
    return name if name[:1].isalpha() else f"R_{name}" if name else "RELATED_TO"


def _array(values: list[str]) -> str:
    return ";".join(v.replace(";", ",") for v in values)


def import_command(directory: Path) -> str:
    nodes = " ".join(f"--nodes={name}.csv" for name in NODE_FILES)
    rels = " ".join(f"--relationships={name}.csv" for name in FILES if name not in NODE_FILES)
    return (f"neo4j-admin database import full neo4j --overwrite-destination --multiline-fields=true "
            f"--array-delimiter=';' {nodes} {rels}")


def write_neo4j(source: ExportSource, directory: Path) -> dict[str, Any]:
    directory.mkdir(parents=True, exist_ok=True)
    counts = dict.fromkeys(FILES, 0)
    with ExitStack() as stack:
        writers = {}
        for name, header in FILES.items():
            fh = stack.enter_context((directory / f"{name}.csv").open("w", encoding="utf-8", newline=""))
            writers[name] = csv.writer(fh)
            writers[name].writerow(header)

        def row(name: str, *values: Any) -> None:
            writers[name].writerow(["" if v is None else v for v in values])
            counts[name] += 1

        wanted = set(source.doc_ids) if source.doc_ids else None
        for part in source.papers():
            r = part.row
            row("papers", r.id, r.title, _array(r.authors), r.year, r.doi, "Paper")
            for s in part.sentences:
                sid = f"{r.id}#{s.ordinal}"
                row("sentences", sid, r.id, s.ordinal, s.section, s.page, s.text, "Sentence")
                row("sentence_of", sid, r.id, "PART_OF")
            for m in part.mentions:
                row("mentions", m.entity_id, f"{r.id}#{m.sentence_no}", "MENTION", m.surface, m.char_start, m.char_end,
                    m.category, m.level)
        for page in source.entity_pages():
            for e in page:
                row("entities", e.id, e.name, e.type, e.description, _array(e.aliases), float(e.weight),
                    LABELS.get(e.type, "Entity"))
                for doc in e.document_ids:
                    if wanted is None or doc in wanted:
                        row("mentioned_in", e.id, doc, "MENTIONED_IN")
        for parts in source.relation_pages():
            for rel_part in parts:
                rel = rel_part.relation
                for rec in rel_part.records:
                    predicate = predicate_of(rec)
                    sentence = f"{rec.document_id}#{rec.sentence}" if rec.sentence is not None else ""
                    row("relations", rel.source_id, rel.target_id, relationship_type(predicate), predicate,
                        rec.keywords[0] if rec.keywords else "", rec.description, rec.document_id, sentence, rec.level,
                        "true" if rec.directed else "false", float(rec.strength))
    command = import_command(directory)
    script = directory / "import.sh"
    script.write_text("#!/bin/sh\n# Load these CSV files into an empty Neo4j 5 database named neo4j (stop it first).\n"
                      f'cd "$(dirname "$0")" && {command} "$@"\n', encoding="utf-8")
    script.chmod(0o755)
    return {"files": {name: str(directory / f"{name}.csv") for name in FILES}, "rows": counts, "command": command}
