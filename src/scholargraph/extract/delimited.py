"""Delimiter-style extraction records (LightRAG and friends) into a :class:`.collector.Collector`.

``("entity"<|>NAME<|>TYPE<|>DESC)##...<|COMPLETE|>`` and its variants: ``<|>``, ``<|#|>``, ``|``
or tab between fields; ``##`` or newlines between records; with or without parentheses, quotes
and numbering.
"""

from __future__ import annotations

import re

from .collector import Collector, clean_description, clean_name

_COMPLETE_RE = re.compile(r"<\|?\s*COMPLETE\s*\|?>|\{?completion_delimiter\}?", re.I)
_RECORD_SPLIT_RE = re.compile(
    r"##+|\n|\)\s*(?=\(\s*[\"'\u201c]?(?:entity|relationship|relation|content_keywords)\b)", re.I)
_PIPE_SPLIT_RE = re.compile(r"\s*(?:<\|[^|<>\n]{0,12}\|>|<\|>|<\|\||\|\||<\||\|>|\|)\s*")
_NUMBERING_RE = re.compile(r"^\s*(?:\d{1,3}[.):]|\(\d{1,3}\)|[-*\u2022])\s*")
_RECORD_KINDS = {
    "entity": "entity", "entities": "entity", "node": "entity",
    "relationship": "relation", "relation": "relation", "relationships": "relation", "relations": "relation",
    "edge": "relation", "rel": "relation",
    "content_keywords": "keywords", "keywords": "keywords", "high_level_keywords": "keywords",
    "low_level_keywords": "keywords", "content keywords": "keywords",
}
_STRENGTH_RE = re.compile(r"[-+]?\d+(?:\.\d+)?(?:\s*/\s*10)?")


_PARTIAL_MARKER_RE = re.compile(r"<\|[#A-Za-z]*\|?>?\s*$")
_MIN_FIELDS = {"entity": 4, "relation": 5, "keywords": 2}


def read_delimited(text: str, out: Collector) -> int:
    """Adds the delimiter-style records in ``text`` to ``out``; returns how many were found.

    Without a completion marker, a last record that is cut off (an open parenthesis, or fewer
    fields than its kind has) is dropped: output that hit ``max_tokens`` keeps complete records.
    """
    found = 0
    open_tail = not _COMPLETE_RE.search(text) and not re.search(r"(?:##|\n)[ \t]*$", text)
    if open_tail:
        text = _PARTIAL_MARKER_RE.sub("", text)
    pieces = [p.strip() for p in _RECORD_SPLIT_RE.split(_COMPLETE_RE.sub("\n", text))]
    pieces = [p for p in pieces if p]
    for n, piece in enumerate(pieces):
        record = _NUMBERING_RE.sub("", piece).strip()
        opened = record.startswith("(")
        closed = record.endswith(")")
        if opened:
            record = record[1:].rstrip().removesuffix(")")
        fields = _PIPE_SPLIT_RE.split(record) if "|" in record else record.split("\t")
        while fields and not fields[0].strip():
            fields.pop(0)
        while fields and not fields[-1].strip():
            fields.pop()
        if len(fields) < 2:
            continue
        kind = _RECORD_KINDS.get(clean_name(fields[0]).lower().replace("-", "_"))
        if kind is None:
            continue
        if open_tail and n == len(pieces) - 1 and ((opened and not closed) or len(fields) < _MIN_FIELDS[kind]):
            out.problems.append(f"dropped the cut-off last record {piece[:60]!r}")
            out.cut_off = True
            continue
        if _add_record(out, kind, fields):
            found += 1
    return found


def _add_record(out: Collector, kind: str, fields: list[str]) -> bool:
    """One record's fields into ``out``; False for a relation without both endpoints."""
    if kind == "entity":
        out.entities.append({"name": fields[1], "type": fields[2] if len(fields) > 2 else None,
                             "description": " ".join(fields[3:])})
    elif kind == "keywords":
        out.keywords.append(", ".join(fields[1:]))
    elif len(fields) >= 3:
        rest = [clean_description(f) for f in fields[3:]]
        strength = rest.pop() if rest and _STRENGTH_RE.fullmatch(rest[-1]) else None
        # Old LightRAG: DESC, KEYWORDS, STRENGTH; new: KEYWORDS, DESC. The wordier is the description.
        desc = max(rest, key=lambda f: len(f.split()), default="")
        keywords = [f for f in rest if f is not desc]
        rel = {"source": fields[1], "target": fields[2], "description": desc, "keywords": ", ".join(keywords)}
        if strength is not None:
            rel["strength"] = strength
        out.relations.append(rel)
    else:
        return False
    return True
