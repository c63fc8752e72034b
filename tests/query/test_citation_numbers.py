"""Answers number the sources they cite [1], [2], ... in the order cited (an answer cited
[24], [25], [27] and no [1]); ``Answer.sources`` holds the cited sources, ``context_sources`` all."""

import asyncio
import json

from scholargraph import KnowledgeBase
from scholargraph.models import Answer, Source
from scholargraph.query.citations import CitationNumbers, number_cited_sources

TEXTS = [f"Paper {i} says that method M{i} improves retrieval on benchmark B{i}." for i in range(1, 8)]


def source(n: int) -> Source:
    return Source(n, "chunk", f"c{n}", f"d{n}", f"Title {n}", None, None, None, f"text {n}")


def test_cited_sources_are_numbered_from_one_in_citation_order():
    answer = Answer("q", "A [24] and B [27][24]. C [25].", "hybrid", [source(n) for n in range(1, 31)], cited=[24, 27, 25])
    number_cited_sources(answer)
    assert answer.text == "A [1] and B [2][1]. C [3]."
    assert [(s.number, s.context_number, s.title) for s in answer.sources] == [
        (1, 24, "Title 24"), (2, 27, "Title 27"), (3, 25, "Title 25")]
    assert answer.cited == [1, 2, 3] and len(answer.context_sources) == 30
    assert [s.number for s in answer.context_sources][:3] == [1, 2, 3]  # the context keeps its numbers
    data = answer.to_json()
    assert [(s["rank"], s["context_rank"]) for s in data["sources"]] == [(1, 24), (2, 27), (3, 25)]
    assert data["context_sources"] == 30


def test_the_notes_name_sources_by_the_numbers_the_text_shows():
    # Qwen2.5-Coder 1.5B, HotpotQA: the answer showed "directed by Stephen King [1]" while its note said
    # the product had matched the sentence to "[5] 4 of 4" (the source's number in the context)
    answer = Answer("q", "Directed by Stephen King [5].", "naive", [source(n) for n in range(1, 8)], cited=[5],
                    notes=["the model's answer cites none of the sources: 1 of its sentences are cited to the source(s) "
                           "that hold their words ([5] 4 of 4; matched by scholargraph, not cited by the model)",
                           "removed citation(s) [9]: not among the 7 sources given to the model"])
    number_cited_sources(answer)
    assert answer.text == "Directed by Stephen King [1]."
    assert "([1] 4 of 4; matched" in answer.notes[0]
    assert answer.notes[1] == "removed citation(s) [9]: not among the 7 sources given to the model"


def test_streamed_pieces_get_the_numbers_of_the_final_text():
    numbers = CitationNumbers()
    streamed = numbers.apply("first [5], then [2]") + numbers.apply(" and [5] again [9].")
    assert streamed == "first [1], then [2] and [1] again [3]."
    assert numbers.apply("first [5], then [2] and [5] again [9].") == streamed


def test_llm_answer_streamed_and_final_text_agree(tmp_path, llm_server):
    with KnowledgeBase(tmp_path / "ws", extraction={"profile": "offline"}) as kb:
        kb.insert(texts=TEXTS)
    server = llm_server(default_reply="M3 helps [3]. So does M1 [1][3]. Unknown [99] too.")
    with KnowledgeBase(tmp_path / "ws", llm={"base_url": server.base_url, "model": "scripted-model"},
                       extraction={"profile": "offline"}) as kb:
        pieces: list[str] = []
        answer = asyncio.run(kb.aquery("Which methods improve retrieval?", "naive", 5, on_text=pieces.append))
    assert " ".join(answer.text.split()) == "M3 helps [1]. So does M1 [2][1]. Unknown too."
    assert "".join(pieces).strip() == answer.text
    assert answer.cited == [1, 2] and [s.number for s in answer.sources] == [1, 2]
    assert [s.context_number for s in answer.sources] == [3, 1] and answer.removed_citations == [99]
    assert len(answer.context_sources) == 5 and "[3]" in answer.context  # the context keeps rank numbers
    by_context = {s.number: s for s in answer.context_sources}
    assert answer.sources[0].chunk_id == by_context[3].chunk_id and answer.sources[1].chunk_id == by_context[1].chunk_id
    assert json.loads(json.dumps(answer.to_json()))["sources"][0]["rank"] == 1


def test_retrieve_json_names_its_sources_like_the_answer(tmp_path, capsys):
    from scholargraph.cli import main

    with KnowledgeBase(tmp_path / "ws", extraction={"profile": "offline"}) as kb:
        kb.insert(texts=TEXTS)
    assert main(["retrieve", "Which methods improve retrieval?", "-w", str(tmp_path / "ws"), "--json", "-m", "naive"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["sources"] and data["sources"] == data["results"]  # "results": the older name, kept
