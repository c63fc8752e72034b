"""Documents -> chunks.

Two strategies:

* ``structure`` (default, thesis 000 §5.2.3): the paper is split into two parts, the
  introductory one (front matter + abstract + introduction) and the rest (body and conclusion:
  a short conclusion would otherwise pay a whole extraction call of its own; it shares the
  body's last chunk when it fits, and starts a chunk of its own when that chunk is nearly full,
  like any section). Each part is packed into chunks of at most
  ``size`` tokens that break only at sentence ends (a sentence longer than a chunk is the only
  thing ever cut). Consecutive sections share a chunk as long as they fit: a short section, or
  the tail of a long one, never pays for a chunk of its own. A chunk that is nearly full ends
  before the next section's heading rather than in its first sentences; inside a section,
  consecutive chunks overlap by whole sentences up to ``overlap`` tokens.
* ``tokens``: fixed token windows with overlap over each part (LightRAG-style), for
  unstructured text or like-for-like comparisons.

``parts`` = "three" (``chunking.parts``) splits the paper in the thesis's three parts instead of two:
introduction (front matter + abstract + introduction) / body / conclusion, so no chunk mixes the
body with the conclusion (each part gets its own chunks; a short conclusion pays a call of its own).

Headings are part of the chunk text, each on a line of its own before its section's text, so
the model and the reader see which section a passage belongs to. The laid-out text is
:func:`layout`'s: sections joined by blank lines, each headed by its heading; a chunk's text is
exactly ``layout(doc)[0][char_start:char_end]``. ``Chunk.section`` names every section the chunk
touches, in order; the header adds "Section: ..." only for a chunk that starts inside a section
(its heading is then not in the text). Page spans come from the sections' pages and, inside a
section, from its page marks.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from ..models import Chunk, Document, Section
from ..text.sentences import sentence_spans
from .tokenizer import TextTokenizer

SECTION_SEPARATOR = "\n\n"
HEADING_SEPARATOR = "\n\n"  # a heading is a paragraph of its own
FULL_ENOUGH = 0.8  # a chunk this full ends at the last section start rather than inside the section
# Two parts: the introductory one (what ``--scope intro`` indexes, so a later full index reuses its
# chunks) and the rest; body and conclusion share a chunk when they fit.
_PART_OF_KIND = {"front": "intro", "abstract": "intro", "introduction": "intro"}
PARTS = ("two", "three")


@dataclass
class Placed:
    """A section in the laid-out text: its heading line (if any) starts at ``start``, its text at ``text_start``."""

    section: Section
    start: int
    text_start: int
    part: str

    @property
    def end(self) -> int:
        return self.text_start + len(self.section.text)


@dataclass
class _Unit:
    start: int
    end: int
    tokens: int
    placed: int  # index into the placed sections
    section_start: bool  # the first unit of its section (the heading, when there is one)
    heading: bool = False


def layout(doc: Document) -> tuple[str, list[Placed]]:
    """The document's laid-out text (headings on their own line before their section's text,
    sections separated by blank lines) and where each section starts in it. Sections without text
    are left out."""
    placed: list[Placed] = []
    parts: list[str] = []
    cursor = 0
    for section in doc.sections:
        if not section.text:
            continue
        heading = section.heading.strip()
        block = f"{heading}{HEADING_SEPARATOR}{section.text}" if heading else section.text
        text_start = cursor + (len(heading) + len(HEADING_SEPARATOR) if heading else 0)
        placed.append(Placed(section, cursor, text_start, _PART_OF_KIND.get(section.kind, "rest")))
        parts.append(block)
        cursor += len(block) + len(SECTION_SEPARATOR)
    return SECTION_SEPARATOR.join(parts), placed


def chunk_id(document_id: str, start: int, text: str) -> str:
    return hashlib.md5(f"{document_id}\x00{start}\x00{text}".encode()).hexdigest()


def chunk_document(
    doc: Document,
    tokenizer: TextTokenizer,
    size: int = 1200,
    overlap: int = 100,
    strategy: str = "structure",
    include_references: bool = False,
    parts: str = "two",
) -> list[Chunk]:
    full_text, placed = layout(doc)
    if parts == "three":  # introduction / body / conclusion (thesis 000 §5.2.3)
        for p in placed:
            if p.section.kind == "conclusion":
                p.part = "conclusion"
    spans: list[tuple[int, int, int]] = []  # (start, end, tokens)
    for group in _part_groups(placed, include_references):
        if strategy == "tokens":
            spans.extend(_token_windows(full_text, placed, group, tokenizer, size, overlap))
        else:
            units = _units(full_text, placed, group, tokenizer, size)
            spans.extend(_pack(units, size, overlap))
    return [_make_chunk(doc, full_text, placed, i, span) for i, span in enumerate(spans)]


def _part_groups(placed: list[Placed], include_references: bool) -> list[list[int]]:
    """Consecutive sections of the same part; references dropped unless asked for."""
    groups: list[list[int]] = []
    last_part = None
    for i, p in enumerate(placed):
        if not p.section.text.strip() or (p.section.kind == "references" and not include_references):
            last_part = None
            continue
        if groups and p.part == last_part:
            groups[-1].append(i)
        else:
            groups.append([i])
        last_part = p.part
    return groups


def _units(full_text: str, placed: list[Placed], group: list[int], tok: TextTokenizer, size: int) -> list[_Unit]:
    raw: list[tuple[int, int, int, bool, bool]] = []  # start, end, placed index, section start, heading
    for idx in group:
        p = placed[idx]
        if p.text_start > p.start:
            raw.append((p.start, p.text_start - len(HEADING_SEPARATOR), idx, True, True))
        first = p.text_start == p.start
        for s, e in sentence_spans(full_text, p.text_start, p.end):
            raw.append((s, e, idx, first, False))
            first = False
    counts = tok.count_many([full_text[s:e] for s, e, *_ in raw])
    units: list[_Unit] = []
    for (s, e, idx, first, heading), n in zip(raw, counts, strict=True):
        if n <= size:
            units.append(_Unit(s, e, n, idx, first, heading))
            continue
        for j, (ws, we, wn) in enumerate(_split_long(full_text, s, e, tok, size)):
            units.append(_Unit(ws, we, wn, idx, first and j == 0, heading))
    return units


def _split_long(text: str, start: int, end: int, tok: TextTokenizer, size: int) -> list[tuple[int, int, int]]:
    """A sentence longer than a chunk: cut it into token windows (the only cut mid-sentence)."""
    enc = tok.encode(text[start:end])
    out = []
    for i in range(0, enc.count, size):
        window = enc.offsets[i : i + size]
        out.append((start + window[0][0], start + window[-1][1], len(window)))
    return out


def _pack(units: list[_Unit], size: int, overlap: int) -> list[tuple[int, int, int]]:
    """Chunk spans with their token counts (the sum of their units': WordPiece splits at spaces).

    Units are added while they fit. When the next one does not, the chunk ends: at the last
    section start in it if that comes after ``FULL_ENOUGH`` of the budget (the section moves on
    whole, no overlap), else here, and the next chunk repeats the last sentences of this one (up to
    ``overlap`` tokens). A chunk never ends with a heading."""
    spans: list[tuple[int, int, int]] = []
    current: list[_Unit] = []
    for unit in units:
        if current and sum(u.tokens for u in current) + unit.tokens > size:
            keep, carry = _cut(current, size)
            spans.append(_span(keep))
            current = carry if carry else _overlap_tail(keep, overlap, size - unit.tokens)
        current.append(unit)
    if current:
        spans.append(_span(current))
    return spans


def _cut(current: list[_Unit], size: int) -> tuple[list[_Unit], list[_Unit]]:
    """Where a full chunk ends: (units kept in it, units carried whole into the next chunk)."""
    total = sum(u.tokens for u in current)
    before = total
    for i in range(len(current) - 1, 0, -1):
        before -= current[i].tokens
        if current[i].section_start and before >= FULL_ENOUGH * size:
            return current[:i], current[i:]
        if before < FULL_ENOUGH * size:
            break
    end = len(current)
    while end > 1 and current[end - 1].heading:  # a heading goes with the text it heads
        end -= 1
    return current[:end], current[end:]


def _span(units: list[_Unit]) -> tuple[int, int, int]:
    return units[0].start, units[-1].end, sum(u.tokens for u in units)


def _overlap_tail(units: list[_Unit], overlap: int, room: int) -> list[_Unit]:
    tail: list[_Unit] = []
    total = 0
    for unit in reversed(units[1:]):  # never repeat the whole previous chunk
        if total + unit.tokens > min(overlap, room):
            break
        tail.insert(0, unit)
        total += unit.tokens
    while tail and tail[0].heading and len(tail) > 1 and not tail[1].section_start:
        tail.pop(0)
    return tail


def _token_windows(
    full_text: str, placed: list[Placed], group: list[int], tok: TextTokenizer, size: int, overlap: int
) -> list[tuple[int, int, int]]:
    start = placed[group[0]].start
    end = placed[group[-1]].end
    enc = tok.encode(full_text[start:end])
    spans = []
    step = max(1, size - overlap)
    for i in range(0, max(1, enc.count), step):
        window = enc.offsets[i : i + size]
        if not window:
            break
        spans.append((start + window[0][0], start + window[-1][1], len(window)))
        if i + size >= enc.count:
            break
    return spans


def _pages_at(p: Placed, offset: int) -> list[int]:
    """The page of ``offset``; without page marks, the section's whole page span."""
    sec = p.section
    if not sec.page_marks:
        return [pg for pg in (sec.page_start, sec.page_end) if pg is not None]
    page = sec.page_start
    for mark_offset, mark_page in sec.page_marks:
        if mark_offset <= offset - p.text_start:
            page = mark_page
        else:
            break
    return [page] if page is not None else []


def _make_chunk(doc: Document, full_text: str, placed: list[Placed], ordinal: int, span: tuple[int, int, int]) -> Chunk:
    start, end, tokens = span
    inside = [p for p in placed if p.start < end and start < p.end]
    headings = [p.section.heading for p in inside if p.section.heading]
    section = " / ".join(dict.fromkeys(headings)) or None
    text = full_text[start:end]
    pages = _pages_at(inside[0], start) + _pages_at(inside[-1], end - 1) if inside else []
    continues = inside[0].section.heading if inside and start > inside[0].start else ""
    header = f"Paper: {doc.title}" + (f"\nSection: {continues}" if continues else "")
    return Chunk(
        id=chunk_id(doc.id, start, text),
        document_id=doc.id,
        ordinal=ordinal,
        text=text,
        tokens=tokens,
        section=section,
        char_start=start,
        char_end=end,
        page_start=min(pages) if pages else None,
        page_end=max(pages) if pages else None,
        header=header,
    )
