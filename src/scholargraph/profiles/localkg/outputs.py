"""What each localkg prompt must answer, as pydantic models, and the one parser all stages use.

The models are lenient the way models answer: a mention may come as a bare string, ``types`` as
"a, b", keys under their usual variants (``name``/``entity``/``text``, ``head``/``tail``...).
Anything else that does not validate fails that call's unit (``ModelOutputError`` with the raw
answer), never the paper. The JSON schema sent as ``response_format`` is the model's own.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ...errors import ModelOutputError
from ...llm.repair import parse_json, strip_reasoning

M = TypeVar("M", bound=BaseModel)

_SPLIT = re.compile(r"\s*[,;|]\s*")


def _first(data: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for k in keys:
        if data.get(k) not in (None, ""):
            return data[k]
    return None


def _names(value: Any) -> list[str]:
    if value is None or isinstance(value, (bool, dict)):
        return []
    if isinstance(value, list):
        return [n for v in value for n in _names(v)]
    return [p.strip() for p in _SPLIT.split(str(value)) if p.strip()]


def _required(data: dict[str, Any], variants: tuple[str, ...], name: str) -> Any:
    """The list under ``name``'s variants; an answer with none of them is no answer (not an empty one)."""
    for k in variants:
        if k in data:
            return data[k] if data[k] is not None else []
    raise ValueError(f"no {name!r} list")


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


# -- stage 1: mentions (Prompt 1) -----------------------------------------------------------------


class Mention(_Lenient):
    text: str
    types: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _variants(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"text": data}
        if isinstance(data, dict):
            return {"text": _first(data, ("text", "mention", "name", "entity", "term", "surface")),
                    "types": _names(_first(data, ("types", "type", "parent_types", "parents", "categories")))}
        return data

    @field_validator("text")
    @classmethod
    def _clean(cls, v: str) -> str:
        v = " ".join(str(v).split()).strip(" \"'`*")
        if not v or len(v) > 200:
            raise ValueError("empty or overlong mention")
        return v


def _valid(value: Any, model: type[M]) -> list[M]:
    """The items of a list that validate as ``model``; the others are dropped (one bad item costs
    only itself)."""
    out = []
    for item in value if isinstance(value, list) else []:
        try:
            out.append(model.model_validate(item))
        except ValidationError:
            continue
    return out


def _mentions(value: Any) -> list[Mention]:
    return _valid(value, Mention)


class MentionList(_Lenient):
    """Prompt 1 on a section or paragraph."""

    mentions: list[Mention]

    @model_validator(mode="before")
    @classmethod
    def _variants(cls, data: Any) -> Any:
        if isinstance(data, list):
            data = {"mentions": data}
        if isinstance(data, dict):
            found = _first(data, ("mentions", "entities", "named_entities", "concepts", "items", "results"))
            if found is None and not any(k in data for k in ("mentions", "entities")):
                raise ValueError("no 'mentions' list")
            return {"mentions": _mentions(found or [])}
        return data


class SentenceMentions(_Lenient):
    sentence: int
    mentions: list[Mention] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _variants(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {"sentence": _first(data, ("sentence", "id", "n", "number", "index")),
                    "mentions": _mentions(_first(data, ("mentions", "entities", "items")) or [])}
        return data


class SentenceMentionList(_Lenient):
    """Prompt 1 on the numbered sentences of one paragraph: the answer stays per sentence."""

    sentences: list[SentenceMentions]

    @model_validator(mode="before")
    @classmethod
    def _variants(cls, data: Any) -> Any:
        if isinstance(data, list):
            return {"sentences": data}
        return data


# -- descriptions by id: stage 2 (Prompts 2.1, 2.2), stage 5 (Prompts 5.1, 5.2) ----------------------


class Familiar(_Lenient):
    id: int
    familiar: bool

    @model_validator(mode="before")
    @classmethod
    def _variants(cls, data: Any) -> Any:
        if isinstance(data, dict):
            value = _first(data, ("familiar", "known", "answer", "can_tell"))
            if isinstance(value, str):
                value = value.strip().lower() in {"yes", "true", "y", "familiar", "known"}
            return {"id": _first(data, ("id", "term", "n", "number")), "familiar": bool(value)}
        return data


class FamiliarityList(_Lenient):
    terms: list[Familiar]

    @model_validator(mode="before")
    @classmethod
    def _variants(cls, data: Any) -> Any:
        if isinstance(data, list):
            return {"terms": data}
        if isinstance(data, dict) and "terms" not in data:
            return {"terms": _required(data, ("mentions", "items", "results"), "terms")}
        return data


class Described(_Lenient):
    id: int
    description: str

    @model_validator(mode="before")
    @classmethod
    def _variants(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {"id": _first(data, ("id", "n", "number", "mention", "type", "predicate")),
                    "description": _first(data, ("description", "definition", "text", "summary"))}
        return data

    @field_validator("description")
    @classmethod
    def _clean(cls, v: str) -> str:
        v = " ".join(str(v).split())
        if not v:
            raise ValueError("empty description")
        return v


class DescriptionList(_Lenient):
    descriptions: list[Described]

    @model_validator(mode="before")
    @classmethod
    def _variants(cls, data: Any) -> Any:
        if isinstance(data, list):
            return {"descriptions": data}
        if isinstance(data, dict) and "descriptions" not in data:
            return {"descriptions": _required(data, ("items", "mentions", "types", "predicates", "results"),
                                              "descriptions")}
        return data


# -- stages 3 and 4: triples (Prompts 3, 4.2) --------------------------------------------------------


class Triple(_Lenient):
    subject: str
    predicate: str
    object: str

    @model_validator(mode="before")
    @classmethod
    def _variants(cls, data: Any) -> Any:
        if isinstance(data, (list, tuple)) and len(data) == 3:
            return dict(zip(("subject", "predicate", "object"), data, strict=True))
        if isinstance(data, dict):
            return {"subject": _first(data, ("subject", "source", "head", "s", "from")),
                    "predicate": _first(data, ("predicate", "relation", "relationship", "p", "label")),
                    "object": _first(data, ("object", "target", "tail", "o", "to"))}
        return data

    @field_validator("subject", "predicate", "object")
    @classmethod
    def _clean(cls, v: str) -> str:
        v = " ".join(str(v).split()).strip(" \"'`")
        if not v or len(v) > 200:
            raise ValueError("empty or overlong")
        return v


def _triples(value: Any) -> list[Triple]:
    return _valid(value, Triple)


class TripleList(_Lenient):
    triples: list[Triple]

    @model_validator(mode="before")
    @classmethod
    def _variants(cls, data: Any) -> Any:
        if isinstance(data, list):
            data = {"triples": data}
        if isinstance(data, dict):
            found = _first(data, ("triples", "relations", "relationships", "edges"))
            if found is None and not any(k in data for k in ("triples", "relations")):
                raise ValueError("no 'triples' list")
            return {"triples": _triples(found or [])}
        return data


class SentenceTriples(_Lenient):
    sentence: int
    triples: list[Triple] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _variants(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {"sentence": _first(data, ("sentence", "id", "n", "number", "index")),
                    "triples": _triples(_first(data, ("triples", "relations")) or [])}
        return data


class SentenceTripleList(_Lenient):
    sentences: list[SentenceTriples]

    @model_validator(mode="before")
    @classmethod
    def _variants(cls, data: Any) -> Any:
        if isinstance(data, list):
            return {"sentences": data}
        return data


class PairRelation(_Lenient):
    """Prompt 4.2: at most one relation per entity pair; ``predicate`` None = no relation."""

    pair: int
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _variants(cls, data: Any) -> Any:
        if isinstance(data, dict):
            pred = _first(data, ("predicate", "relation", "p"))
            if isinstance(pred, str) and pred.strip().lower() in {"none", "null", "no relation", "n/a", ""}:
                pred = None
            return {"pair": _first(data, ("pair", "id", "n", "number")), "predicate": pred,
                    "subject": _first(data, ("subject", "source", "head")), "object": _first(data, ("object", "target", "tail"))}
        return data


class PairRelationList(_Lenient):
    pairs: list[PairRelation]

    @model_validator(mode="before")
    @classmethod
    def _variants(cls, data: Any) -> Any:
        if isinstance(data, list):
            return {"pairs": data}
        if isinstance(data, dict) and "pairs" not in data:
            return {"pairs": _required(data, ("relations", "results", "items"), "pairs")}
        return data


# -- parsing ----------------------------------------------------------------------------------------


def parse_output(raw: str, model: type[M]) -> M:
    """The model's answer as ``model``; :class:`ModelOutputError` (reason, raw) when unusable."""
    if not isinstance(raw, str) or not strip_reasoning(raw).strip():
        raise ModelOutputError("empty model output", raw if isinstance(raw, str) else repr(raw))
    value = parse_json(raw)  # repaired JSON, or ModelOutputError
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "answer"
        raise ModelOutputError(f"answer does not match {model.__name__}: {where}: {first['msg']}", raw) from None


def plain_text(raw: str) -> str:
    """A free-text answer (Prompt 4.1's summary) without reasoning blocks or code fences."""
    text = strip_reasoning(raw or "").strip()
    text = re.sub(r"^```\w*\n?|```$", "", text).strip()
    if not text:
        raise ModelOutputError("empty model output", raw or "")
    return text
