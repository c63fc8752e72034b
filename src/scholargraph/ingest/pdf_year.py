"""The publication year of a PDF paper, from what the file itself says (a manifest entry, applied
later by the loader registry, overrides it):

1. the arXiv side stamp, "arXiv:2501.10120v1 [cs.IR] 17 Jan 2025" (its date; without one, the
   identifier's YYMM);
2. a venue or copyright line of the first page, "Proceedings of NAACL-HLT 2018", "©2020
   Association for ...", "CHI '23, April 23–28, 2023" (the year such lines name most often, the
   latest on a tie; lines that cite other work are ignored);
3. the document information's creation date (LaTeX writes it when the paper is compiled).
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import date

from .pdf_layout import PdfLayout, build_lines

_STAMP = re.compile(r"arXiv:\s*(\S+?)\s*\[[^\]]{1,20}\]\s*(?:\d{1,2}\s+[A-Za-z]{3,9}\.?\s+((?:19|20)\d\d))?")
_NEW_ID = re.compile(r"^(\d{2})(\d{2})\.\d{4,5}")
_VENUE = re.compile(
    r"\b(?:proceedings|conference|workshop|symposium|journal|published|accepted|received|copyright|association for"
    r"|acm|ieee|springer|elsevier|preprint|volume|vol\.)|©|\(c\)|c©",
    re.I,
)
_SHORT_VENUE = re.compile(r"\b[A-Z]{2,}[A-Za-z]*\s?['’]\d\d\b")  # "CHI '23", "KDD'21"
_CITATION = re.compile(r"et al\.|\(\s*[A-Z][^()]{0,80},\s*(?:19|20)\d\d[a-z]?\s*[;)]")
_YEAR = re.compile(r"(?<![\d.])((?:19|20)\d\d)(?![\d])")
_META = re.compile(r"^(?:D:)?((?:19|20)\d\d)")


def _plausible(year: int) -> bool:
    return 1900 <= year <= date.today().year + 1


def stamp_year(text: str) -> int | None:
    match = _STAMP.search(text)
    if not match:
        return None
    if match.group(2):
        return int(match.group(2))
    ident = _NEW_ID.match(match.group(1))
    return 2000 + int(ident.group(1)) if ident and 1 <= int(ident.group(2)) <= 12 else None


def venue_year(lines: list[str]) -> int | None:
    years: Counter[int] = Counter()
    for line in lines:
        if (_VENUE.search(line) or _SHORT_VENUE.search(line)) and not _CITATION.search(line):
            years.update(y for y in map(int, _YEAR.findall(line)) if _plausible(y))
    if not years:
        return None
    return max(years, key=lambda y: (years[y], y))


def metadata_year(value: str) -> int | None:
    match = _META.match((value or "").strip())
    return int(match.group(1)) if match and _plausible(int(match.group(1))) else None


def detect_year(layout: PdfLayout) -> int | None:
    """The year from the stamp, the first page's venue lines, or the metadata (None when none says)."""
    first = next((p for p in layout.pages if not p.error and p.spans), None)
    lines = [ln.text for ln in build_lines(first.spans, layout.gap_spaces)] if first else []
    for text in lines:
        year = stamp_year(text)
        if year is not None and _plausible(year):
            return year
    return venue_year(lines) or metadata_year(layout.meta_date)
