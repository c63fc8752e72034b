
"""PDF loader end to end: PDFs written here with fpdf2, both backends; plus the shared dev PDFs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.dev_data import dev_data_dir

from scholargraph.errors import LoadError
from scholargraph.ingest import pdf, pdf_pymupdf, pdf_pypdf
from scholargraph.ingest import pdf_layout as L
from scholargraph.ingest.registry import LoadOptions, load_file

fpdf = pytest.importorskip("fpdf")
from pdf_writer import TITLE, Writer  # noqa: E402  (needs fpdf)

DEV_PDFS = dev_data_dir(Path(__file__).resolve().parents[2]) / "pdfs"
BACKENDS = [
    "pypdf",
    pytest.param("pymupdf", marks=pytest.mark.skipif(not pdf_pymupdf.available(), reason="PyMuPDF not installed")),
]
def write_paper(path: Path, outline: bool = False, encrypt: str | None = None) -> Path:
    w = Writer(outline)
    with w.pdf.rotation(90, x=40, y=600):  # arXiv-style side stamp, bigger than the title
        w.pdf.set_font("Times", size=24)
        w.pdf.text(40, 600, "arXiv:2401.00001v1 [cs.CL] 1 Jan 2024")
    w.line("Graph Retrieval for Scientific Papers:", 18, bold=True, x=120, step=22)
    w.line("A Study of Title Extraction", 18, bold=True, x=170, step=30)
    w.line("Ada Lovelace, Alan Turing and Grace Hopper", 12, x=150, step=30)
    w.heading("Abstract" if not outline else "Summary of the work")
    w.body(2, "We study how to parse papers. " * 6)
    w.heading("1 Introduction" if not outline else "Why we did it")
    w.body(6)
    w.new_page()
    w.body(3)
    w.heading("2 Method" if not outline else "What we did")
    w.line("We describe our meth-")
    w.line("ods in detail and then discuss the results of the experiments.")
    w.body(3)
    w.heading("2.1 Details", level=1, size=11)
    w.body(4)
    w.new_page()
    w.heading("3 Conclusion" if not outline else "What we learned")
    w.body(3)
    w.heading("References" if not outline else "Cited works")
    for i in range(1, 4):
        w.line(f"[{i}] A. Author and B. Author. 2020. A paper about topic number {i}. In Proceedings.")
    if encrypt is not None:
        w.pdf.set_encryption(owner_password="owner", user_password=encrypt or None)
    w.pdf.output(str(path))
    return path


@pytest.fixture
def paper(tmp_path: Path) -> Path:
    return write_paper(tmp_path / "paper.pdf")


def _kinds(doc) -> list[tuple[str, str, int | None, int | None]]:
    return [(s.heading, s.kind, s.page_start, s.page_end) for s in doc.sections]


@pytest.mark.parametrize("backend", BACKENDS)
def test_paper_structure(paper: Path, backend: str) -> None:
    doc = pdf.load_pdf(paper, LoadOptions(), backend=backend)
    assert doc.title == TITLE  # the rotated 24 pt stamp is not the title
    assert doc.authors == ["Ada Lovelace", "Alan Turing", "Grace Hopper"]
    assert doc.metadata["parser"] == backend and doc.metadata["pages"] == 3
    assert _kinds(doc) == [
        ("", "front", 1, 1),
        ("Abstract", "abstract", 1, 1),
        ("1 Introduction", "introduction", 1, 2),
        ("2 Method", "body", 2, 2),
        ("2.1 Details", "body", 2, 2),
        ("3 Conclusion", "conclusion", 3, 3),
    ]
    assert [s.level for s in doc.sections[3:5]] == [1, 2]
    assert doc.abstract.startswith("We study how to parse papers.")
    method = doc.sections[3].text
    assert method.startswith("We describe our methods in detail")  # de-hyphenated
    assert all("Preprint" not in s.text and "arXiv" not in s.text for s in doc.sections)
    intro = doc.sections[2]
    assert len(intro.page_marks) == 1 and intro.page_marks[0][1] == 2
    assert len(doc.references) == 3 and doc.references[0].startswith("[1] A. Author")
    assert doc.id.startswith("md5:") and doc.content_md5 and not doc.warnings


@pytest.mark.parametrize("backend", BACKENDS)
def test_references_section_only_when_asked(paper: Path, backend: str) -> None:
    doc = pdf.load_pdf(paper, LoadOptions(include_references=True), backend=backend)
    refs = [s for s in doc.sections if s.kind == "references"]
    assert len(refs) == 1 and refs[0].heading == "References" and refs[0].page_start == 3
    plain = pdf.load_pdf(paper, LoadOptions(), backend=backend)
    assert doc.id == plain.id  # the id does not depend on the option


@pytest.mark.parametrize("backend", BACKENDS)
def test_outline_gives_the_headings(tmp_path: Path, backend: str) -> None:
    doc = pdf.load_pdf(write_paper(tmp_path / "outlined.pdf", outline=True), LoadOptions(), backend=backend)
    assert doc.metadata["headings"] == "outline"
    headings = [(s.heading, s.level, s.page_start) for s in doc.sections if s.kind != "front"]
    assert headings == [
        ("Summary of the work", 1, 1),
        ("Why we did it", 1, 1),
        ("What we did", 1, 2),
        ("2.1 Details", 2, 2),
        ("What we learned", 1, 3),
        ("Cited works", 1, 3),
    ]
    kinds = [s.kind for s in doc.sections if s.kind != "front"]
    # no "Abstract"/"Introduction" names: nothing to classify, so all are body sections
    assert kinds == ["body"] * 6


@pytest.mark.parametrize("backend", BACKENDS)
def test_encrypted_pdf(tmp_path: Path, backend: str) -> None:
    path = write_paper(tmp_path / "locked.pdf", encrypt="secret")
    with pytest.raises(LoadError) as err:
        pdf.load_pdf(path, LoadOptions(), backend=backend)
    assert err.value.reason == "encrypted PDF: a password is required"
    # owner password only: opens with the empty user password
    doc = pdf.load_pdf(write_paper(tmp_path / "owner.pdf", encrypt=""), LoadOptions(), backend=backend)
    assert doc.title == TITLE


@pytest.mark.parametrize("backend", BACKENDS)
def test_image_only_pdf(tmp_path: Path, backend: str) -> None:
    doc = fpdf.FPDF()
    for _ in range(2):
        doc.add_page()
        doc.set_fill_color(120, 120, 120)
        doc.rect(20, 20, 150, 200, style="F")
    path = tmp_path / "scan.pdf"
    doc.output(str(path))
    with pytest.raises(LoadError) as err:
        pdf.load_pdf(path, LoadOptions(), backend=backend)
    assert err.value.reason.startswith("no text layer (scanned/image-only PDF): OCR is needed")


@pytest.mark.parametrize("backend", BACKENDS)
def test_truncated_pdf(paper: Path, tmp_path: Path, backend: str) -> None:
    data = paper.read_bytes()
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(data[: len(data) // 2])
    try:
        doc = pdf.load_pdf(cut, LoadOptions(), backend=backend)
    except LoadError as exc:
        assert exc.reason.startswith("damaged or truncated PDF")
    else:
        assert any("truncated" in w for w in doc.warnings)


@pytest.mark.parametrize("backend", BACKENDS)
def test_truncated_pdf_pages_recovered(paper: Path, tmp_path: Path, backend: str) -> None:
    data = paper.read_bytes()
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(data[: int(len(data) * 0.8)])  # the page tree and trailer (written last) are gone
    doc = pdf.load_pdf(cut, LoadOptions(), backend=backend)
    assert doc.title == TITLE and "Abstract" in [s.heading for s in doc.sections]
    assert any("truncated" in w for w in doc.warnings)


@pytest.mark.parametrize("backend", BACKENDS)
def test_garbage_pdf(tmp_path: Path, backend: str) -> None:
    path = tmp_path / "garbage.pdf"
    path.write_bytes(b"%PDF-1.7\n" + b"\x00\x01 not a pdf at all " * 50)
    with pytest.raises(LoadError) as err:
        pdf.load_pdf(path, LoadOptions(), backend=backend)
    assert err.value.reason.startswith("damaged or truncated PDF")


@pytest.mark.parametrize("backend", BACKENDS)
def test_failing_page_is_skipped_with_warning(paper: Path, backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    module = pdf_pypdf if backend == "pypdf" else pdf_pymupdf
    original = module._page_spans

    def flaky(*args):
        number = args[-2] if backend == "pypdf" else args[-1]
        if number == 2:
            raise ValueError("bad content stream")
        return original(*args)

    monkeypatch.setattr(module, "_page_spans", flaky)
    doc = pdf.load_pdf(paper, LoadOptions(), backend=backend)
    assert doc.warnings == ["page 2: could not extract text (ValueError: bad content stream); skipped"]
    assert doc.title == TITLE
    assert "3 Conclusion" in [s.heading for s in doc.sections]
    assert all(s.page_start != 2 for s in doc.sections)


def test_manifest_overrides_metadata(paper: Path) -> None:
    options = LoadOptions(
        manifest={
            "paper.pdf": {
                "doi": "10.1000/xyz",
                "year": "2021",
                "venue": "ACL",
                "authors": "A. One; B. Two",
                "title": "Given Title",
            }
        }
    )
    doc = load_file(paper, options)[0]
    assert (doc.id, doc.doi, doc.year, doc.venue, doc.title) == (
        "10.1000/xyz",
        "10.1000/xyz",
        2021,
        "ACL",
        "Given Title",
    )
    assert doc.authors == ["A. One", "B. Two"]
    doc = load_file(paper, LoadOptions(manifest={"paper": {"id": "paper-7"}}))[0]
    assert doc.id == "paper-7" and doc.title == TITLE


def test_metadata_title_used_only_when_plausible(tmp_path: Path) -> None:
    def plain(name: str, meta_title: str) -> Path:
        doc = fpdf.FPDF()
        doc.set_title(meta_title)
        doc.add_page()
        doc.set_font("Helvetica", size=10)
        for i in range(20):
            doc.text(20, 20 + 6 * i, f"plain text line {i} without any title styling at all")
        doc.output(str(tmp_path / name))
        return tmp_path / name

    good = pdf.load_pdf(plain("a.pdf", "A Real Title From The Metadata"), backend="pypdf")
    assert good.title == "A Real Title From The Metadata" and good.metadata["title_source"] == "metadata"
    # no title styling and unusable metadata: the file name
    bad = pdf.load_pdf(plain("draft_2.pdf", "Microsoft Word - draft_v2.docx"), backend="pypdf")
    assert bad.title == "draft_2" and bad.metadata["title_source"] == "file name"


def test_backend_choice() -> None:
    assert pdf.resolve_backend("pypdf") == "pypdf"
    assert pdf.resolve_backend("auto") == ("pymupdf" if pdf_pymupdf.available() else "pypdf")
    with pytest.raises(ValueError):
        pdf.resolve_backend("pdfminer")
    assert pdf.SPECS[0].suffixes == (".pdf",)


# --- section kinds -------------------------------------------------------------------------


def _block(heading: str, level: int, texts: list[str], page: int = 1) -> L.Block:
    spans = [L.Span(t, 10, False, "Times", 72, 100 + 12 * i, 400, 110 + 12 * i, page) for i, t in enumerate(texts)]
    lines = [L.make_line([s]) for s in spans]
    return L.Block(heading, level, [(ln, ln.text) for ln in lines], [page])


def test_kinds_inherit_and_introduction_fallback() -> None:
    blocks = [
        _block("", 1, ["front matter"]),
        _block("Abstract", 1, ["An abstract."]),
        _block("1 Background", 1, ["Some background."]),
        _block("Contributions", 3, ["We contribute."]),
        _block("2 Method", 1, ["A method."]),
        _block("5 Conclusions", 1, ["Done."]),
        _block("Limits", 2, ["Some."]),
        _block("References", 1, ["[1] A."]),
        _block("Extra", 3, ["[2] B."]),
    ]
    kinds = pdf._kinds(blocks)
    assert kinds == [
        "front",
        "abstract",
        "body",
        "body",
        "body",
        "conclusion",
        "conclusion",
        "references",
        "references",
    ]
    pdf._introduction_fallback(blocks, kinds)  # no "Introduction": the first section after the abstract
    assert kinds[2:4] == ["introduction", "introduction"] and kinds[4] == "body"


def test_introduction_window_when_nothing_follows_the_abstract() -> None:
    sentences = [f"Sentence number {i} of a long text without any headings." for i in range(200)]
    blocks = [_block("", 1, ["front matter"]), _block("Abstract", 1, sentences)]
    kinds = pdf._kinds(blocks)
    pdf._introduction_fallback(blocks, kinds)
    assert kinds == ["front", "abstract", "introduction", "body"]
    assert [b.heading for b in blocks] == ["", "Abstract", "Introduction", ""]
    abstract, intro = (len(b.text()[0]) for b in blocks[1:3])
    assert 1450 <= abstract < 1600 and 4900 <= intro < 5100


# --- the shared dev PDFs -------------------------------------------------------------------


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _heading_key(text: str) -> str:
    return " ".join(re.sub(r"[^a-z ]", " ", text.casefold()).split())


def heading_recall(headings: list[str], expected: set[str]) -> float:
    """Share of expected section names among our headings (case/number-insensitive); a name that
    a parser merged from two consecutive headings ("Model 2.1 Overview") matches their join."""
    ours = [_heading_key(h) for h in headings if _heading_key(h)]
    found = set(ours) | {f"{a} {b}" for a, b in zip(ours, ours[1:], strict=False)}
    return sum(1 for e in expected if e in found) / len(expected)


@pytest.mark.shared
@pytest.mark.slow
@pytest.mark.parametrize("backend", ["auto", *BACKENDS])
def test_dev_titles(backend: str) -> None:
    titles = json.loads((DEV_PDFS / "titles.json").read_text())
    got = {name: pdf.parse_pdf(DEV_PDFS / name, backend).title for name in titles}
    assert {n: _norm(t) for n, t in got.items()} == {n: _norm(t) for n, t in titles.items()}


@pytest.mark.shared
@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("stem", ["N18-3011", "2020.acl-main.207"])
def test_dev_section_recall(stem: str, backend: str) -> None:
    companion = json.loads((DEV_PDFS / f"{stem}.json").read_text())
    expected = {_heading_key(p["section"]) for p in companion["pdf_parse"]["body_text"]} - {""}
    doc = pdf.parse_pdf(DEV_PDFS / f"{stem}.pdf", backend)
    assert heading_recall([s.heading for s in doc.sections], expected) >= 0.9
    kinds = [s.kind for s in doc.sections]
    assert kinds[:3] == ["front", "abstract", "introduction"] and "conclusion" in kinds and "references" in kinds
    assert doc.abstract and len(doc.references) > 20
