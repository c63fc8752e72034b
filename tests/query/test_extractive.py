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
