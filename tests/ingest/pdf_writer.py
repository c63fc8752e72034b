"""PDFs written with fpdf2 for the PDF loader tests: lines at explicit positions (points), so
pages, fonts and line breaks are known."""

from __future__ import annotations

import fpdf

TITLE = "Graph Retrieval for Scientific Papers: A Study of Title Extraction"
BODY = (
    "Retrieval augmented generation grounds the answers of a language model in documents that a search "
    "step selects from a collection. Scientific papers are long and structured, so the parser has to keep "
    "track of sections, pages and titles before any of the text is split into chunks for indexing."
)


class Writer:
    """Lines at explicit positions (points), so that pages and line breaks are known."""

    def __init__(self, outline: bool = False) -> None:
        self.pdf = fpdf.FPDF(unit="pt", format="A4")
        self.outline = outline
        self.y = 0.0
        self.pages = 0
        self.new_page()

    def new_page(self) -> None:
        self.pdf.add_page()
        self.pages += 1
        self.pdf.set_font("Helvetica", size=8)
        self.pdf.text(250, 30, "Preprint. Under review.")  # running header
        self.pdf.text(295, 815, str(self.pages))  # page number
        self.y = 90.0

    def line(self, text: str, size: float = 10, bold: bool = False, x: float = 72, step: float | None = None) -> None:
        self.pdf.set_font("Helvetica", "B" if bold else "", size)
        self.pdf.text(x, self.y, text)
        self.y += step if step is not None else size * 1.25

    def heading(self, text: str, level: int = 0, size: float = 12) -> None:
        self.y += 8
        if self.outline:
            self.pdf.set_y(self.y - size)
            self.pdf.start_section(text, level=level)
            self.line(text, 10)  # outline variant: headings look like body text
        else:
            self.line(text, size, bold=True)

    def body(self, sentences: int = 4, text: str = BODY) -> None:
        words = " ".join([text] * sentences).split()
        cur = ""
        for word in words:
            if len(cur) + len(word) > 85:
                self.line(cur)
                cur = word
            else:
                cur = f"{cur} {word}".strip()
        self.line(cur)

    def row(self, cells: list[tuple[float, str]], size: float = 9, bold: bool = False, step: float | None = None) -> None:
        """Several pieces on one baseline at the given x positions (figure labels, table cells)."""
        self.pdf.set_font("Helvetica", "B" if bold else "", size)
        for x, text in cells:
            self.pdf.text(x, self.y, text)
        self.y += step if step is not None else size * 1.25

    def skip(self, points: float) -> None:
        """Leave empty space (where a figure's image would be)."""
        self.y += points

    def stamp(self, text: str, size: float = 20) -> None:
        """An arXiv-style side stamp, rotated along the left margin."""
        with self.pdf.rotation(90, x=40, y=600):
            self.pdf.set_font("Times", size=size)
            self.pdf.text(40, 600, text)
