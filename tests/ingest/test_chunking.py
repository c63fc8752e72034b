import pytest

from scholargraph.ingest.chunking import chunk_document, layout
from scholargraph.ingest.tokenizer import load_tokenizer
from scholargraph.models import Document, Section
from scholargraph.text.sentences import sentence_spans


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer()


def paper() -> Document:
    intro = " ".join(f"Introduction sentence number {i} explains the motivation of the study." for i in range(40))
    body = " ".join(f"The method step {i} uses a transformer encoder, e.g. BERT, with care." for i in range(60))
    return Document(
        id="p1",
        title="A Study",
        sections=[
            Section("Abstract", "We study graphs. Results are good.", kind="abstract", page_start=1, page_end=1),
            Section(
                "1 Introduction",
                intro,
                kind="introduction",
                page_start=1,
                page_end=2,
                page_marks=[(len(intro) // 2, 2)],
            ),
            Section("2 Method", body, page_start=2, page_end=4),
            Section(
                "3 Conclusion",
                "We conclude that graphs help. Future work remains.",
                kind="conclusion",
                page_start=4,
                page_end=4,
            ),
            Section("References", "[1] Someone. A paper. 2020.", kind="references", page_start=5, page_end=5),
        ],
    )


def test_spans_index_the_laid_out_text_and_never_cut_sentences(tok):
    doc = paper()
    chunks = chunk_document(doc, tok, size=120, overlap=20)
    full, placed = layout(doc)
    units = sentence_spans(full)  # headings are paragraphs of their own: units too
    starts, ends = {s for s, _ in units}, {e for _, e in units}
    for c in chunks:
        assert full[c.char_start : c.char_end] == c.text
        assert c.char_start in starts and c.char_end in ends
        assert c.tokens <= 120
    assert [full[p.start : p.text_start].strip() for p in placed][:3] == ["Abstract", "1 Introduction", "2 Method"]


def test_the_introductory_part_is_never_mixed_with_the_rest_and_references_are_excluded(tok):
    chunks = chunk_document(paper(), tok, size=400, overlap=0)
    assert not any("Someone. A paper" in c.text for c in chunks)
    intro = [c for c in chunks if "Introduction" in (c.section or "") or "Abstract" in (c.section or "")]
    assert intro and not any("method step" in c.text or "conclude" in c.text for c in intro)
    # the short conclusion shares the body's last chunk (it would otherwise pay a call of its own)
    assert chunks[-1].section == "2 Method / 3 Conclusion" and chunks[-1].text.endswith("Future work remains.")
    with_refs = chunk_document(paper(), tok, size=400, overlap=0, include_references=True)
    assert any("Someone. A paper" in c.text for c in with_refs)


def test_headings_are_in_the_text_and_the_header_names_a_section_only_when_the_chunk_starts_inside_it(tok):
    chunks = chunk_document(paper(), tok, size=120, overlap=20)
    for c in chunks:
        assert c.header.startswith("Paper: A Study")
        first = (c.section or "").split(" / ")[0]
        if c.text.startswith(first):
            assert "Section:" not in c.header
        else:
            assert c.header.endswith(f"Section: {first}")
    assert chunks[0].text.startswith("Abstract\n\nWe study graphs.")
    assert any(c.text.startswith("2 Method\n\nThe method step 0") for c in chunks)


def _sections(*sizes: int, kind: str = "body") -> list[Section]:
    """Body sections of about ``n`` tokens each (one ~16-token sentence repeated)."""
    return [Section(f"{i + 2} Part {i}", " ".join(f"Step {j} of part {i} uses a graph encoder with care." for j in range(n // 14)),
                    kind=kind, page_start=i + 2, page_end=i + 2) for i, n in enumerate(sizes)]


def _body_chunks(tok, sections: list[Section], size: int = 1200, overlap: int = 100):
    doc = Document(id="d", title="T", sections=[Section("Abstract", "An abstract.", kind="abstract"), *sections])
    return [c for c in chunk_document(doc, tok, size=size, overlap=overlap) if "Abstract" not in (c.section or "")]


def test_short_sections_share_one_chunk(tok):
    chunks = _body_chunks(tok, _sections(150, 120, 200, 90, 160))
    assert len(chunks) == 1
    assert chunks[0].section == "2 Part 0 / 3 Part 1 / 4 Part 2 / 5 Part 3 / 6 Part 4"
    assert (chunks[0].page_start, chunks[0].page_end) == (2, 6)
    assert [line for line in chunks[0].text.splitlines() if line.endswith(tuple("01234"))] == [
        "2 Part 0", "3 Part 1", "4 Part 2", "5 Part 3", "6 Part 4"]


def test_section_tails_do_not_get_chunks_of_their_own(tok):
    """Three 700-token sections fill two chunks of 1200, not three (each tail used to be its own chunk)."""
    sections = _sections(700, 700, 700)
    chunks = _body_chunks(tok, sections)
    total = sum(c.tokens for c in chunks)
    assert len(chunks) == 2 and total < 2 * 1200
    assert all(c.tokens <= 1200 for c in chunks)


def test_a_nearly_full_chunk_ends_before_the_next_heading(tok):
    chunks = _body_chunks(tok, _sections(1000, 400))
    assert len(chunks) == 2
    assert chunks[0].section == "2 Part 0" and chunks[1].text.startswith("3 Part 1\n\n")
    assert "Section:" not in chunks[1].header


def test_a_heading_never_ends_a_chunk(tok):
    for size in range(60, 200, 7):
        for c in _body_chunks(tok, _sections(70, 50, 90, 40), size=size, overlap=10):
            last_line = c.text.splitlines()[-1]
            assert not last_line.endswith(tuple("0123")) or " " in last_line and last_line.endswith("."), (size, c.text)


def test_page_spans_follow_page_marks(tok):
    chunks = [c for c in chunk_document(paper(), tok, size=100, overlap=0) if c.section == "1 Introduction"]
    assert chunks[0].page_start == 1 and chunks[-1].page_end == 2
    assert any(c.page_start == c.page_end == 1 for c in chunks) and any(c.page_start == c.page_end == 2 for c in chunks)
    method = [c for c in chunk_document(paper(), tok, size=100, overlap=0) if c.section == "2 Method"]
    assert all((c.page_start, c.page_end) == (2, 4) for c in method)  # no marks: the section's span


def test_overlap_repeats_whole_sentences(tok):
    chunks = [c for c in chunk_document(paper(), tok, size=100, overlap=30) if c.section == "2 Method"]
    assert len(chunks) > 2
    for a, b in zip(chunks, chunks[1:], strict=False):
        assert b.char_start < a.char_end  # overlapping
        assert a.text.endswith(".") and b.text[0].isupper()


def test_token_strategy_windows(tok):
    chunks = chunk_document(paper(), tok, size=64, overlap=16, strategy="tokens")
    assert all(c.tokens <= 66 for c in chunks)
    assert len(chunks) > 5


def test_long_sentence_is_split(tok):
    doc = Document(id="x", title="t", sections=[Section("", "word " * 600 + ".")])
    chunks = chunk_document(doc, tok, size=100, overlap=10)
    assert len(chunks) >= 6 and all(c.tokens <= 100 for c in chunks)


def test_chunk_ids_are_stable(tok):
    a = [c.id for c in chunk_document(paper(), tok, size=120, overlap=20)]
    b = [c.id for c in chunk_document(paper(), tok, size=120, overlap=20)]
    assert a == b and len(set(a)) == len(a)


def test_sentence_spans_respect_abbreviations():
    text = "Smith et al. proposed it, e.g. for graphs. It works (Fig. 2). Next one."
    sents = [text[s:e] for s, e in sentence_spans(text)]
    assert sents == ["Smith et al. proposed it, e.g. for graphs.", "It works (Fig. 2).", "Next one."]


@pytest.mark.parametrize("strategy", ["structure", "tokens"])
def test_three_parts_keep_introduction_body_and_conclusion_in_chunks_of_their_own(tok, strategy):
    """thesis 000 §5.2.3 as an option (chunking.parts = "three"): no chunk mixes two of the parts."""
    doc = paper()
    two = chunk_document(doc, tok, size=400, overlap=40, strategy=strategy)
    assert any("2 Method" in c.section and "3 Conclusion" in c.section for c in two)  # the default shares
    three = chunk_document(doc, tok, size=400, overlap=40, strategy=strategy, parts="three")
    part = {"Abstract": "intro", "1 Introduction": "intro", "2 Method": "body", "3 Conclusion": "conclusion"}
    for c in three:
        assert len({part[s] for s in c.section.split(" / ")}) == 1, c.section
    assert [c.section for c in three][-1] == "3 Conclusion"
    assert [c.text for c in three if part[c.section.split(" / ")[0]] == "intro"] == [
        c.text for c in two if "1 Introduction" in c.section or c.section == "Abstract"]
