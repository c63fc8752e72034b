"""Canonical entity/relation/keyword dicts gathered from model output (see :mod:`.parse`).

Name and description cleaning, and :class:`Collector`, which reads the JSON sections and items
under their usual names (entities/nodes, relationships/edges/triples, entity_name, src_id/head,
content_keywords...). :mod:`.delimited` adds delimiter-style records to the same collector.
"""

from __future__ import annotations

import re
from typing import Any

_EDGE_JUNK = " \t\r\n\"'`*#:;,\u201c\u201d\u2018\u2019"
_MARKDOWN_RE = re.compile(r"\*\*|__|`")


def clean_name(value: Any) -> str:
    """Quotes, markdown and stray tuple brackets stripped, whitespace collapsed."""
    if value is None or isinstance(value, (dict, bool)):
        return ""
    if isinstance(value, list):
        value = ", ".join(str(v) for v in value if v is not None and not isinstance(v, (dict, list)))
    text = " ".join(_MARKDOWN_RE.sub("", str(value)).split())
    while True:
        before = text
        text = text.strip(_EDGE_JUNK)
        if text.startswith("(") and text.count("(") > text.count(")"):
            text = text[1:]
        if text.endswith(")") and text.count(")") > text.count("("):
            text = text[:-1]
        if text == before:
            return text


def clean_description(value: Any) -> str:
    if value is None or isinstance(value, (dict, bool)):
        return ""
    if isinstance(value, list):
        value = " ".join(str(v) for v in value if v is not None)
    return " ".join(str(value).split()).strip(" \"'\u201c\u201d")


# --------------------------------------------------------------------------------------------
# JSON output: sections and items under their usual names
# --------------------------------------------------------------------------------------------

_ENTITY_SECTIONS = {"entities", "entity", "nodes", "entity_list", "named_entities"}
_RELATION_SECTIONS = {"relations", "relationships", "relation", "relationship", "edges", "links", "triples"}
_KEYWORD_SECTIONS = {"keywords", "content_keywords", "high_level_keywords", "low_level_keywords", "key_words",
                     "keyphrases", "key_phrases"}
_NAME = ("name", "entity_name", "entity", "text", "title")
_TYPE = ("type", "entity_type", "category", "label", "class", "kind")
_EDESC = ("description", "entity_description", "desc", "summary", "definition", "explanation")
_SRC = ("source", "src_id", "src", "source_entity", "source_name", "head", "subject", "from", "entity1", "source_id")
_TGT = ("target", "tgt_id", "tgt", "target_entity", "target_name", "tail", "object", "to", "entity2", "target_id")
_RDESC = ("description", "relationship_description", "relation_description", "desc", "summary", "explanation")
_RKW = ("keywords", "relationship_keywords", "relation_keywords", "keyword")
_STRENGTH = ("strength", "weight", "relationship_strength", "relation_strength", "score")
_LABEL = ("relation", "relationship", "predicate", "relation_type", "type", "label")


def _norm_keys(d: dict) -> dict[str, Any]:
    return {re.sub(r"[\s\-]+", "_", str(k).strip().lower()): v for k, v in d.items()}


def _pick(d: dict[str, Any], names: tuple[str, ...]) -> Any:
    for name in names:
        value = d.get(name)
        if value is not None and value != "":
            return value
    return None


def _name_of(d: dict[str, Any]) -> Any:
    name = _pick(d, _NAME)
    if name is None and isinstance(d.get("id"), str):  # graph-style nodes; a numeric id is no name
        name = d["id"]
    return name


def _endpoint(value: Any) -> Any:
    return _name_of(_norm_keys(value)) if isinstance(value, dict) else value


class Collector:
    """Canonical entity/relation/keyword dicts gathered from JSON and delimiter records."""

    def __init__(self) -> None:
        self.entities: list[dict[str, Any]] = []
        self.relations: list[dict[str, Any]] = []
        self.keywords: list[Any] = []
        self.explicit_empty = False
        self.cut_off = False  # a cut-off last delimiter record was dropped
        self.problems: list[str] = []

    def entity(self, d: dict[str, Any]) -> None:
        etype = _pick(d, _TYPE)
        if isinstance(etype, list):  # ["Model", "Method"]: the first is the model's best guess
            etype = next((t for t in etype if isinstance(t, str)), None)
        self.entities.append({"name": _name_of(d), "type": etype, "description": _pick(d, _EDESC)})

    def relation(self, d: dict[str, Any]) -> None:
        keywords = _pick(d, _RKW)
        label = _pick(d, _LABEL)
        if label is not None and not isinstance(label, (dict, list)):
            keywords = [label] + (keywords if isinstance(keywords, list) else [keywords] if keywords else [])
        rel = {"source": _endpoint(_pick(d, _SRC)), "target": _endpoint(_pick(d, _TGT)),
               "keywords": keywords, "description": _pick(d, _RDESC), "strength": _pick(d, _STRENGTH)}
        if rel["description"] is None and label is not None:
            rel["description"] = f"{clean_name(rel['source'])} {clean_name(label)} {clean_name(rel['target'])}"
        self.relations.append({k: v for k, v in rel.items() if v is not None})

    def section(self, kind: str, value: Any) -> None:
        if kind == "keywords":
            self.keywords.extend(value if isinstance(value, list) else [value])
            return
        items = _section_items(value)
        if items is None:
            self.problems.append(f"{kind}: expected a list, got {type(value).__name__}")
            return
        if kind == "entities" and not items:
            self.explicit_empty = True
        for item in items:
            self._section_item(kind, item)

    def _section_item(self, kind: str, item: Any) -> None:
        """One item of an entity or relation list: an object, a name, or a compact tuple."""
        if isinstance(item, dict):
            (self.entity if kind == "entities" else self.relation)(_norm_keys(item))
        elif kind == "entities" and isinstance(item, str):
            self.entities.append({"name": item})
        elif kind == "entities" and isinstance(item, list) and 1 <= len(item) <= 3:
            self.entity(dict(zip(("name", "type", "description"), item, strict=False)))  # compact tuple
        elif kind == "relations" and isinstance(item, list) and len(item) == 3:
            self.relation({"source": item[0], "relation": item[1], "target": item[2]})
        elif kind == "relations" and isinstance(item, list) and len(item) in (4, 5):
            # compact triple (extract/schema.py): source, relation, target, description[, strength]
            self.relation(dict(zip(("source", "relation", "target", "description", "strength"), item,
                                   strict=False)))
        else:
            self.problems.append(f"{kind}: ignored item {str(item)[:60]!r}")

    def json_value(self, value: Any, depth: int = 0) -> None:
        if depth > 5:
            return
        if isinstance(value, list):
            for item in value:
                self.json_value(item, depth + 1)
            return
        if not isinstance(value, dict):
            if depth == 0 or value not in (None, ""):
                self.problems.append(f"ignored JSON {type(value).__name__} {str(value)[:60]!r}")
            return
        d = _norm_keys(value)
        sections = {k: v for k, v in d.items()
                    if (k in _ENTITY_SECTIONS or k in _RELATION_SECTIONS) and isinstance(v, (list, dict))}
        if _pick(d, _SRC) is not None and _pick(d, _TGT) is not None:
            self.relation(d)
        elif sections or (any(k in _KEYWORD_SECTIONS for k in d) and _name_of(d) is None):
            self._sections(d, sections)
        elif _name_of(d) is not None:
            self.entity(d)
        elif len(d) == 1 and isinstance(next(iter(d.values())), (dict, list)):
            self.json_value(next(iter(d.values())), depth + 1)  # {"result": {...}}
        else:
            self.problems.append(f"ignored JSON object with keys {sorted(d)[:6]}")

    def _sections(self, d: dict[str, Any], sections: dict[str, Any]) -> None:
        """An object of sections (``{"entities": [...], "relations": [...], "keywords": [...]}``), in its order."""
        for key, v in d.items():
            if key in _ENTITY_SECTIONS and key in sections:
                self.section("entities", v)
            elif key in _RELATION_SECTIONS and key in sections:
                self.section("relations", v)
            elif key in _KEYWORD_SECTIONS:
                self.section("keywords", v)


def _section_items(value: Any) -> list[Any] | None:
    """A section's items: its list; an object of entities keyed by name, as a list; one object, as a
    list of one; None for anything else."""
    if isinstance(value, dict):
        nd = _norm_keys(value)
        if _name_of(nd) is None and _pick(nd, _SRC) is None:  # {"BERT": {...}} / {"BERT": "desc"}
            return [{"name": k, **v} if isinstance(v, dict) else {"name": k, "description": v}
                    for k, v in value.items()]
        return [value]
    return value if isinstance(value, list) else None
