"""The paper as the stages read it: sections, paragraphs, sentences tied to chunks and pages; units
per level, with no level read twice and long sections in windows."""

from __future__ import annotations

from fixtures.localkg_papers import small_paper

from scholargraph.ingest.chunking import layout
from scholargraph.profiles.localkg.document import read_paper


def test_sentences_know_their_section_paragraph_chunk_and_page(paper):
    assert [s.heading for s in paper.sections] == ["Abstract", "Methods", "Conclusion"]
    assert [len(s.paragraphs) for s in paper.sections] == [1, 2, 1]
    texts = [s.text for s in paper.sentences]
    assert texts[2] == "The Metadata Extractor and Loader (MEL) extracts metadata from files."
    assert [s.ordinal for s in paper.sentences] == list(range(len(texts))) and len(texts) == 7
    methods = paper.sections[1]
    assert [(s.paragraph_no, s.chunk_id, s.page) for s in methods.sentences] == [
        (0, "p1-c1", 1), (0, "p1-c1", 1), (1, "p1-c1", 2), (1, "p1-c1", 2)]
    doc, _ = small_paper()
    text = layout(doc)[0]
    for s in paper.sentences:  # offsets index the laid-out text, as chunk spans do
        assert text[s.start:s.start + len(s.text)] == s.text
    records = paper.records()
    assert [(r.ordinal, r.section, r.page) for r in records][2] == (2, "Methods", 1)


def test_units_skip_levels_that_repeat_the_level_above(paper):
    sections = paper.units("section", 2500)
    paragraphs = paper.units("paragraph", 2500)
    sentences = paper.units("sentence", 2500)
    assert [u.label for u in sections] == ["§1", "§2", "§3"]
    assert [u.label for u in paragraphs] == ["§2 ¶1", "§2 ¶2"]  # one-paragraph sections were read whole
    assert [u.label for u in sentences] == ["§1 ¶1 s1", "§1 ¶1 s2", "§2 ¶1 s1", "§2 ¶1 s2", "§2 ¶2 s1", "§2 ¶2 s2"]
    assert sections[1].text == paper.sections[1].text


def test_a_long_section_is_read_in_windows_of_whole_paragraphs(paper):
    windows = paper.units("section", 20)
    assert [u.label for u in windows] == ["§1", "§2 part 1", "§2 part 2", "§3"]
    assert windows[1].text == paper.sections[1].paragraphs[0].text
    # a paragraph that was a window of its own is not read again at the paragraph level
    assert paper.units("paragraph", 20) == []
    assert len(paper.units("sentence", 20)) == 6


def test_sentences_no_chunk_holds_are_not_read():
    doc, chunks = small_paper()
    paper = read_paper(doc, chunks[:2])  # e.g. references left out by the chunker
    assert [s.heading for s in paper.sections] == ["Abstract", "Methods"]
