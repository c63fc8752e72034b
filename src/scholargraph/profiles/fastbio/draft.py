"""fastbio stage 1, the **draft** (``.extractor``): one LLM call per paper on its abstract, and
the parse of its JSON -- typed entities with their surface forms as aliases, directed relations
with a relation type (``map_relation_type``) and a confidence.

``DraftStage`` is a mixin of ``FastBioExtractor``; it uses the extractor's ``draft_prompt``,
``_draft_system``, ``parse_types``, ``relation_types`` and ``_chat``.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any

from pydantic import BaseModel, ValidationError, model_validator

from ...errors import ModelOutputError
from ...extract.parse import parse_extraction
from ...extract.schema import NAME_CHARS, string_schema
from ...extract.types import PRESETS
from ...extract.types import entity_types as resolve_entity_types
from ...llm.output import Clamp, Items, LenientModel, Number, Text, first_of, names, output_schema
from ...llm.repair import parse_json, strip_reasoning
from ...models import ChunkFailure, Document, EntityRecord, Extraction, RelationRecord
from ...prompts import Prompt
from .normalise import match_key

REPAIR_NOTE = "Your previous reply was not valid JSON in the required format. Reply with the JSON object only."
OTHER_TYPE = "Other"



class DraftEntity(LenientModel):
    """An entity of the draft: its name, type and the surface form the abstract uses."""

    name: Text
    type: Text | None = None
    alias: Text | None = None


class DraftRelation(LenientModel):
    """A directed relation of the draft, with its relation type and a 0-1 confidence."""

    source: Text
    target: Text
    type: Text | None = None
    description: Text | None = None
    confidence: Annotated[Number, Clamp(0, 1)] | None = None


class DraftReply(LenientModel):
    """The draft reply, as sent for ``response_format``. It is read by the shared extraction
    parser (:func:`parse_extraction`, whose models take these fields' variants) and by
    :class:`_Extras` for the aliases, relation types and confidences it does not keep."""

    entities: Items[DraftEntity]
    relations: Items[DraftRelation]


DRAFT_SCHEMA: dict[str, Any] = output_schema(DraftReply)
# A degenerate reply repeats one item until a list's bound, so the bounds are what it costs. Measured with
# Qwen2.5-Coder 1.5B on BioRED: 27 entities and 20 relations with 200-character descriptions ran past the
# draft's 2,048 tokens; 30 entities (~22 tokens each) and 16 relations of at most 160 characters (~75
# tokens each) stay under it (~1,850).
DRAFT_MAX_ENTITIES = 30
DRAFT_MAX_RELATIONS = 16
DRAFT_DESCRIPTION_CHARS = 160


def draft_bounds(abstract_chars: int) -> tuple[int, int]:
    """(entities, relations) an abstract of ``abstract_chars`` may give: one entity per ~25 tokens
    (BioRED abstracts of ~350 tokens annotate ~15-25 distinct names), at least 16."""
    entities = max(16, min(DRAFT_MAX_ENTITIES, 8 + abstract_chars // 100))  # ~4 characters per token
    return entities, min(DRAFT_MAX_RELATIONS, entities)


def draft_schema(entity_types: list[str], relation_types: list[str], abstract_chars: int) -> dict[str, Any]:
    """:data:`DRAFT_SCHEMA` with every list and string bounded (lists by the abstract's length), the
    types as enums, and no ``alias`` or ``confidence`` (the parser still reads them when a model
    writes them). Unbounded, Qwen2.5-Coder 1.5B wrote ``{"name":"gene","type":"GeneOrGeneProduct"}``
    until the 2,048-token budget on a BioRED abstract (328 s), then again on the retry.

    Why not fewer keys still: every key costs decoding steps even when the server forces it, so
    compact tuples (``[name, type]``, ``[source, type, target, description]``) halved the 1.5B's
    completion tokens on BioRED (584 vs 1,195 per abstract) -- but it looped on one entity until the
    list's bound and then wrote 2 relations instead of 16 (relation F1 0.085 -> 0; relations first,
    it named "HGNC symbol" as every source). Why no alias and confidence: the 1.5B left every alias
    empty (101 entities) and wrote 0.9 as every confidence; ``.normalise`` keeps each raw name as an
    alias when a dictionary renames it, and an edge's confidence is its weight from its nodes
    (seed 003 §2.4, ``graph.weights``)."""
    entities, relations = draft_bounds(abstract_chars)
    name, description = string_schema(NAME_CHARS, 1), string_schema(DRAFT_DESCRIPTION_CHARS)
    entity = {"type": "object", "properties": {
        "name": name, "type": {"enum": entity_types} if entity_types else name}, "required": ["name"]}
    relation = {"type": "object", "properties": {
        "source": name, "target": name, "type": {"enum": relation_types} if relation_types else name,
        "description": description}, "required": ["source", "target"]}
    return {"type": "object", "properties": {
        "entities": {"type": "array", "maxItems": entities, "items": entity},
        "relations": {"type": "array", "maxItems": relations, "items": relation}},
        "required": ["entities", "relations"]}

# key variants of the extra fields read from the draft JSON (aliases, relation type, confidence)
_NAME_KEYS = ("name", "entity", "entity_name")
_ALIAS_KEYS = ("alias", "aliases", "surface", "surface_form", "mention", "synonyms", "text_form", "original")
_SRC_KEYS = ("source", "source_entity", "src", "src_id", "head", "subject", "from")
_TGT_KEYS = ("target", "target_entity", "tgt", "tgt_id", "tail", "object", "to")
_RTYPE_KEYS = ("type", "relation_type", "relationship_type", "relation", "relationship", "label", "predicate")
_CONF_KEYS = ("confidence", "probability", "certainty", "score", "strength")
_ALIAS_SPLIT = re.compile(r"\s*[|;]\s*")  # not commas: "interleukin 1, beta" is one name

# words that name a relation type without being it ("up-regulates" is a Regulation link)
RELATION_TYPE_HINTS: dict[str, tuple[str, ...]] = {
    "Causal": ("cause", "causes", "causal", "leads to", "induces", "drives", "mechanism"),
    "Risk Factor": ("risk", "risk factor", "predisposes", "susceptibility"),
    "Protective Factor": ("protective", "protects", "protection", "reduces risk"),
    "Biomarker": ("biomarker", "marker", "diagnostic", "prognostic", "predictive"),
    "Target": ("target", "targets", "therapeutic target", "treats", "treatment", "inhibits", "drug target"),
    "Modifier": ("modifier", "modifies", "modulates", "modulator"),
    "Regulation": ("regulation", "regulates", "upregulates", "downregulates", "activates", "represses", "up-regulated",
                   "down-regulated", "upregulated", "downregulated", "regulated"),
    "Expression": ("expression", "expressed", "overexpressed", "overexpression", "underexpressed", "levels"),
}


def bio_entity_types(spec: str | list[str]) -> list[str]:
    """The entity types of the profile: the biomedical preset unless the settings name other types."""
    if spec == "paper":  # the workspace default is for CS papers; fastbio means biomedical
        return list(PRESETS["biomedical"])
    return resolve_entity_types(spec)


def _type_key(text: str) -> str:
    return match_key(text)


def map_relation_type(raw: str, relation_types: Sequence[str]) -> str | None:
    """The configured relation type ``raw`` names (exact, contained, or a hint word), else None."""
    key = _type_key(raw)
    if not key:
        return None
    for t in relation_types:
        if _type_key(t) == key:
            return t
    for t in relation_types:
        tk = _type_key(t)
        if len(key) >= 4 and (key in tk or tk in key):
            return t
    low = " ".join(re.split(r"[\s_\-/]+", raw.casefold()))
    for t in relation_types:
        hints = RELATION_TYPE_HINTS.get(t, ())
        if any(re.search(rf"\b{re.escape(h)}\b", low) for h in hints):
            return t
    return None


def _confidence(value: Any) -> float | None:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    if x != x or x < 0:  # NaN or negative
        return None
    if x > 1:
        x = x / 10 if x <= 10 else x / 100 if x <= 100 else 1.0
    return round(min(x, 1.0), 4)


class RelationExtra(BaseModel):
    """What the draft says of a relation beyond the shared parser: its type and confidence (0-1;
    "9" of 10 and "90" of 100 are 0.9). Read from any key variant (head/tail, predicate, score...)."""

    source: str
    target: str
    type: str | None = None
    confidence: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _variants(cls, d: Any) -> Any:
        src, tgt = first_of(d, _SRC_KEYS), first_of(d, _TGT_KEYS)
        if not (isinstance(src, str) and isinstance(tgt, str)):
            raise ValueError("no source and target")
        rtype = first_of(d, _RTYPE_KEYS)
        return {"source": src, "target": tgt, "type": rtype if isinstance(rtype, str) else None,
                "confidence": _confidence(first_of(d, _CONF_KEYS))}


class EntityExtra(BaseModel):
    """The surface forms the draft gives an entity ("a | b", a list, under any alias key)."""

    name: str
    aliases: list[str]

    @model_validator(mode="before")
    @classmethod
    def _variants(cls, d: Any) -> Any:
        name = first_of(d, _NAME_KEYS)
        if not isinstance(name, str):
            raise ValueError("no name")
        return {"name": name, "aliases": names(first_of(d, _ALIAS_KEYS), _ALIAS_SPLIT)}


class _Extras:
    """Fields of the draft JSON that the shared parser does not keep: aliases, relation type,
    confidence -- every object of the reply (at any depth up to 5) read as a
    :class:`RelationExtra`, else an :class:`EntityExtra`."""

    def __init__(self, raw: str):
        self.aliases: dict[str, list[str]] = {}
        self.relations: dict[tuple[str, str], tuple[str | None, float | None]] = {}
        try:
            value = parse_json(strip_reasoning(raw))
        except ModelOutputError:
            return
        self._walk(value, 0)

    def _walk(self, value: Any, depth: int) -> None:
        if depth > 5:
            return
        if isinstance(value, list):
            for v in value:
                self._walk(v, depth + 1)
            return
        if not isinstance(value, dict):
            return
        d = {re.sub(r"[\s\-]+", "_", str(k).strip().lower()): v for k, v in value.items()}
        try:
            rel = RelationExtra.model_validate(d)
        except ValidationError:
            pass
        else:
            self.relations.setdefault((match_key(rel.source), match_key(rel.target)), (rel.type, rel.confidence))
            return
        try:
            ent = EntityExtra.model_validate(d)
        except ValidationError:
            pass
        else:
            if ent.aliases:
                self.aliases.setdefault(match_key(ent.name), []).extend(ent.aliases)
            return
        for v in d.values():
            if isinstance(v, (list, dict)):
                self._walk(v, depth + 1)


class DraftStage:
    """Stage 1 of ``FastBioExtractor``: the abstract draft call and its parse."""

    # set by FastBioExtractor
    draft_prompt: Prompt
    _draft_system: str
    parse_types: list[str]
    relation_types: list[str]
    _chat: Callable[..., Awaitable[Any]]

    async def _draft(self, doc: Document, abstract: str, chunk_id: str) -> Extraction:
        user = self.draft_prompt.user.format(title=doc.title or "", abstract=abstract)
        messages = [{"role": "system", "content": self._draft_system}, {"role": "user", "content": user}]
        def parse(text: str) -> Extraction:
            return self._parse_draft(text, chunk_id)

        schema = draft_schema(self.parse_types, self.relation_types, len(abstract))
        result = await self._chat(messages, "extract", doc.id, schema, parse)
        if result.error is None:
            return result.parsed
        reason = getattr(result.error, "reason", str(result.error))
        retry = messages + [{"role": "assistant", "content": result.text[:4000]}, {"role": "user", "content": REPAIR_NOTE}]
        again = await self._chat(retry, "extract", doc.id, schema, parse)
        if again.error is None:
            return again.parsed
        return Extraction(failures=[ChunkFailure(chunk_id, f"draft (abstract): {reason}", result.text)])

    def _parse_draft(self, raw: str, chunk_id: str) -> Extraction:
        parsed = parse_extraction(raw, chunk_id, self.parse_types, default_type=OTHER_TYPE)
        extras = _Extras(raw)
        out = Extraction(failures=parsed.failures)
        for e in parsed.entities:
            aliases = extras.aliases.get(match_key(e.name), [])
            out.entities.append(EntityRecord(e.name, e.type, e.description, chunk_id, aliases=list(dict.fromkeys(aliases))))
        for r in parsed.relations:
            label, confidence = extras.relations.get((match_key(r.source), match_key(r.target)), (None, None))
            labels = [label] if label else []
            labels += [k for k in r.keywords if k not in labels]
            types = list(dict.fromkeys(t for t in (map_relation_type(x, self.relation_types) for x in labels) if t))
            out.relations.append(RelationRecord(
                r.source, r.target, r.description, chunk_id, keywords=types or labels[:2], strength=1.0,
                types=types, directed=True, confidence=confidence))
        return out


__all__ = ["DRAFT_MAX_ENTITIES", "DRAFT_MAX_RELATIONS", "DRAFT_SCHEMA", "OTHER_TYPE", "RELATION_TYPE_HINTS",
           "REPAIR_NOTE", "DraftReply", "DraftStage", "EntityExtra", "RelationExtra", "bio_entity_types",
           "draft_bounds", "draft_schema", "map_relation_type"]
