"""Backend-neutral PDF layout model and analysis (thesis 000 §5.2.2).

A backend (``pdf_pypdf``, ``pdf_pymupdf``) turns each page into ``Span`` records: text with font
size, weight and a top-down bounding box. Everything here is a pure function of those records:
lines, running headers/footers, the title (largest horizontal bold font on the first pages), and
text cleaning, headings (numbering patterns, font size/weight, the embedded outline) and
section assembly with page spans. Nothing here opens a file.

This module holds lines and running headers/footers; the layout records are in :mod:`.pdf_types`
(below every other pdf module), the rest lives in :mod:`.pdf_text` (text cleaning),
:mod:`.pdf_title`, :mod:`.pdf_headings` and :mod:`.pdf_sections`; all is re-exported here.
"""

from __future__ import annotations

import re
from collections import Counter

from .pdf_headings import Heading, detect_headings, median, outline_headings
from .pdf_sections import Block, assemble, flatten, paragraphs
from .pdf_text import LIGATURES, append_line, clean_text, collapse_letter_spacing, is_bold_font, join_lines, squash_ws
from .pdf_title import detect_title, looks_like_title, title_text
from .pdf_types import Line, OutlineItem, PageLayout, PdfLayout, Span

__all__ = [
    "LIGATURES",
    "Block",
    "Heading",
    "Line",
    "OutlineItem",
    "PageLayout",
    "PdfLayout",
    "Span",
    "append_line",
    "assemble",
    "body_size",
    "build_lines",
    "clean_text",
    "collapse_letter_spacing",
    "detect_headings",
    "detect_title",
    "drop_headers_footers",
    "flatten",
    "is_bold_font",
    "join_lines",
    "looks_like_title",
    "make_line",
    "median",
    "outline_headings",
    "paragraphs",
    "title_text",
]


# --- lines ---------------------------------------------------------------------------------


def _effective_sizes(spans: list[Span]) -> list[float]:
    """Small caps ("L" 14pt + "ONG" 11.5pt) count at the size of their capital."""
    sizes = [s.size for s in spans]
    for i in range(1, len(spans)):
        prev, cur = spans[i - 1], spans[i]
        text = cur.text.strip()
        small_caps = (
            text.isalpha()
            and text.isupper()
            and prev.text[-1:].isupper()
            and not cur.text[:1].isspace()
            and 0.6 <= cur.size / max(sizes[i - 1], 0.1) <= 0.95
        )
        if small_caps:
            sizes[i] = sizes[i - 1]
    return sizes


def _alnum(text: str) -> int:
    return sum(map(str.isalnum, text))


def _line_text(spans: list[Span], gap_spaces: bool) -> str:
    text = ""
    for i, span in enumerate(spans):
        piece = span.text
        if gap_spaces and i and text and not text[-1].isspace() and not piece[:1].isspace():
            prev = spans[i - 1]
            gap = span.x0 - prev.x1
            text += "  " if gap > 0.8 * span.size else " " if gap > 0.25 * max(span.size, prev.size) else ""
        text += piece
    return " ".join(collapse_letter_spacing(clean_text(text)).split())


def make_line(spans: list[Span], gap_spaces: bool = True) -> Line:
    """``gap_spaces``: insert a space where spans are visibly apart (off when the backend's text
    already carries its spaces, as pypdf's does)."""
    weight: Counter[float] = Counter()
    bold_chars = chars = 0
    prefix, in_prefix = "", True
    for span, size in zip(spans, _effective_sizes(spans), strict=True):
        n = _alnum(span.text)
        weight[round(size, 1)] += n
        chars += n
        bold_chars += n if span.bold else 0
        in_prefix = in_prefix and (span.bold or n == 0)
        prefix += span.text if in_prefix else ""
    body = [s for s in spans if s.text.strip()] or spans
    line = Line(
        spans=spans,
        text=_line_text(spans, gap_spaces),
        size=weight.most_common(1)[0][0] if chars else max(s.size for s in spans),
        bold=chars > 0 and bold_chars >= 0.8 * chars,
        x0=min(s.x0 for s in body),
        y0=min(s.y0 for s in body),
        x1=max(s.x1 for s in body),
        y1=max(s.y1 for s in body),
        page=spans[0].page,
        rotated=all(s.rotated for s in body),
    )
    line.all_bold = chars > 0 and bold_chars == chars
    line.bold_prefix = "" if line.all_bold else squash_ws(prefix)
    return line


def _same_line(line: list[Span], span: Span) -> bool:
    last = line[-1]
    if span.rotated != last.rotated or span.page != last.page:
        return False
    if span.x0 < last.x0 - 1 or span.x0 - last.x1 > 4 * max(span.size, last.size):
        return False
    top, bottom = max(span.y0, last.y0), min(span.y1, last.y1)
    smaller = min(span.y1 - span.y0, last.y1 - last.y0) or 1.0
    return (bottom - top) / smaller > 0.45


def build_lines(spans: list[Span], gap_spaces: bool = True) -> list[Line]:
    """Group consecutive spans on the same baseline into lines (empty lines dropped)."""
    groups: list[list[Span]] = []
    for span in spans:
        if not span.text:
            continue
        if groups and _same_line(groups[-1], span):
            groups[-1].append(span)
        else:
            groups.append([span])
    lines = [make_line(g, gap_spaces) for g in groups]
    return [ln for ln in lines if ln.text]


# --- running headers, footers, page numbers ------------------------------------------------

_PAGE_NO = re.compile(r"^(?:page\s*)?[-–—(]?\s*\d{1,4}\s*[-–—)]?(?:\s*(?:of|/)\s*\d{1,4})?$", re.I)


def _margin_key(line: Line, height: float) -> str | None:
    band = "top" if line.y1 < 0.1 * height else "bottom" if line.y0 > 0.88 * height else None
    if band is None:
        return None
    return band + ":" + re.sub(r"\d+", "#", line.text.lower())


def drop_headers_footers(pages: list[list[Line]], heights: list[float]) -> list[list[Line]]:
    """Remove page numbers and lines repeated in the top/bottom margin of many pages."""
    keys: Counter[str] = Counter()
    for lines, height in zip(pages, heights, strict=True):
        keys.update({k for ln in lines if (k := _margin_key(ln, height))})
    limit = max(3, int(0.4 * len(pages)))
    out = []
    for lines, height in zip(pages, heights, strict=True):
        kept = []
        for ln in lines:
            key = _margin_key(ln, height)
            if key and (keys[key] >= limit or _PAGE_NO.match(ln.text)):
                continue
            kept.append(ln)
        out.append(kept)
    return out


def body_size(pages: list[list[Line]]) -> float:
    weight: Counter[float] = Counter()
    for lines in pages:
        for ln in lines:
            weight[ln.size] += len(ln.text)
    return weight.most_common(1)[0][0] if weight else 10.0
