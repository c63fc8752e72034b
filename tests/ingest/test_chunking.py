import pytest

from scholargraph.ingest.chunking import chunk_document
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


def test_spans_index_full_text_and_never_cut_sentences(tok):
    doc = paper()
    chunks = chunk_document(doc, tok, size=120, overlap=20)
    full = doc.full_text
    starts = {s for s, _ in sentence_spans(full)}
    ends = {e for _, e in sentence_spans(full)}
    for c in chunks:
        assert full[c.char_start : c.char_end] == c.text
        assert c.char_start in starts and c.char_end in ends
        assert c.tokens <= 120


def test_parts_are_not_mixed_and_references_excluded(tok):
    chunks = chunk_document(paper(), tok, size=400, overlap=0)
    assert not any("Someone. A paper" in c.text for c in chunks)
    assert any(c.section == "3 Conclusion" for c in chunks)
    assert not any("Conclusion" in (c.section or "") and "method step" in c.text for c in chunks)
    with_refs = chunk_document(paper(), tok, size=400, overlap=0, include_references=True)
    assert any("Someone. A paper" in c.text for c in with_refs)


def test_every_chunk_carries_title_and_section_header(tok):
    for c in chunk_document(paper(), tok, size=120, overlap=20):
        assert c.header.startswith("Paper: A Study")
        assert "Section:" in c.header


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
