"""Every ``[n]`` of an answer resolves to a listed source (an extractive answer in
local mode cited [1]-[4] while only [1] and [4] were listed: the sentences of sources cut from the
prompt context were quoted, their numbers kept, the sources dropped)."""

from __future__ import annotations

import asyncio
import re

import pytest

from scholargraph.models import Answer, Source
from scholargraph.query.citations import number_cited_sources

Q = "What links aspirin, inflammation and kinase?"


def _markers(text: str) -> set[int]:
    return {int(n) for n in re.findall(r"\[(\d+)\]", text)}


@pytest.mark.parametrize("mode", ["naive", "local", "subgraph", "global", "hybrid"])
def test_extractive_answer_cites_only_listed_sources(make_engine, mode):
    # a budget so small that most retrieved chunks are cut from the context
    engine = make_engine(max_context_tokens=100, entity_tokens=50, relation_tokens=50)
    answer = asyncio.run(engine.answer(Q, mode))
    listed = {s.number for s in answer.sources}
    assert answer.extractive and _markers(answer.text)
    assert _markers(answer.text) <= listed, (answer.text, listed)
    assert set(answer.cited) == listed
    by_number = {s.number: s for s in answer.sources}
    for line in answer.text.splitlines()[1:]:  # each quoted sentence is in the source it names
        if not line.startswith("- "):
            continue  # the label of the graph evidence
        sentence, number = re.match(r"- (.*) \[(\d+)\]$", line).groups()
        assert sentence.split()[0] in by_number[int(number)].text


def _source(n: int) -> Source:
    return Source(n, "chunk", f"c{n}", f"d{n}", f"Title {n}", None, None, None, f"text {n}")


def test_a_number_without_a_source_is_removed_with_a_note():
    answer = Answer("q", "A [1]. B [2]. C [3]-[4].", "local", [_source(1), _source(4)], cited=[1, 4])
    number_cited_sources(answer)
    assert _markers(answer.text) <= {s.number for s in answer.sources}
    assert answer.text.startswith("A [1]. B. C")
    assert [s.context_number for s in answer.sources] == [1, 4]
    assert any("[2]" in note and "[3]" in note for note in answer.notes)


def test_chat_completion_lists_a_source_for_every_number(make_engine):
    from scholargraph.server.openai_compat import references

    engine = make_engine(max_context_tokens=100, entity_tokens=50, relation_tokens=50)
    answer = asyncio.run(engine.answer(Q, "local"))
    listed = references(answer)
    assert _markers(answer.text) and all(f"\n[{n}] " in listed for n in _markers(answer.text))
    data = answer.to_json()
    assert _markers(data["answer"]) <= {s["rank"] for s in data["sources"]}
