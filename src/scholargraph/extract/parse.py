"""One parser for the extraction output of every LLM profile.

* :func:`parse_json` (from :mod:`.json_repair`) -- the JSON in a model answer, repaired.
* :func:`coerce` -- light JSON-schema validation that repairs instead of rejecting: numeric
  strings become numbers, "a, b" becomes ["a", "b"], invalid array items are dropped and
  reported, and only a broken required field fails an object.
* :data:`EXTRACTION_SCHEMA` -- the compact schema sent as ``response_format`` json_schema.
* :func:`parse_extraction` -- JSON (with the usual key variants), LightRAG-style delimiter
  records (``("entity"<|>NAME<|>TYPE<|>DESC)##...<|COMPLETE|>``), or a mix of both, into an
  :class:`~scholargraph.models.Extraction`. Hopeless output raises
  :class:`~scholargraph.errors.ModelOutputError` with the raw text, for a ``ChunkFailure``.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from ..errors import ModelOutputError
from ..models import EntityRecord, Extraction, KeywordRecord, RelationRecord
from .json_repair import SPLIT_RE, Invalid, coerce, coerce_value, parse_json, parse_json_result, strip_reasoning
from .text_utils import fold_plural

__all__ = ["EXTRACTION_SCHEMA", "coerce", "map_entity_type", "parse_extraction", "parse_json"]

log = logging.getLogger(__name__)

_STR = {"type": "string"}
EXTRACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "entities": {"type": "array", "items": {"type": "object", "properties": {
            "name": _STR, "type": _STR, "description": _STR}, "required": ["name"]}},
        "relations": {"type": "array", "items": {"type": "object", "properties": {
            "source": _STR, "target": _STR, "keywords": {"type": "array", "items": _STR},
            "description": _STR, "strength": {"type": "number", "minimum": 0, "maximum": 10}},
            "required": ["source", "target"]}},
        "keywords": {"type": "array", "items": _STR},
    },
    "required": ["entities"],
}

MAX_NAME_CHARS = 120

# --------------------------------------------------------------------------------------------
# Entity types and names
# --------------------------------------------------------------------------------------------


def _type_key(text: str) -> str:
    return re.sub(r"[\s_\-]+", "", text).casefold().replace("isation", "ization")


def _singular_key(text: str) -> str:
    words = re.split(r"[\s_\-]+", text.strip())
    return _type_key(" ".join(words[:-1] + [fold_plural(words[-1])])) if words else ""


def map_entity_type(raw_type: str, entity_types: list[str], default_type: str = "Concept") -> str:
    """The allowed type closest to ``raw_type``: exact (case/space-insensitive), then
    singular/plural, then one containing the other (also per "/"-part, "Gene" -> "Gene/Protein");
    else ``default_type`` when allowed, else the last allowed type."""
    if not entity_types:
        return default_type
    fallback = next((t for t in entity_types if _type_key(t) == _type_key(default_type)), entity_types[-1])
    raw = _clean_name(raw_type)
    key = _type_key(raw)
    if len(key) < 2:
        return fallback
    for t in entity_types:
        if _type_key(t) == key:
            return t
    skey = _singular_key(raw)
    for t in entity_types:
        if _singular_key(t) == skey or any(_singular_key(p) == skey for p in t.split("/")):
            return t
    inside = [t for t in entity_types if len(_type_key(t)) >= 3 and _singular_key(t) in skey]
    if inside:  # "Research Method" -> "Method": the longest allowed type inside the raw type
        return max(inside, key=lambda t: len(_type_key(t)))
    around = [t for t in entity_types if len(skey) >= 3 and skey in _type_key(t)]
    if around:  # "Gene" -> "Gene/Protein": the shortest allowed type containing it
        return min(around, key=lambda t: len(_type_key(t)))
    return fallback


_EDGE_JUNK = " \t\r\n\"'`*#:;,\u201c\u201d\u2018\u2019"
_MARKDOWN_RE = re.compile(r"\*\*|__|`")


def _clean_name(value: Any) -> str:
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


def _clean_description(value: Any) -> str:
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

_ITEM = EXTRACTION_SCHEMA["properties"]
_ENTITY_SCHEMA = _ITEM["entities"]["items"]
_RELATION_SCHEMA = _ITEM["relations"]["items"]


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


class _Collector:
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
            rel["description"] = f"{_clean_name(rel['source'])} {_clean_name(label)} {_clean_name(rel['target'])}"
        self.relations.append({k: v for k, v in rel.items() if v is not None})

    def section(self, kind: str, value: Any) -> None:
        if kind == "keywords":
            self.keywords.extend(value if isinstance(value, list) else [value])
            return
        if isinstance(value, dict):
            nd = _norm_keys(value)
            if _name_of(nd) is None and _pick(nd, _SRC) is None:  # {"BERT": {...}} / {"BERT": "desc"}
                value = [{"name": k, **v} if isinstance(v, dict) else {"name": k, "description": v}
                         for k, v in value.items()]
            else:
                value = [value]
        if not isinstance(value, list):
            self.problems.append(f"{kind}: expected a list, got {type(value).__name__}")
            return
        if kind == "entities" and not value:
            self.explicit_empty = True
        for item in value:
            if isinstance(item, dict):
                (self.entity if kind == "entities" else self.relation)(_norm_keys(item))
            elif kind == "entities" and isinstance(item, str):
                self.entities.append({"name": item})
            elif kind == "relations" and isinstance(item, list) and len(item) == 3:
                self.relation({"source": item[0], "relation": item[1], "target": item[2]})
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
            for key, v in d.items():
                if key in _ENTITY_SECTIONS and key in sections:
                    self.section("entities", v)
                elif key in _RELATION_SECTIONS and key in sections:
                    self.section("relations", v)
                elif key in _KEYWORD_SECTIONS:
                    self.section("keywords", v)
        elif _name_of(d) is not None:
            self.entity(d)
        elif len(d) == 1 and isinstance(next(iter(d.values())), (dict, list)):
            self.json_value(next(iter(d.values())), depth + 1)  # {"result": {...}}
        else:
            self.problems.append(f"ignored JSON object with keys {sorted(d)[:6]}")


# --------------------------------------------------------------------------------------------
# Delimiter records (LightRAG and friends)
# --------------------------------------------------------------------------------------------

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


def _delimited(text: str, out: _Collector) -> int:
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
        kind = _RECORD_KINDS.get(_clean_name(fields[0]).lower().replace("-", "_"))
        if kind is None:
            continue
        if open_tail and n == len(pieces) - 1 and ((opened and not closed) or len(fields) < _MIN_FIELDS[kind]):
            out.problems.append(f"dropped the cut-off last record {piece[:60]!r}")
            out.cut_off = True
            continue
        if kind == "entity":
            out.entities.append({"name": fields[1], "type": fields[2] if len(fields) > 2 else None,
                                 "description": " ".join(fields[3:])})
        elif kind == "keywords":
            out.keywords.append(", ".join(fields[1:]))
        elif len(fields) >= 3:
            rest = [_clean_description(f) for f in fields[3:]]
            strength = rest.pop() if rest and _STRENGTH_RE.fullmatch(rest[-1]) else None
            # Old LightRAG: DESC, KEYWORDS, STRENGTH; new: KEYWORDS, DESC. The wordier is the description.
            desc = max(rest, key=lambda f: len(f.split()), default="")
            keywords = [f for f in rest if f is not desc]
            rel = {"source": fields[1], "target": fields[2], "description": desc, "keywords": ", ".join(keywords)}
            if strength is not None:
                rel["strength"] = strength
            out.relations.append(rel)
        else:
            continue
        found += 1
    return found


# --------------------------------------------------------------------------------------------
# parse_extraction
# --------------------------------------------------------------------------------------------


def _build(out: _Collector, chunk_id: str, entity_types: list[str], default_type: str) -> Extraction:
    result = Extraction()
    problems = out.problems
    type_cache: dict[str, str] = {}
    seen: set[tuple] = set()
    for n, raw_entity in enumerate(out.entities):
        try:
            ent = coerce_value({k: v for k, v in raw_entity.items() if v is not None}, _ENTITY_SCHEMA,
                               f"entities[{n}]", problems)
        except Invalid as err:
            problems.append(f"entities[{n}]: dropped: {err}")
            continue
        name = _clean_name(ent["name"])
        if not name or len(name) > MAX_NAME_CHARS:
            problems.append(f"entities[{n}]: dropped: {'empty' if not name else 'overlong'} name")
            continue
        raw_type = _clean_name(ent.get("type"))
        if raw_type not in type_cache:
            type_cache[raw_type] = map_entity_type(raw_type, entity_types, default_type)
        record = EntityRecord(name, type_cache[raw_type], _clean_description(ent.get("description")), chunk_id)
        key = (name.casefold(), record.type, record.description)
        if key not in seen:
            seen.add(key)
            result.entities.append(record)
    for n, raw_relation in enumerate(out.relations):
        try:
            rel = coerce_value(raw_relation, _RELATION_SCHEMA, f"relations[{n}]", problems)
        except Invalid as err:
            problems.append(f"relations[{n}]: dropped: {err}")
            continue
        source, target = _clean_name(rel["source"]), _clean_name(rel["target"])
        if not source or not target or max(len(source), len(target)) > MAX_NAME_CHARS:
            problems.append(f"relations[{n}]: dropped: empty or overlong endpoint")
            continue
        if source.casefold() == target.casefold():
            problems.append(f"relations[{n}]: dropped: source equals target ({source!r})")
            continue
        keywords = _split_keywords(rel.get("keywords", []))
        strength = rel.get("strength")
        record = RelationRecord(source, target, _clean_description(rel.get("description")), chunk_id,
                                keywords=keywords, strength=1.0 if strength is None else float(strength))
        key = ("r", source.casefold(), target.casefold(), record.description)
        if key not in seen:
            seen.add(key)
            result.relations.append(record)
    keywords = coerce_value(out.keywords, {"type": "array", "items": _STR}, "keywords", problems)
    for text in _split_keywords(keywords):
        if text.casefold() not in seen:
            seen.add(text.casefold())
            result.keywords.append(KeywordRecord(text, chunk_id))
    return result


def _split_keywords(items: list[str]) -> list[str]:
    """Clean keywords: each item split on commas/semicolons, deduplicated, overlong ones dropped."""
    out = (_clean_name(part) for item in items for part in SPLIT_RE.split(item))
    return list(dict.fromkeys(k for k in out if 0 < len(k) <= MAX_NAME_CHARS))


def _parse_extraction(raw: str, chunk_id: str, entity_types: list[str], default_type: str,
                      problems: list[str]) -> Extraction:
    if not isinstance(raw, str) or not raw.strip():
        raise ModelOutputError("empty model output", raw if isinstance(raw, str) else repr(raw))
    text = strip_reasoning(raw)
    if not text.strip():
        raise ModelOutputError("output has only reasoning (<think>), no extraction", raw)
    out = _Collector()
    records = _delimited(text, out)
    json_error: ModelOutputError | None = None
    truncated = False
    try:
        parsed = parse_json_result(text)
    except ModelOutputError as err:
        json_error = err
    else:
        truncated = parsed.truncated
        problems.extend(parsed.notes)
        value = parsed.value
        # With delimiter records, bare brackets in their text ("[1]") are not JSON output.
        if not records or isinstance(value, dict) or (isinstance(value, list) and any(
                isinstance(v, dict) for v in value)):
            out.json_value(value)
    result = _build(out, chunk_id, entity_types, default_type)
    problems.extend(out.problems)
    if result.entities or result.relations or result.keywords:
        return result
    if out.explicit_empty and not truncated:
        return result
    if out.cut_off and not records:
        raise ModelOutputError("output truncated before the first complete record", raw)
    if json_error is not None and not records:
        if json_error.reason == "no JSON found in output":
            raise ModelOutputError("no JSON or delimiter-style records found in output", raw)
        raise ModelOutputError(json_error.reason, raw)
    if truncated:
        raise ModelOutputError("output truncated before the first complete item", raw)
    detail = f": {'; '.join(out.problems[:3])}" if out.problems else ""
    raise ModelOutputError(f"no usable entities, relations or keywords in output{detail}", raw)


def parse_extraction(raw: str, chunk_id: str, entity_types: list[str], default_type: str = "Concept",
                     problems: list[str] | None = None) -> Extraction:
    """Entities, relations and content keywords from one chunk's model output.

    Accepts JSON per :data:`EXTRACTION_SCHEMA` (or a top-level list of entities, and the usual
    key variants: relationships/edges, entity_name/entity_type, src_id/tgt_id/head/tail,
    weight, content_keywords...), LightRAG-style delimiter records (``<|>``, ``<|#|>``, ``|``
    or tab; ``##`` or newlines; with or without parentheses, quotes, numbering), or both.
    Types are mapped onto ``entity_types`` (:func:`map_entity_type`); relations whose endpoints
    are not among the entities are kept. Items that are dropped or repaired are described in
    ``problems`` when a list is given (and logged at debug level).

    Raises :class:`ModelOutputError` (``reason``, ``raw``) when nothing usable is found; an
    explicit ``{"entities": []}`` is a valid, empty result.
    """
    notes: list[str] = [] if problems is None else problems
    try:
        return _parse_extraction(raw, chunk_id, entity_types, default_type, notes)
    except ModelOutputError:
        raise
    except (RecursionError, MemoryError):
        raise ModelOutputError("model output too deeply nested or too large", str(raw)[:100000]) from None
    except Exception as err:  # the run must not crash on one chunk's output
        log.exception("parser bug on chunk %s", chunk_id)
        raise ModelOutputError(f"internal parser error: {type(err).__name__}: {err}", str(raw)) from err
    finally:
        if notes:
            log.debug("chunk %s: %d parse problems: %s", chunk_id, len(notes), "; ".join(notes[:10]))
