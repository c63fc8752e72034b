"""Pure layout analysis: no PDF files involved."""

from __future__ import annotations

from scholargraph.ingest import pdf_layout as L
from scholargraph.ingest.pdf_layout import Span


def sp(
    text: str,
    size: float = 10.0,
    bold: bool = False,
    x0: float = 72.0,
    y0: float = 100.0,
    page: int = 1,
    rotated: bool = False,
    x1: float | None = None,
) -> Span:
    x1 = x0 + 0.5 * size * len(text) if x1 is None else x1
    return Span(text, size, bold, "Times-Bold" if bold else "Times", x0, y0, x1, y0 + size, page, rotated)


def body_lines(y0: float, n: int, page: int = 1, x0: float = 72.0) -> list[Span]:
    return [
        sp(f"body text line number {i} of a paragraph that fills the column width", y0=y0 + 12 * i, page=page, x0=x0)
        for i in range(n)
    ]


# --- text cleaning -------------------------------------------------------------------------


def test_dehyphenation_and_ligatures() -> None:
    assert L.join_lines(["We describe our meth-", "ods in detail."]) == "We describe our methods in detail."
    assert L.join_lines(["a state-of-the-", "art model"]) == "a state-of-the-art model"  # compound kept
    assert L.join_lines(["the Cite-", "See tool"]) == "the Cite-See tool"  # capitalised: a real hyphen
    assert L.join_lines(["Long-", "form"], keep_hyphen=True) == "Long-form"
    assert L.clean_text("eﬃcient ﬁne-tuning ﬂows") == "efficient fine-tuning flows"


def test_letter_spacing_collapsed() -> None:
    assert L.collapse_letter_spacing("A T T E N T I O N") == "ATTENTION"
    assert L.collapse_letter_spacing("A T T E N T I O N  I S  A L L") == "ATTENTION IS ALL"
    assert L.collapse_letter_spacing("Attention Is All You Need") == "Attention Is All You Need"
    assert L.collapse_letter_spacing("A B test") == "A B test"  # too short to be letter-spaced


def test_bold_from_font_names() -> None:
    for name in ("ABCDEF+Times-Bold", "NimbusRomNo9L-Medi", "LinBiolinumTB", "Arial,Bold", "Helvetica-Black", "CMBX12"):
        assert L.is_bold_font(name), name
    for name in ("Times-Roman", "NimbusRomNo9L-Regu", "LinLibertineT", "CMR10", "Helvetica-Oblique"):
        assert not L.is_bold_font(name), name


def test_metadata_title_plausibility() -> None:
    assert L.looks_like_title("Deep Learning for Citation Graphs")
    for bad in ("", "Microsoft Word - paper_v3.doc", "paper_final.pdf", "untitled", "C:\\temp\\x.tex", "Draft"):
        assert not L.looks_like_title(bad), bad


# --- lines and title -----------------------------------------------------------------------


def test_spans_on_one_baseline_form_a_line_with_spaces_from_gaps() -> None:
    lines = L.build_lines([sp("1", 12, True, x0=72), sp("Introduction", 12, True, x0=90), sp("next", y0=130)])
    assert [ln.text for ln in lines] == ["1 Introduction", "next"]
    assert lines[0].bold and lines[0].size == 12


def test_title_skips_rotated_stamp_and_joins_lines() -> None:
    spans = [
        sp("arXiv:2401.00001v1 [cs.CL] 1 Jan 2024", 20, x0=20, y0=300, rotated=True),
        sp("Graph Retrieval for Scientific", 17, True, x0=100, y0=80),
        sp("Papers with Persistent Context", 17, True, x0=110, y0=100),
        sp("Ada Lovelace, Alan Turing", 12, x0=150, y0=130),
        *body_lines(200, 10),
    ]
    title, group = L.detect_title([L.build_lines(spans)])
    assert title == "Graph Retrieval for Scientific Papers with Persistent Context"
    assert len(group) == 2


def test_title_prefers_bold_at_the_largest_size() -> None:
    spans = [sp("JOURNAL OF THINGS", 17, False, y0=40), sp("The Real Title Here", 17, True, y0=80), *body_lines(200, 5)]
    assert L.detect_title([L.build_lines(spans)])[0] == "The Real Title Here"


def test_small_caps_title_counts_at_capital_size() -> None:
    # LONGEVAL printed in small caps: capitals at 14.3 pt, the rest at 11.5 pt
    first = [
        sp("L", 14.3, True, x0=145, y0=72, x1=155),
        sp("ONG", 11.5, True, x0=155.5, y0=75, x1=183),
        sp("E", 14.3, True, x0=183.8, y0=72, x1=193),
        sp("VAL", 11.5, True, x0=194.1, y0=75, x1=218),
        sp(": Guidelines for Human Evaluation of", 14.3, True, x0=218.5, y0=72),
    ]
    second = [sp("Faithfulness in Long-form Summarization", 14.3, True, x0=168, y0=88)]
    authors = [sp("Kalpesh Krishna Erin Bransom", 12, True, x0=158, y0=115)]
    title, _ = L.detect_title([L.build_lines(first + second + authors + body_lines(200, 8))])
    expected = "LongEval: Guidelines for Human Evaluation of Faithfulness in Long-form Summarization"
    assert title.casefold() == expected.casefold()


def test_small_caps_only_title_beats_author_line() -> None:
    spans = [
        sp("D", 14, True, x0=100, y0=72, x1=110),
        sp("EEP", 11, True, x0=110, y0=74, x1=134),
        sp(" L", 14, True, x0=134, y0=72, x1=150),
        sp("EARNING", 11, True, x0=150, y0=74, x1=200),
        sp("Some Author", 12, True, x0=100, y0=110),
        *body_lines(200, 5),
    ]
    assert L.detect_title([L.build_lines(spans)])[0] == "DEEP LEARNING"


def test_letter_spaced_title() -> None:
    spans = [sp("A T T E N T I O N  I S  A L L", 20, True, y0=72), *body_lines(200, 5)]
    assert L.detect_title([L.build_lines(spans)])[0] == "ATTENTION IS ALL"


# --- headers, footers, headings ------------------------------------------------------------


def test_running_headers_and_page_numbers_dropped() -> None:
    pages = []
    for page in range(1, 5):
        spans = [
            sp("Preprint. Under review.", 8, x0=250, y0=20, page=page),
            *body_lines(100, 5, page),
            sp(str(page), 10, x0=290, y0=780, page=page),
        ]
        pages.append(L.build_lines(spans))
    kept = L.drop_headers_footers(pages, [842.0] * 4)
    texts = [ln.text for lines in kept for ln in lines]
    assert not any("Preprint" in t for t in texts)
    assert not any(t.isdigit() for t in texts)
    assert len(texts) == 20


def _headings(spans: list[Span]) -> list[tuple[str, int]]:
    lines = L.build_lines(spans)
    return [(h.text, h.level) for h in L.detect_headings(lines, 10.0, set())]


def test_numbered_roman_and_known_headings() -> None:
    spans = [
        sp("Abstract", 12, True, y0=60),
        *body_lines(75, 3),
        sp("1", 12, True, x0=72, y0=120),
        sp("Introduction", 12, True, x0=90, y0=120),
        *body_lines(135, 3),
        sp("1 apples are red and this is a numbered list item in the body", 10, y0=175),
        sp("Figure 1: A bold caption that is not a heading", 10, True, y0=190),
        sp("1.1 Details of the Method", 11, True, y0=210),
        *body_lines(225, 3),
        sp("7 Out Of Sequence", 12, True, y0=270),
        *body_lines(285, 2),
        sp("2 Related Work", 12, True, y0=320),
        *body_lines(335, 2),
        sp("References", 12, True, y0=380),
        *body_lines(395, 2),
        sp("A", 12, True, y0=440),
        sp("Appendix Material", 12, True, x0=90, y0=440),
        *body_lines(455, 2),
    ]
    assert _headings(spans) == [
        ("Abstract", 1),
        ("1 Introduction", 1),
        ("1.1 Details of the Method", 2),
        ("2 Related Work", 1),
        ("References", 1),
        ("A Appendix Material", 1),
    ]


def test_roman_numerals_and_run_in_headings() -> None:
    spans = [
        sp("I. INTRODUCTION", 10, True, y0=60),
        *body_lines(75, 2),
        sp("II. RELATED WORK", 10, True, y0=110),
        *body_lines(125, 2),
        sp("Papers.", 10, True, x0=72, y0=160),
        sp(" We obtain metadata from publishers.", 10, x0=110, y0=160),
    ]
    lines = L.build_lines(spans)
    heads = L.detect_headings(lines, 10.0, set())
    assert [(h.text, h.level) for h in heads] == [("I. INTRODUCTION", 1), ("II. RELATED WORK", 1), ("Papers", 3)]
    assert heads[-1].rest == "We obtain metadata from publishers."


def test_multi_line_heading_joined() -> None:
    spans = [
        sp("Appendix", 12, True, y0=70),
        *body_lines(85, 1),
        sp("A", 12, True, y0=100),
        sp("Training corpus sizes for other", 12, True, x0=93, y0=100),
        sp("language models", 12, True, x0=93, y0=114),
        *body_lines(130, 3),
    ]
    lines = L.build_lines(spans)
    heads = L.detect_headings(lines, 10.0, set())
    assert heads[1].text == "A Training corpus sizes for other language models"


def test_multi_line_bold_sentence_is_not_a_heading() -> None:
    spans = [
        sp("Long-form summaries are rarely evaluated by", 11, True, y0=100),
        sp("humans and this continues in bold", 11, True, y0=113),
        *body_lines(130, 3),
    ]
    assert _headings(spans) == []


# --- sections ------------------------------------------------------------------------------


def test_assemble_sections_with_page_spans_and_marks() -> None:
    spans = [
        sp("Title Of Paper", 17, True, y0=50),
        sp("1 Introduction", 12, True, y0=100),
        *body_lines(115, 3),
        *body_lines(60, 2, page=2),
        sp("2 Method", 12, True, y0=200, page=2),
        sp("We describe our meth-", y0=215, page=2),
        sp("ods in detail.", y0=227, page=2),
    ]
    lines = L.build_lines(spans)
    heads = L.detect_headings(lines, 10.0, {0})
    blocks = L.assemble(lines, heads, {0})
    assert [b.heading for b in blocks] == ["", "1 Introduction", "2 Method"]
    assert blocks[0].entries == []  # the title line is skipped
    intro = blocks[1]
    assert (intro.page_start, intro.page_end) == (1, 2)
    text, marks = intro.text()
    assert len(marks) == 1 and marks[0][1] == 2 and text[marks[0][0] :].startswith("body text line number 0")
    method_text, _ = blocks[2].text()
    assert method_text == "We describe our methods in detail."


def test_paragraph_breaks_on_vertical_gap_and_captions_moved_out() -> None:
    spans = [
        sp("first paragraph line one continues", y0=100),
        sp("first paragraph line two ends.", y0=112),
        sp("second paragraph after a gap", y0=140),
        sp("Figure 2: A caption in the flow.", 9, y0=152),
        sp("and the sentence goes on.", y0=60, page=2),
    ]
    lines = L.build_lines(spans)
    text, _ = L.paragraphs([(ln, ln.text) for ln in lines])
    assert text == (
        "first paragraph line one continues first paragraph line two ends.\n\n"
        "second paragraph after a gap and the sentence goes on.\n\nFigure 2: A caption in the flow."
    )


def test_outline_headings_located_in_text() -> None:
    spans = [
        sp("Intro", y0=100),
        *body_lines(115, 2),
        sp("Our Method And", y0=160, page=2),
        sp("Its Parts", y0=172, page=2),
        *body_lines(190, 2, page=2),
    ]
    lines = L.build_lines(spans)
    outline = [
        L.OutlineItem(1, "Intro", 1),
        L.OutlineItem(1, "Our Method and its Parts", 2),
        L.OutlineItem(2, "Not In The Text", 2),
    ]
    heads = L.outline_headings(lines, outline)
    assert heads is not None
    assert [(h.text, h.level, h.extra) for h in heads] == [("Intro", 1, 0), ("Our Method and its Parts", 1, 1)]


def test_journal_labels_are_not_titles_but_review_titles_are() -> None:
    spans = [
        sp("RESEARCH ARTICLE", 20, True, y0=40),
        sp("Review of Graph Retrieval Methods", 17, True, y0=80),
        *body_lines(200, 5),
    ]
    assert L.detect_title([L.build_lines(spans)])[0] == "Review of Graph Retrieval Methods"
