"""Title detection of the PDF layout analysis (thesis 000 §5.2.2): the largest horizontal font
on the first pages, bold preferred, consecutive lines in the same style joined."""

from __future__ import annotations

import re

from .pdf_text import collapse_letter_spacing, join_lines, same_size
from .pdf_types import Line

_NOT_TITLE = re.compile(
    r"^(?:arxiv:|preprint\b|under review|proceedings of|published as|accepted (?:at|to|for)|doi:|https?://|www\.|©"
    r"|copyright|vol\.|volume \d|(?:research |original |review )?article$|letter$|review$|open access$)",
    re.I,
)
_BAD_META = re.compile(
    r"^(?:microsoft \w+ - |untitled|title$|document\d*$|slide \d)|\.(?:docx?|pdf|tex|dvi|rtf|ps)$", re.I
)


def looks_like_title(text: str, min_words: int = 3) -> bool:
    """A plausible paper title: not a file name, not "Microsoft Word - x.doc", enough words."""
    text = (text or "").strip()
    if not text or _BAD_META.search(text) or "/" in text.replace(" / ", "") or "\\" in text:
        return False
    letters = sum(c.isalpha() for c in text)
    return len(text.split()) >= min_words and letters >= 0.5 * len(text)


def _title_candidate(line: Line) -> bool:
    letters = sum(c.isalpha() for c in line.text)
    return not line.rotated and letters >= 2 and not _NOT_TITLE.match(line.text)


def _title_group(lines: list[Line], start: int) -> list[Line]:
    first = lines[start]
    group = [first]
    for line in lines[start + 1 :]:
        prev = group[-1]
        gap = line.y0 - prev.y1
        if (
            not same_size(line.size, first.size)
            or line.bold != first.bold
            or gap > 1.5 * first.size
            or gap < -0.5 * first.size
        ):
            break
        group.append(line)
    return group


def title_text(lines: list[Line]) -> str:
    return collapse_letter_spacing(join_lines([ln.text for ln in lines], keep_hyphen=True)).strip(" .")


def detect_title(pages: list[list[Line]], max_pages: int = 2, min_size: float = 0.0) -> tuple[str, list[Line]]:
    """Largest horizontal font on the first page (then the second), bold preferred; multi-line joined.

    ``min_size``: a title is printed larger than the body text; smaller candidates are ignored.
    One or two words (or a lower-case name) in the largest font, a logo such as "PaperSearch" above
    "PaSa: An LLM Agent for ..." or a journal name such as "future internet", give way to a title of
    three or more words in the next sizes when one is printed clearly larger than the body text;
    alone, they are the title.
    """
    for lines in pages[:max_pages]:
        found = _page_title(lines, min_size)
        if found is not None:
            return found
    return "", []


def _page_title(lines: list[Line], min_size: float) -> tuple[str, list[Line]] | None:
    """The title of one page: the text in its three largest sizes, a logo word giving way (see
    :func:`detect_title`); None when the page has no candidate."""
    cands = [ln for ln in lines if _title_candidate(ln) and ln.size >= min_size]
    if not cands:
        return None
    ids = {id(ln) for ln in cands}
    largest = max(ln.size for ln in cands)
    logo: tuple[str, list[Line]] | None = None
    for size in sorted({ln.size for ln in cands}, reverse=True)[:3]:
        group = _group_at_size(lines, ids, size)
        text = title_text(group)
        words = len(text.split())
        if logo is None and size == largest and len(text) >= 4 and (words <= 2 or text[:1].islower()):
            logo = (text, group)  # a logo or journal name ("PaperSearch", "future internet")?
            continue
        if 2 <= words <= 40 and (logo is None or (words >= 3 and _stands_out(group, largest, min_size))):
            return text, group
    return logo


def _group_at_size(lines: list[Line], ids: set[int], size: float) -> list[Line]:
    """The lines of the first candidate printed at ``size`` (a bold one first), with the lines it continues on."""
    at_size = [i for i, ln in enumerate(lines) if id(ln) in ids and same_size(ln.size, size)]
    bold = [i for i in at_size if lines[i].bold]
    return _title_group(lines, (bold or at_size)[0])


def _stands_out(group: list[Line], largest: float, min_size: float) -> bool:
    """A title below a logo word: bold, or at least half the logo's size, and well above body text."""
    size = group[0].size
    return size >= min_size + 2.0 and (group[0].bold or size >= 0.5 * largest)
