"""The localkg answer models (on the shared lenient layer): key variants and shapes small models
write, one bad item dropped rather than the answer, an answer without its list refused with the raw
answer, and the response_format schema each prompt sends."""

from __future__ import annotations

from typing import Any

import pytest

from scholargraph.errors import ModelOutputError
from scholargraph.llm.output import output_schema, parse_reply
from scholargraph.profiles.localkg.mentions import MentionStage
from scholargraph.profiles.localkg.outputs import (
    DescriptionList,
    FamiliarityList,
    MentionList,
    PairRelationList,
    SentenceMentionList,
    SentenceTripleList,
    TripleList,
)

MODELS = [MentionList, SentenceMentionList, FamiliarityList, DescriptionList, TripleList, SentenceTripleList,
          PairRelationList]


def test_answers_are_read_with_their_key_variants_and_shapes():
    mentions = parse_reply('[{"name": "ANU", "type": "university, org | body"}, "MEL", {"text": " "}, '
                           '{"entity": "KG", "parents": ["a; b", ["c"]]}, 7.5]', MentionList).mentions
    assert [(m.text, m.types) for m in mentions] == [("ANU", ["university", "org", "body"]), ("MEL", []),
                                                     ("KG", ["a", "b", "c"])]
    assert parse_reply('{"mentions": [], "entities": [{"term": "X"}]}', MentionList).mentions[0].text == "X"
    per_sentence = parse_reply('{"sentences": [{"id": "2", "entities": ["A"]}, {"mentions": ["B"]}]}',
                               SentenceMentionList).sentences
    assert [(s.sentence, [m.text for m in s.mentions]) for s in per_sentence] == [(2, ["A"])]  # no number: dropped
    terms = parse_reply('{"items": [{"id": 1, "familiar": "Yes"}, {"term": 2, "known": true}, {"n": 3}]}',
                        FamiliarityList).terms
    assert [(t.id, t.familiar) for t in terms] == [(1, True), (2, True), (3, False)]
    described = parse_reply('{"types": [{"type": 1, "definition": " a\\n b "}, {"id": 2, "description": ""}]}',
                            DescriptionList).descriptions
    assert [(d.id, d.description) for d in described] == [(1, "a b")]
    triples = parse_reply('{"relations": [["MEL", "uses", "Tika"], {"head": "A", "relation": "is", "tail": "B"}, '
                          '{"subject": "", "predicate": "p", "object": "o"}, ["too", "short"]]}', TripleList).triples
    assert [(t.subject, t.predicate, t.object) for t in triples] == [("MEL", "uses", "Tika"), ("A", "is", "B")]
    pairs = parse_reply('{"pairs": [{"pair": 1, "source": "x", "p": "extends", "target": "y"}, '
                        '{"id": 2, "relation": "No relation"}]}', PairRelationList).pairs
    assert [(p.pair, p.subject, p.predicate, p.object) for p in pairs] == [(1, "x", "extends", "y"),
                                                                           (2, None, None, None)]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_an_answer_without_its_list_is_refused_with_the_raw_answer(model):
    with pytest.raises(ModelOutputError, match=f"answer does not match {model.__name__}: missing required") as bad:
        parse_reply('{"nodes": [1]}', model)
    assert bad.value.raw == '{"nodes": [1]}'


def _check_schema(node: Any, where: str = "$") -> None:
    """``node`` is a JSON schema object of the kinds response_format takes: typed, every object's
    required keys among its properties, every array's items a schema, no unresolved references."""
    assert isinstance(node, dict) and "$ref" not in node and "$defs" not in node, where
    kind = node.get("type")
    assert kind in {"object", "array", "string", "integer", "number", "boolean"}, where
    if kind == "object":
        assert isinstance(node["properties"], dict) and node["properties"], where
        assert set(node.get("required", [])) <= set(node["properties"]), where
        for name, sub in node["properties"].items():
            _check_schema(sub, f"{where}.{name}")
    if kind == "array":
        _check_schema(node["items"], f"{where}[]")


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_each_answer_schema_is_a_valid_json_schema_object(model):
    schema = output_schema(model)
    _check_schema(schema)
    assert schema["type"] == "object" and len(schema["required"]) == 1  # the one list the prompt asks for


def test_the_stage_sends_the_compact_schema(lkg_server, run_stage, paper):
    server = lkg_server()
    run_stage(server, lambda ctx: MentionStage(ctx, paper).run(), levels=["section"])
    sent = {r["response_format"]["json_schema"]["name"]: r["response_format"]["json_schema"]["schema"]
            for r in server.stats.requests if "response_format" in r}
    assert sent == {"MentionList": output_schema(MentionList)}
    assert sent["MentionList"]["properties"]["mentions"]["items"] == {"type": "object", "properties": {
        "text": {"type": "string"}, "types": {"type": "array", "items": {"type": "string"}}}, "required": ["text"]}
