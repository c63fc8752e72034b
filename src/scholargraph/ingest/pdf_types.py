"""The backend-neutral records of a PDF's layout (see :mod:`.pdf_layout`): spans, lines, pages, the
outline. Data only, so that every pdf module can use them without importing the analysis."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Span:
    """A run of text in one font. Coordinates are top-down points; ``page`` is 1-based."""

    text: str
    size: float
    bold: bool
    font: str
    x0: float
    y0: float
    x1: float
    y1: float
    page: int
    rotated: bool = False


@dataclass
class Line:
    """Spans on one baseline, in reading order as the backend gave them."""

    spans: list[Span]
    text: str = ""
    size: float = 0.0  # dominant (character-weighted) size; small caps count as their capital size
    bold: bool = False  # at least 80% of the characters are bold
    all_bold: bool = False
    bold_prefix: str = ""  # leading bold text when the rest of the line is not bold (run-in heading)
    x0: float = 0.0
    y0: float = 0.0
    x1: float = 0.0
    y1: float = 0.0
    page: int = 0
    rotated: bool = False

    @property
    def words(self) -> int:
        return len(self.text.split())


@dataclass
class PageLayout:
    number: int  # 1-based
    width: float
    height: float
    spans: list[Span] = field(default_factory=list)
    error: str | None = None  # set when the backend could not read this page


@dataclass
class OutlineItem:
    level: int
    title: str
    page: int | None  # 1-based


@dataclass
class PdfLayout:
    """What a backend extracted from one file."""

    pages: list[PageLayout]
    outline: list[OutlineItem] = field(default_factory=list)
    meta_title: str = ""
    meta_author: str = ""
    backend: str = ""
    warnings: list[str] = field(default_factory=list)
    gap_spaces: bool = True  # False: span texts already contain the spaces between words
    meta_date: str = ""  # the document information's CreationDate, e.g. "D:20200519234246Z"
