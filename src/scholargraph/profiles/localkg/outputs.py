"""What each localkg prompt must answer, as lenient pydantic models (:mod:`scholargraph.llm.output`).

The models read answers the way models write them: a mention may come as a bare string, ``types``
as "a, b", keys under their usual variants (``name``/``entity``/``text``, ``head``/``tail``...), a
list reply without its object. One item that does not validate is dropped; an answer without its
list fails that call's unit (``ModelOutputError`` with the raw answer), never the paper. The JSON
schema sent as ``response_format`` is the model's own (``output_schema``).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator, field_validator

from ...errors import ModelOutputError
from ...llm.output import Integer, Items, Keys, LenientModel, Names, Text
from ...llm.repair import strip_reasoning

_SENTENCE = Keys("id", "n", "number", "index")
_NO_RELATION = {"none", "null", "no relation", "n/a", ""}
_YES = {"yes", "true", "y", "familiar", "known"}


def _tidy(value: str, strip: str, what: str) -> str:
    """``value`` with its whitespace collapsed and ``strip`` trimmed; empty or overlong fails."""
    value = " ".join(value.split()).strip(strip)
    if not value or len(value) > 200:
        raise ValueError(f"empty or overlong {what}")
    return value


# -- stage 1: mentions (Prompt 1) -----------------------------------------------------------------


class Mention(LenientModel):
    bare_field = "text"

    text: Annotated[Text, Keys("mention", "name", "entity", "term", "surface")]
    types: Annotated[Names, Keys("type", "parent_types", "parents", "categories")] = []

    @field_validator("text")
    @classmethod
    def _clean(cls, v: str) -> str:
        return _tidy(v, " \"'`*", "mention")


class MentionList(LenientModel):
    """Prompt 1 on a section or paragraph."""

    bare_field = "mentions"

    mentions: Annotated[Items[Mention], Keys("entities", "named_entities", "concepts", "items", "results")]


class SentenceMentions(LenientModel):
    sentence: Annotated[Integer, _SENTENCE]
    mentions: Annotated[Items[Mention], Keys("entities", "items")] = []


class SentenceMentionList(LenientModel):
    """Prompt 1 on the numbered sentences of one paragraph: the answer stays per sentence."""

    bare_field = "sentences"

    sentences: Items[SentenceMentions]


# -- descriptions by id: stage 2 (Prompts 2.1, 2.2), stage 5 (Prompts 5.1, 5.2) ----------------------


def _yes(value: Any) -> bool:
    return value.strip().lower() in _YES if isinstance(value, str) else bool(value)


class Familiar(LenientModel):
    id: Annotated[Integer, Keys("term", "n", "number")]
    familiar: Annotated[bool, BeforeValidator(_yes), Keys("known", "answer", "can_tell")] = False


class FamiliarityList(LenientModel):
    bare_field = "terms"

    terms: Annotated[Items[Familiar], Keys("mentions", "items", "results")]


class Described(LenientModel):
    id: Annotated[Integer, Keys("n", "number", "mention", "type", "predicate")]
    description: Annotated[Text, Keys("definition", "text", "summary")]

    @field_validator("description")
    @classmethod
    def _clean(cls, v: str) -> str:
        v = " ".join(v.split())
        if not v:
            raise ValueError("empty description")
        return v


class DescriptionList(LenientModel):
    bare_field = "descriptions"

    descriptions: Annotated[Items[Described], Keys("items", "mentions", "types", "predicates", "results")]


# -- stages 3 and 4: triples (Prompts 3, 4.2) --------------------------------------------------------


class Triple(LenientModel):
    subject: Annotated[Text, Keys("source", "head", "s", "from")]
    predicate: Annotated[Text, Keys("relation", "relationship", "p", "label")]
    object: Annotated[Text, Keys("target", "tail", "o", "to")]

    @classmethod
    def bare(cls, data: Any) -> Any:
        """``["MEL", "uses", "Apache Tika"]`` is a triple."""
        if isinstance(data, (list, tuple)) and len(data) == 3:
            return dict(zip(("subject", "predicate", "object"), data, strict=True))
        return data

    @field_validator("subject", "predicate", "object")
    @classmethod
    def _clean(cls, v: str) -> str:
        return _tidy(v, " \"'`", "name")


class TripleList(LenientModel):
    bare_field = "triples"

    triples: Annotated[Items[Triple], Keys("relations", "relationships", "edges")]


class SentenceTriples(LenientModel):
    sentence: Annotated[Integer, _SENTENCE]
    triples: Annotated[Items[Triple], Keys("relations")] = []


class SentenceTripleList(LenientModel):
    bare_field = "sentences"

    sentences: Items[SentenceTriples]


class PairRelation(LenientModel):
    """Prompt 4.2: at most one relation per entity pair; ``predicate`` None = no relation."""

    pair: Annotated[Integer, Keys("id", "n", "number")]
    subject: Annotated[Text | None, Keys("source", "head")] = None
    predicate: Annotated[Text | None, Keys("relation", "p")] = None
    object: Annotated[Text | None, Keys("target", "tail")] = None

    @field_validator("predicate")
    @classmethod
    def _none(cls, v: str | None) -> str | None:
        return None if v is None or v.strip().lower() in _NO_RELATION else v


class PairRelationList(LenientModel):
    bare_field = "pairs"

    pairs: Annotated[Items[PairRelation], Keys("relations", "results", "items")]


def plain_text(raw: str) -> str:
    """A free-text answer (Prompt 4.1's summary) without reasoning blocks or code fences."""
    text = strip_reasoning(raw or "").strip()
    text = re.sub(r"^```\w*\n?|```$", "", text).strip()
    if not text:
        raise ModelOutputError("empty model output", raw or "")
    return text
