"""LLM replies as pydantic models: the schema each step sends, and lenient validation (one bad
record is dropped with its reason, never the whole reply)."""

from __future__ import annotations

import re
from typing import Annotated

import pytest

from scholargraph.errors import ModelOutputError
from scholargraph.evaluation.judge import parse_verdict
from scholargraph.evaluation.questions import Questions, Users
from scholargraph.extract.parse import EXTRACTION_SCHEMA, ExtractionReply
from scholargraph.graph.community_reports import ReportReply
from scholargraph.llm.output import (
    Invalid,
    Items,
    Keys,
    LenientModel,
    Names,
    Text,
    first_of,
    names,
    output_schema,
    parse_reply,
    validate,
)
from scholargraph.profiles.fastbio.draft import DRAFT_SCHEMA, EntityExtra, RelationExtra
from scholargraph.profiles.fastbio.query_parse import PARSE_SCHEMA, BioQueryReply
from scholargraph.query.keywords import KEYWORDS_SCHEMA
from scholargraph.query.summary import MapReply

_S = {"type": "string"}
_LIST = {"type": "array", "items": _S}


def test_generated_schemas_are_the_ones_sent_before():
    """The response_format schemas come from the models and say exactly what the hand-written
    dicts said (same requests, same cache keys)."""
    assert EXTRACTION_SCHEMA == {"type": "object", "properties": {
        "entities": {"type": "array", "items": {"type": "object", "properties": {
            "name": _S, "type": _S, "description": _S}, "required": ["name"]}},
        "relations": {"type": "array", "items": {"type": "object", "properties": {
            "source": _S, "target": _S, "keywords": _LIST, "description": _S,
            "strength": {"type": "number", "minimum": 0, "maximum": 10}}, "required": ["source", "target"]}},
        "keywords": _LIST}, "required": ["entities"]}
    assert DRAFT_SCHEMA == {"type": "object", "properties": {
        "entities": {"type": "array", "items": {"type": "object", "properties": {
            "name": _S, "type": _S, "alias": _S}, "required": ["name"]}},
        "relations": {"type": "array", "items": {"type": "object", "properties": {
            "source": _S, "target": _S, "type": _S, "description": _S,
            "confidence": {"type": "number", "minimum": 0, "maximum": 1}}, "required": ["source", "target"]}}},
        "required": ["entities", "relations"]}
    assert PARSE_SCHEMA == {"type": "object", "properties": {
        k: _LIST for k in ("genes", "diseases", "other", "entity_types", "relation_types")}}
    assert KEYWORDS_SCHEMA == {"type": "object", "properties": {"high_level": _LIST, "low_level": _LIST},
                               "required": ["high_level", "low_level"], "additionalProperties": False}
    assert list(EXTRACTION_SCHEMA) == ["type", "properties", "required"]


def test_one_bad_record_is_dropped_with_its_reason():
    problems: list[str] = []
    reply = validate({"entities": [{"name": "BERT"}, {"type": "Model"}, {"name": "GLUE", "type": ["a", "b"]}],
                      "relations": [{"source": "BERT", "target": "GLUE", "strength": "eight"}, 7]},
                     ExtractionReply, problems)
    assert [e.name for e in reply.entities] == ["BERT", "GLUE"]
    assert reply.entities[1].type == "a, b"
    assert [(r.source, r.strength) for r in reply.relations or []] == [("BERT", None)]
    assert problems == ["$.entities[1]: dropped: missing required 'name'",
                        "$.relations[0].strength: dropped: expected number, got 'eight'",
                        "$.relations[1]: dropped: expected object, got number"]
    with pytest.raises(Invalid, match="missing required 'entities'"):
        validate({"relations": []}, ExtractionReply)


def test_step_models_read_what_small_models_write():
    assert parse_verdict('{"Overall Winner": "Answer 2", "Diversity": {"winner": "1", "reason": "x"}, '
                         '"empowerment": 5}') == {"diversity": "a", "overall": "b"}
    report = validate({"title": "T", "summary": "S", "rating": "n/a", "keywords": ["a", " ", 3]}, ReportReply)
    assert (report.rating, report.keywords) == (None, ["a", "3"])
    with pytest.raises(Invalid):
        validate({"title": "T", "summary": "  "}, ReportReply)
    points = validate({"points": [{"text": "p [1]", "score": "high"}, {"text": ""}, "x"]}, MapReply).points
    assert [(p.text, p.score) for p in points or []] == [("p [1]", 50.0)]
    bio = validate({"genes": "APOE; TREM2", "diseases": ["AD", {"x": 1}]}, BioQueryReply)
    assert (bio.genes, bio.diseases, bio.other) == (["APOE", "TREM2"], ["AD"], None)
    users = validate({"users": [{"user": "u", "description": "d"}, "x", 3]}, Users)
    assert [(u.user, u.description) for u in users.users] == [("u", "d")]
    asked = validate({"questions": ["q?", " ", 1]}, Questions)
    assert asked.questions == ["q?", "1"] or asked.questions == ["q?"]


def test_fastbio_draft_extras_read_key_variants():
    rel = RelationExtra.model_validate({"head": "IL1B", "tail": "Endometriosis", "predicate": "biomarker",
                                        "score": "90"})
    assert (rel.source, rel.target, rel.type, rel.confidence) == ("IL1B", "Endometriosis", "biomarker", 0.9)
    assert EntityExtra.model_validate({"entity": "IL1B", "synonyms": "IL-1β | interleukin-1 beta"}).aliases == [
        "IL-1β", "interleukin-1 beta"]
    with pytest.raises(ValueError):
        RelationExtra.model_validate({"name": "IL1B"})


class _Thing(LenientModel):
    name: Annotated[Text, Keys("entity", "label")]
    kinds: Annotated[Names, Keys("kind")] = []


class _Things(LenientModel):
    bare_field = "things"

    things: Annotated[Items[_Thing], Keys("entities", "items")]


def test_key_variants_names_and_bare_replies():
    """A field under another key, names as "a, b | c", and a bare array for the one list."""
    problems: list[str] = []
    got = validate([{"entity": "BERT", "kind": "model | encoder"}, {"name": "", "label": "GLUE"},
                    {"kinds": ["x"]}], _Things, problems)
    assert [(t.name, t.kinds) for t in got.things] == [("BERT", ["model", "encoder"]), ("GLUE", [])]
    assert problems == ["$.things[2]: dropped: missing required 'name'"]
    assert validate({"items": [], "other": 1}, _Things).things == []  # an empty answer is an answer
    with pytest.raises(Invalid, match="missing required 'things'"):
        validate({"results": [{"name": "x"}]}, _Things)  # a key it does not name is no answer
    # the schema names each field by its own key only
    assert output_schema(_Things) == {"type": "object", "properties": {"things": {"type": "array", "items": {
        "type": "object", "properties": {"name": _S, "kinds": _LIST}, "required": ["name"]}}},
        "required": ["things"]}


def test_names_and_first_of():
    assert names(["a, b", ["c | d", 3], None, True, {"x": 1}, " ; "]) == ["a", "b", "c", "d", "3"]
    assert names("IL-1b | interleukin 1, beta", re.compile(r"\s*[|;]\s*")) == ["IL-1b", "interleukin 1, beta"]
    assert names(None) == [] and names(False) == []
    assert first_of({"a": "", "b": [], "c": None, "d": 0, "e": "x"}, ("a", "b", "c", "d", "e")) == 0
    assert first_of({"a": ""}, ("a", "b")) is None


def test_parse_reply_raises_with_the_raw_answer():
    assert [t.name for t in parse_reply('```json\n{"things": [{"name": "A"}]}\n```', _Things).things] == ["A"]
    with pytest.raises(ModelOutputError, match="answer does not match _Things: missing required 'things'") as bad:
        parse_reply('{"nodes": []}', _Things)
    assert bad.value.raw == '{"nodes": []}'
    with pytest.raises(ModelOutputError, match="empty model output"):
        parse_reply("", _Things)
    with pytest.raises(ModelOutputError) as none:
        parse_reply("<think>hmm</think>", _Things)
    assert none.value.raw == "<think>hmm</think>"
