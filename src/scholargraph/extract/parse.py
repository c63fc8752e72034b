"""One parser for the extraction output of every LLM profile.

* :func:`parse_json` (from :mod:`..llm.repair`) -- the JSON in a model answer, repaired.
* :class:`ExtractionReply` (with :class:`EntityItem`, :class:`RelationItem`) -- the reply as a
  lenient pydantic model (:mod:`..llm.output`): numeric strings become numbers, "a, b" becomes
  ["a", "b"], an invalid item is dropped with its reason, and only a broken required field fails
  an item.
* :data:`EXTRACTION_SCHEMA` -- the compact schema sent as ``response_format`` json_schema,
  generated from :class:`ExtractionReply`.
* :func:`parse_extraction` -- JSON (with the usual key variants), LightRAG-style delimiter
  records (``("entity"<|>NAME<|>TYPE<|>DESC)##...<|COMPLETE|>``), or a mix of both, into an
  :class:`~scholargraph.models.Extraction`. Hopeless output raises
  :class:`~scholargraph.errors.ModelOutputError` with the raw text, for a ``ChunkFailure``.

JSON sections and items are gathered by :mod:`.collector`, delimiter records by
:mod:`.delimited`; this module maps types, validates, deduplicates and builds the records.
"""

from __future__ import annotations

import logging
import re
from typing import Annotated, Any

from ..errors import ModelOutputError
from ..llm.output import SPLIT_RE, Clamp, Invalid, Items, LenientModel, Number, Text, coerce, output_schema, validate
from ..llm.repair import parse_json, parse_json_result, strip_reasoning
from ..models import EntityRecord, Extraction, KeywordRecord, RelationRecord
from ..text.names import fold_plural
from .collector import Collector, clean_description, clean_name
from .delimited import read_delimited

__all__ = ["EXTRACTION_SCHEMA", "EntityItem", "ExtractionReply", "RelationItem", "coerce", "map_entity_type",
           "parse_extraction", "parse_json"]

log = logging.getLogger(__name__)


class EntityItem(LenientModel):
    """One extracted entity."""

    name: Text
    type: Text | None = None
    description: Text | None = None


class RelationItem(LenientModel):
    """One extracted relation; ``strength`` 0-10."""

    source: Text
    target: Text
    keywords: Items[Text] | None = None
    description: Text | None = None
    strength: Annotated[Number, Clamp(0, 10)] | None = None


class ExtractionReply(LenientModel):
    """What one chunk's extraction reply holds (after :mod:`.collector` gathered the key variants)."""

    entities: Items[EntityItem]
    relations: Items[RelationItem] | None = None
    keywords: Items[Text] | None = None


EXTRACTION_SCHEMA: dict[str, Any] = output_schema(ExtractionReply)

MAX_NAME_CHARS = 120

# --------------------------------------------------------------------------------------------
# Entity types
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
    raw = clean_name(raw_type)
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


# --------------------------------------------------------------------------------------------
# parse_extraction
# --------------------------------------------------------------------------------------------


def _add_entities(result: Extraction, out: Collector, chunk_id: str, entity_types: list[str], default_type: str,
                  seen: set) -> None:
    problems = out.problems
    type_cache: dict[str, str] = {}
    for n, raw_entity in enumerate(out.entities):
        try:
            ent = validate({k: v for k, v in raw_entity.items() if v is not None}, EntityItem, problems,
                           f"entities[{n}]")
        except Invalid as err:
            problems.append(f"entities[{n}]: dropped: {err}")
            continue
        name = clean_name(ent.name)
        if not name or len(name) > MAX_NAME_CHARS:
            problems.append(f"entities[{n}]: dropped: {'empty' if not name else 'overlong'} name")
            continue
        raw_type = clean_name(ent.type)
        if raw_type not in type_cache:
            type_cache[raw_type] = map_entity_type(raw_type, entity_types, default_type)
        record = EntityRecord(name, type_cache[raw_type], clean_description(ent.description), chunk_id)
        key = (name.casefold(), record.type, record.description)
        if key not in seen:
            seen.add(key)
            result.entities.append(record)


def _add_relations(result: Extraction, out: Collector, chunk_id: str, seen: set) -> None:
    problems = out.problems
    for n, raw_relation in enumerate(out.relations):
        try:
            rel = validate(raw_relation, RelationItem, problems, f"relations[{n}]")
        except Invalid as err:
            problems.append(f"relations[{n}]: dropped: {err}")
            continue
        source, target = clean_name(rel.source), clean_name(rel.target)
        if not source or not target or max(len(source), len(target)) > MAX_NAME_CHARS:
            problems.append(f"relations[{n}]: dropped: empty or overlong endpoint")
            continue
        if source.casefold() == target.casefold():
            problems.append(f"relations[{n}]: dropped: source equals target ({source!r})")
            continue
        keywords = _split_keywords(rel.keywords or [])
        strength = rel.strength
        record = RelationRecord(source, target, clean_description(rel.description), chunk_id,
                                keywords=keywords, strength=1.0 if strength is None else float(strength))
        key = ("r", source.casefold(), target.casefold(), record.description)
        if key not in seen:
            seen.add(key)
            result.relations.append(record)


def _build(out: Collector, chunk_id: str, entity_types: list[str], default_type: str) -> Extraction:
    """Validated, deduplicated records from what ``out`` collected (problems go to ``out.problems``)."""
    result = Extraction()
    seen: set[tuple | str] = set()
    _add_entities(result, out, chunk_id, entity_types, default_type, seen)
    _add_relations(result, out, chunk_id, seen)
    keywords = _validate_keywords(out.keywords, out.problems)
    for text in _split_keywords(keywords):
        if text.casefold() not in seen:
            seen.add(text.casefold())
            result.keywords.append(KeywordRecord(text, chunk_id))
    return result


def _validate_keywords(items: Any, problems: list[str]) -> list[str]:
    try:
        return validate(items, Items[Text], problems, "keywords")
    except Invalid as err:
        problems.append(f"keywords: dropped: {err}")
        return []


def _split_keywords(items: list[str]) -> list[str]:
    """Clean keywords: each item split on commas/semicolons, deduplicated, overlong ones dropped."""
    out = (clean_name(part) for item in items for part in SPLIT_RE.split(item))
    return list(dict.fromkeys(k for k in out if 0 < len(k) <= MAX_NAME_CHARS))


def _parse_extraction(raw: str, chunk_id: str, entity_types: list[str], default_type: str,
                      problems: list[str]) -> Extraction:
    if not isinstance(raw, str) or not raw.strip():
        raise ModelOutputError("empty model output", raw if isinstance(raw, str) else repr(raw))
    text = strip_reasoning(raw)
    if not text.strip():
        raise ModelOutputError("output has only reasoning (<think>), no extraction", raw)
    out = Collector()
    records = read_delimited(text, out)
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
    result.cut_off = truncated or out.cut_off
    problems.extend(out.problems)
    if result.entities or result.relations or result.keywords:
        return result
    if out.explicit_empty and not truncated:
        return result
    raise _nothing_usable(raw, out, bool(records), json_error, truncated)


def _nothing_usable(raw: str, out: Collector, records: bool, json_error: ModelOutputError | None,
                    truncated: bool) -> ModelOutputError:
    """Why an output gave nothing: cut off, no JSON or records, the JSON's own fault, or only unusable items."""
    if out.cut_off and not records:
        return ModelOutputError("output truncated before the first complete record", raw)
    if json_error is not None and not records:
        if json_error.reason == "no JSON found in output":
            return ModelOutputError("no JSON or delimiter-style records found in output", raw)
        return ModelOutputError(json_error.reason, raw)
    if truncated:
        return ModelOutputError("output truncated before the first complete item", raw)
    detail = f": {'; '.join(out.problems[:3])}" if out.problems else ""
    return ModelOutputError(f"no usable entities, relations or keywords in output{detail}", raw)


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
