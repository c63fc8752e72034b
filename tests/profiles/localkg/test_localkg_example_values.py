"""The localkg stages drop what a model copies from a prompt's reply example ("parent type" as a
type, "entity" as an object, "verb phrase" as a predicate, "one sentence" as a description),
checked on real Qwen2.5-Coder 0.5B replies (tests/fixtures/real_model/localkg_example_values.json)."""

from __future__ import annotations

import json
from pathlib import Path

from scholargraph.llm.output import example_placeholders, parse_reply
from scholargraph.profiles.localkg.calls import prompt
from scholargraph.profiles.localkg.outputs import DescriptionList, SentenceMentionList, SentenceTripleList

REAL = json.loads((Path(__file__).parents[2] / "fixtures" / "real_model" / "localkg_example_values.json").read_text())
CALLS = REAL["calls"]


def _parsed(name: str, model):
    call = CALLS[name]
    return parse_reply(call["reply"], model, placeholders=example_placeholders(call["system"]))


def test_a_copied_type_is_dropped_and_the_mention_kept():
    parsed = _parsed("mentions_sentences", SentenceMentionList)
    mentions = [m for s in parsed.sentences for m in s.mentions]
    assert mentions and all("parent type" not in [t.casefold() for t in m.types] for m in mentions)
    assert "metadata and content-based information extraction" in mentions[0].text


def test_a_triple_whose_object_is_the_example_is_dropped():
    parsed = _parsed("relations_sentences", SentenceTripleList)
    assert all(t.object.casefold() != "entity" for s in parsed.sentences for t in s.triples)
    assert not [t for s in parsed.sentences for t in s.triples]  # its only triple was ("MEL", "verb phrase", "entity")


def test_copied_descriptions_are_not_descriptions():
    parsed = _parsed("describe_type", DescriptionList)
    assert not any((d.description or "").casefold() == "one sentence" for d in parsed.descriptions)


def test_every_localkg_reply_example_names_its_placeholders():
    """Each stage prompt that shows a JSON reply example gives the filter its example values."""
    for name in ("mentions", "mentions_sentences", "relations", "relations_sentences", "paper_relations",
                 "describe_type", "describe_term", "describe_context", "describe_predicate"):
        system = prompt(name).system
        assert example_placeholders(system), name
