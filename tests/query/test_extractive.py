"""Extractive answers (no LLM): the best sentences of the sources, never a section heading."""

from __future__ import annotations

from scholargraph.models import Source
from scholargraph.query.extractive import extractive_answer


def _source(number: int, text: str, section: str | None) -> Source:
    return Source(number=number, kind="chunk", chunk_id=f"c{number}", document_id="d", title="T", section=section,
                  page_start=None, page_end=None, text=text)


def test_headings_inside_a_chunk_are_not_answer_sentences():
    text = ("4. Smart City Labeling: Case Studies on Matrix Testing\n\n"
            "The matrix scores each Smart City technology by its usefulness and its consequences for citizens.\n\n"
            "4.1. Smart City Labeling of Santander\n\n"
            "Santander was labelled with the matrix as a Smart City of the second level.")
    section = "4. Smart City Labeling: Case Studies on Matrix Testing / 4.1. Smart City Labeling of Santander"
    answer, cited = extractive_answer("How is a Smart City labeled with the matrix?", [_source(1, text, section)])
    lines = answer.splitlines()[1:]
    assert cited == [1] and lines
    assert all("Case Studies" not in line and "Labeling of Santander" not in line for line in lines)
    assert any("scores each Smart City technology" in line for line in lines)


def test_the_same_sentence_in_two_overlapping_chunks_is_quoted_once():
    """Chunks overlap; a sentence appears once, under one number."""
    shared = "MapReduce re-executes the tasks of a failed machine on other workers."
    sources = [_source(1, f"Workers fail often. {shared}", "Fault tolerance"),
               _source(2, f"{shared} Masters write checkpoints of their data structures.", "Fault tolerance")]
    answer, cited = extractive_answer("How does MapReduce handle machine failures?", sources)
    assert answer.count("re-executes the tasks") == 1


def test_sentences_cut_by_a_missing_formula_or_made_of_pseudo_code_are_not_quoted():
    text = ("For β > 0, the β-smooth sensitivity of f is\n\n"
            "Smooth sensitivity bounds the noise that the mechanism adds for each database.\n\n"
            "1: for each database x do 2: S ← max(LS(x), β · S); end for 3: return S ← S + Lap(1/ε)")
    answer, _ = extractive_answer("What is the smooth sensitivity of a database?", [_source(1, text, None)])
    lines = answer.splitlines()[1:]
    assert any("bounds the noise" in line for line in lines)
    assert not any("sensitivity of f is" in line or "←" in line for line in lines), lines


def test_graph_modes_add_the_graph_evidence_they_retrieved():
    """Without an LLM the modes differed only in the passages they ranked: graph modes now also
    show the relations they found."""
    chunk = _source(1, "Aspirin inhibits cyclooxygenase in platelets and tissue.", None)
    relation = Source(number=2, kind="relation", chunk_id="c1", document_id="d", title="T", section=None,
                      page_start=None, page_end=None, text="aspirin -> cyclooxygenase: aspirin inhibits cyclooxygenase")
    plain, _ = extractive_answer("What does aspirin inhibit?", [chunk])
    graph, cited = extractive_answer("What does aspirin inhibit?", [chunk], graph=[relation])
    assert "aspirin -> cyclooxygenase" in graph and "aspirin -> cyclooxygenase" not in plain
    assert cited == [1, 2]


def test_passages_sharing_no_word_with_the_question_are_quoted_by_their_first_sentences():
    # PubMedQA: the abstract calls the procedure "DBE" only; retrieval ranked it first, and the
    # extractive answer said "No passage in the indexed documents matches the question"
    text = ("From March 2007 to January 2011, 88 DBE procedures were performed on 66 patients. Indications "
            "included evaluation anemia/gastrointestinal bleed, small bowel IBD and dilation of strictures.")
    answer, cited = extractive_answer("Double balloon enteroscopy: is it efficacious and safe in a community setting?",
                                      [_source(1, text, None)])
    assert "88 DBE procedures were performed on 66 patients. [1]" in answer and cited == [1]
    assert "No passage" not in answer and "shares a word" in answer
