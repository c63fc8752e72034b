"""Section assembly of the PDF layout analysis: the line stream split at headings into blocks,
and the lines of a block joined into paragraphs (captions moved after the running text) with
page marks."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .pdf_text import append_line, same_size
from .pdf_types import Line

if TYPE_CHECKING:
    from .pdf_headings import Heading


@dataclass
class Block:
    """A heading and the lines under it (before kinds are assigned)."""

    heading: str
    level: int
    entries: list[tuple[Line, str]] = field(default_factory=list)
    pages: list[int] = field(default_factory=list)

    @property
    def page_start(self) -> int | None:
        return min(self.pages) if self.pages else None

    @property
    def page_end(self) -> int | None:
        return max(self.pages) if self.pages else None

    def text(self) -> tuple[str, list[tuple[int, int]]]:
        return paragraphs(self.entries, self.page_start)


def _paragraph_break(prev: Line, line: Line) -> bool:
    if line.page != prev.page or line.y1 < prev.y1 - 2:
        return False  # next page or next column: the paragraph usually continues
    size = max(line.size, prev.size)
    if line.y1 - prev.y1 > 1.75 * size or abs(line.size - prev.size) > 1.0:
        return True
    if prev.text.rstrip()[-1:] not in ".!?:":
        return False
    indented = 0.5 * size < line.x0 - prev.x0 < 4 * size
    short = prev.x1 < line.x1 - 2 * size
    return indented or short


_CAPTION = re.compile(r"^(?:fig\.|figure|table|tab\.)\s*[A-Z]?\d+[.:]", re.I)


def _continues_caption(last: Line, line: Line) -> bool:
    step = line.y1 - last.y1
    return (
        line.page == last.page
        and same_size(line.size, last.size)
        and 0 < step < 1.8 * line.size
        and (last.x0 - 2 * line.size < line.x0 < last.x1)
    )


def _split_captions(entries: list[tuple[Line, str]]) -> tuple[list[tuple[Line, str]], list[list[tuple[Line, str]]]]:
    """Figure/table captions out of the running text (they interrupt sentences across columns)."""
    flow: list[tuple[Line, str]] = []
    captions: list[list[tuple[Line, str]]] = []
    in_caption = False
    for line, text in entries:
        if _CAPTION.match(text):
            captions.append([(line, text)])
            in_caption = True
        elif in_caption and _continues_caption(captions[-1][-1][0], line):
            captions[-1].append((line, text))
        else:
            in_caption = False
            flow.append((line, text))
    return flow, captions


def paragraphs(entries: list[tuple[Line, str]], first_page: int | None = None) -> tuple[str, list[tuple[int, int]]]:
    """Lines -> (text with a blank line between paragraphs, de-hyphenated; page marks).

    Captions go after the running text. A page mark ``(offset, page)`` is recorded wherever the
    text moves to another page.
    """
    flow, captions = _split_captions(entries)
    out = ""
    marks: list[tuple[int, int]] = []
    page = first_page
    for group in [flow, *captions]:
        prev: Line | None = None
        for line, text in group:
            if not text.strip():
                continue
            brk = (prev is not None and _paragraph_break(prev, line)) or (prev is None and bool(out))
            before = len(out)
            out = append_line(out, text, new_paragraph=brk)
            if page is not None and line.page != page:
                marks.append((max(before, len(out) - len(text.strip())), line.page))
            page, prev = line.page, line
    return out, marks


def assemble(lines: list[Line], headings: list[Heading], skip: set[int]) -> list[Block]:
    """Split the line stream at headings; text before the first heading is the front matter."""
    at = {h.index: h for h in headings}
    blocks = [Block("", 1)]
    i = 0
    while i < len(lines):
        line = lines[i]
        h = at.get(i)
        if h is not None:
            block = Block(h.text, h.level, pages=[line.page])
            if h.rest:
                block.entries.append((line, h.rest))
            blocks.append(block)
            i += 1 + h.extra
            continue
        if i not in skip and not line.rotated:
            blocks[-1].entries.append((line, line.text))
            blocks[-1].pages.append(line.page)
        i += 1
    return blocks


def flatten(pages: list[list[Line]]) -> list[Line]:
    return [ln for lines in pages for ln in lines]
