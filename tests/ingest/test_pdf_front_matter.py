"""PDF front matter and stray headings: logo words above the title, author lines, figure and
table labels, and the year (arXiv stamp, venue line on the first page, metadata)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.dev_data import dev_data_dir

from scholargraph.ingest import pdf, pdf_pymupdf
from scholargraph.ingest.registry import LoadOptions

pytest.importorskip("fpdf")
from pdf_writer import Writer  # noqa: E402  (needs fpdf)

DEV_PDFS = dev_data_dir(Path(__file__).resolve().parents[2]) / "pdfs"
BACKENDS = [
    "pypdf",
    pytest.param("pymupdf", marks=pytest.mark.skipif(not pdf_pymupdf.available(), reason="PyMuPDF not installed")),
]
PASA = "PaSa: An LLM Agent for Comprehensive Academic Paper Search"


def _finish(w: Writer, path: Path, created: datetime | None = None) -> Path:
    w.heading("2 Method")
    w.body(4)
    w.heading("3 Conclusion")
    w.body(2)
    w.pdf.set_creation_date(created or datetime(2019, 3, 4, tzinfo=UTC))
    w.pdf.output(str(path))
    return path


def _headings(doc) -> list[str]:
    return [s.heading for s in doc.sections if s.heading]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_large_logo_word_above_the_title_is_not_the_title(tmp_path: Path, backend: str) -> None:
    """arXiv 2501.10120: a short word set large as a logo, then the real title in a smaller bold font."""
    w = Writer()
    w.stamp("arXiv:2501.10120v1 [cs.IR] 17 Jan 2025")
    w.line("PaperSearch", 30, bold=True, x=230, step=40)
    w.line("PaSa: An LLM Agent for Comprehensive", 16, bold=True, x=140, step=20)
    w.line("Academic Paper Search", 16, bold=True, x=200, step=30)
    w.line("Yichen He, Guanhua Huang and Peiyuan Feng", 11, x=160, step=30)
    w.heading("Abstract")
    w.body(2, "We introduce an agent that searches for papers. " * 5)
    w.heading("1 Introduction")
    w.body(4)
    doc = pdf.load_pdf(_finish(w, tmp_path / "pasa.pdf"), LoadOptions(), backend=backend)
    assert doc.title == PASA
    assert doc.year == 2025  # from the arXiv stamp, not the file's creation date
    assert _headings(doc) == ["Abstract", "1 Introduction", "2 Method", "3 Conclusion"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_journal_logo_above_the_title_is_not_the_title(tmp_path: Path, backend: str) -> None:
    """MDPI's layout: the journal name set large as a logo in the corner, then the article title."""
    w = Writer()
    w.line("Future Internet 2014, 6, 61-75; doi:10.3390/fi6010061", 10, x=50, step=28)
    w.line("future internet", 28, bold=True, x=377, step=30)
    w.line("ISSN 1999-5903", 10, bold=True, x=464, step=14)
    w.line("Article", 10, x=50, step=26)
    w.line("Analysis Matrix for Smart Cities", 18, bold=True, x=50, step=30)
    w.line("Pablo E. Branchi, Carlos Fernandez-Valdivielso and Ignacio R. Matias", 10, bold=True, x=50, step=30)
    w.heading("Abstract")
    w.body(2)
    w.heading("1 Introduction")
    w.body(3)
    doc = pdf.load_pdf(_finish(w, tmp_path / "fi.pdf"), LoadOptions(), backend=backend)
    assert doc.title == "Analysis Matrix for Smart Cities"


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_one_word_title_alone_is_still_the_title(tmp_path: Path, backend: str) -> None:
    w = Writer()
    w.line("Seq2Graph", 24, bold=True, x=230, step=40)
    w.line("Ada Lovelace and Alan Turing", 11, x=200, step=30)
    w.heading("Abstract")
    w.body(2)
    w.heading("1 Introduction")
    w.body(3)
    doc = pdf.load_pdf(_finish(w, tmp_path / "one.pdf"), LoadOptions(), backend=backend)
    assert doc.title == "Seq2Graph"


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bold_author_line_is_not_a_section(tmp_path: Path, backend: str) -> None:
    w = Writer()
    w.line("Blind Face Restoration with Graph Priors", 17, bold=True, x=120, step=30)
    w.line("Ada Lovelace, Alan Turing, Grace Hopper", 11, bold=True, x=150, step=14)
    w.line("University of Somewhere, Department of Computing", 9, x=160, step=12)
    w.line("ada@example.org", 9, x=230, step=28)
    w.heading("Abstract")
    w.body(2, "We restore faces. " * 8)
    w.heading("1 Introduction")
    w.body(4)
    doc = pdf.load_pdf(_finish(w, tmp_path / "authors.pdf"), LoadOptions(), backend=backend)
    assert doc.title == "Blind Face Restoration with Graph Priors"
    assert doc.authors == ["Ada Lovelace", "Alan Turing", "Grace Hopper"]
    assert _headings(doc) == ["Abstract", "1 Introduction", "2 Method", "3 Conclusion"]
    assert doc.sections[0].kind == "front" and "University of Somewhere" in doc.sections[0].text


@pytest.mark.parametrize("backend", BACKENDS)
def test_figure_and_table_labels_are_not_sections(tmp_path: Path, backend: str) -> None:
    w = Writer()
    w.line("Blind Face Restoration with Graph Priors", 17, bold=True, x=120, step=30)
    w.line("Ada Lovelace and Alan Turing", 11, x=200, step=30)
    w.heading("Abstract")
    w.body(2, "We restore faces. " * 8)
    w.heading("1 Introduction")
    w.body(3)
    # a figure: panel labels in bold on one baseline above the images, then its caption
    w.row([(80, "CLEAN"), (190, "NOISY"), (300, "PSNR=14.96"), (420, "PSNR=28.31")], size=10, bold=True)
    w.skip(110)
    w.line("Figure 1: Restorations of a noisy face by three methods.", 9)
    w.body(2)
    # a table: a bold header row and rows of numbers
    w.line("Table 1: Results on the test set.", 9)
    w.row([(110, "Method"), (250, "PSNR"), (330, "SSIM"), (410, "LPIPS")], size=10, bold=True)
    w.row([(110, "Ours"), (250, "28.31"), (330, "0.81"), (410, "0.21")], size=10)
    w.row([(110, "Baseline"), (250, "24.02"), (330, "0.70"), (410, "0.33")], size=10)
    w.skip(10)
    w.line("Input", 12, bold=True, x=120, step=90)  # a lone bold label above an image
    w.body(2)
    doc = pdf.load_pdf(_finish(w, tmp_path / "figures.pdf"), LoadOptions(), backend=backend)
    assert _headings(doc) == ["Abstract", "1 Introduction", "2 Method", "3 Conclusion"]
    intro = doc.sections[2].text
    assert "Figure 1: Restorations" in intro and "PSNR" in intro  # the labels stay in their section's text


@pytest.mark.parametrize(
    ("venue_lines", "year"),
    [
        (["Proceedings of NAACL-HLT 2018, pages 84-91", "New Orleans, June 1 - 6, 2018. (c)2017 Association"], 2018),
        (["Proceedings of the 58th Annual Meeting, pages 2270-2282", "July 5 - 10, 2020. (c)2020 Association"], 2020),
        (["CHI '23, April 23-28, 2023, Hamburg, Germany"], 2023),
        (["Published as a conference paper at ICLR 2021"], 2021),
    ],
)
def test_year_from_the_venue_line_of_the_first_page(tmp_path: Path, venue_lines: list[str], year: int) -> None:
    w = Writer()
    w.line("Graph Priors for Face Restoration", 17, bold=True, x=120, step=30)
    w.line("Ada Lovelace and Alan Turing", 11, x=200, step=30)
    w.heading("Abstract")
    w.body(2, "We restore faces (Smith et al., 2015; Jones, 2016). " * 4)
    w.heading("1 Introduction")
    w.body(3)
    w.y = 760
    for text in venue_lines:
        w.line(text, 8)
    doc = pdf.load_pdf(_finish(w, tmp_path / "venue.pdf"), LoadOptions(), backend="pypdf")
    assert doc.year == year


def test_year_from_the_metadata_when_the_page_says_nothing(tmp_path: Path) -> None:
    w = Writer()
    w.line("Graph Priors for Face Restoration", 17, bold=True, x=120, step=30)
    w.heading("Abstract")
    w.body(2, "Models from 2015 and 2016 restore faces. " * 4)  # years in running text are not the paper's
    w.heading("1 Introduction")
    w.body(3)
    doc = pdf.load_pdf(_finish(w, tmp_path / "meta.pdf", datetime(2019, 3, 4, tzinfo=UTC)), backend="pypdf")
    assert doc.year == 2019


def test_a_manifest_year_wins(tmp_path: Path) -> None:
    from scholargraph.ingest.registry import load_file

    w = Writer()
    w.stamp("arXiv:2501.10120v1 [cs.IR] 17 Jan 2025")
    w.line("Graph Priors for Face Restoration", 17, bold=True, x=120, step=30)
    w.heading("1 Introduction")
    w.body(3)
    path = _finish(w, tmp_path / "paper.pdf")
    assert load_file(path, LoadOptions(manifest={"paper.pdf": {"year": "2024"}}))[0].year == 2024


DEV_YEARS = {"N18-3011.pdf": 2018, "2020.acl-main.207.pdf": 2020, "2020.acl-main.447.pdf": 2020,
             "2023.eacl-main.121.pdf": 2023, "2304.02623v1.pdf": 2023, "2302.07302v1.pdf": 2023}


@pytest.mark.shared
@pytest.mark.slow
def test_dev_pdfs_have_their_year_and_no_stray_sections() -> None:
    titles = json.loads((DEV_PDFS / "titles.json").read_text())
    for name, year in DEV_YEARS.items():
        doc = pdf.parse_pdf(DEV_PDFS / name, "pypdf")
        assert doc.year == year, name
        assert doc.title.casefold() == titles[name].casefold(), name
    longeval = pdf.parse_pdf(DEV_PDFS / "2023.eacl-main.121.pdf", "pypdf")
    assert not {"Q1", "Q2"} & set(_headings(longeval))  # labels of the figure on page 2

