"""Documents -> chunks.

Two strategies:

* ``structure`` (default, thesis 000 §5.2.3): the paper is split into parts (front matter +
  abstract + introduction / body / conclusion); each part is packed into chunks of at most
  ``size`` tokens that break only at sentence ends (a sentence longer than a chunk is the only
  thing ever cut), preferring section starts; consecutive chunks of a part overlap by whole
  sentences up to ``overlap`` tokens.
* ``tokens``: fixed token windows with overlap over each part (LightRAG-style), for
  unstructured text or like-for-like comparisons.

Character spans index ``Document.full_text`` (sections joined by blank lines), so a chunk's
text is exactly ``full_text[char_start:char_end]``. Page spans come from the sections' pages
and, inside a section, from its page marks.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from ..models import Chunk, Document, Section
from ..text.sentences import sentence_spans
from .tokenizer import TextTokenizer

SECTION_SEPARATOR = "\n\n"
_PART_OF_KIND = {"front": "intro", "abstract": "intro", "introduction": "intro", "conclusion": "conclusion"}


@dataclass
class _Placed:
    section: Section
    start: int  # offset of the section text in full_text
    part: str


@dataclass
class _Unit:
    start: int
    end: int
    tokens: int
    placed: int  # index into the placed sections
    section_start: bool


def layout(doc: Document) -> tuple[str, list[_Placed]]:
    """The document's full text and where each section starts in it."""
    placed: list[_Placed] = []
    cursor = 0
    parts: list[str] = []
    for section in doc.sections:
        placed.append(_Placed(section, cursor, _PART_OF_KIND.get(section.kind, section.kind)))
        parts.append(section.text)
        cursor += len(section.text) + len(SECTION_SEPARATOR)
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
) -> list[Chunk]:
    full_text, placed = layout(doc)
    spans: list[tuple[int, int, int]] = []  # (start, end, tokens)
    for group in _part_groups(placed, include_references):
        if strategy == "tokens":
            spans.extend(_token_windows(full_text, placed, group, tokenizer, size, overlap))
        else:
            units = _units(full_text, placed, group, tokenizer, size)
            spans.extend(_pack(units, size, overlap))
    return [_make_chunk(doc, full_text, placed, i, span) for i, span in enumerate(spans)]


def _part_groups(placed: list[_Placed], include_references: bool) -> list[list[int]]:
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


def _units(full_text: str, placed: list[_Placed], group: list[int], tok: TextTokenizer, size: int) -> list[_Unit]:
    raw: list[tuple[int, int, int, bool]] = []
    for idx in group:
        p = placed[idx]
        first = True
        for s, e in sentence_spans(full_text, p.start, p.start + len(p.section.text)):
            raw.append((s, e, idx, first))
            first = False
    counts = tok.count_many([full_text[s:e] for s, e, _, _ in raw])
    units: list[_Unit] = []
    for (s, e, idx, first), n in zip(raw, counts, strict=True):
        if n <= size:
            units.append(_Unit(s, e, n, idx, first))
            continue
        for j, (ws, we, wn) in enumerate(_split_long(full_text, s, e, tok, size)):
            units.append(_Unit(ws, we, wn, idx, first and j == 0))
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
    """Chunk spans with their token counts (the sum of their sentences': WordPiece splits at spaces)."""
    spans: list[tuple[int, int, int]] = []
    current: list[_Unit] = []
    tokens = 0
    for unit in units:
        new_section = unit.section_start and tokens >= size // 2
        if current and (tokens + unit.tokens > size or new_section):
            spans.append((current[0].start, current[-1].end, tokens))
            current = [] if new_section else _overlap_tail(current, overlap, size - unit.tokens)
            tokens = sum(u.tokens for u in current)
        current.append(unit)
        tokens += unit.tokens
    if current:
        spans.append((current[0].start, current[-1].end, tokens))
    return spans


def _overlap_tail(units: list[_Unit], overlap: int, room: int) -> list[_Unit]:
    tail: list[_Unit] = []
    total = 0
    for unit in reversed(units[1:]):  # never repeat the whole previous chunk
        if total + unit.tokens > min(overlap, room):
            break
        tail.insert(0, unit)
        total += unit.tokens
    return tail


def _token_windows(
    full_text: str, placed: list[_Placed], group: list[int], tok: TextTokenizer, size: int, overlap: int
) -> list[tuple[int, int, int]]:
    start = placed[group[0]].start
    last = placed[group[-1]]
    end = last.start + len(last.section.text)
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


def _pages_at(p: _Placed, offset: int) -> list[int]:
    """The page of ``offset``; without page marks, the section's whole page span."""
    sec = p.section
    if not sec.page_marks:
        return [pg for pg in (sec.page_start, sec.page_end) if pg is not None]
    page = sec.page_start
    for mark_offset, mark_page in sec.page_marks:
        if mark_offset <= offset - p.start:
            page = mark_page
        else:
            break
    return [page] if page is not None else []


def _make_chunk(doc: Document, full_text: str, placed: list[_Placed], ordinal: int, span: tuple[int, int, int]) -> Chunk:
    start, end, tokens = span
    inside = [p for p in placed if p.start < end and start < p.start + len(p.section.text)]
    headings = [p.section.heading for p in inside if p.section.heading]
    section = " / ".join(dict.fromkeys(headings)) or None
    text = full_text[start:end]
    pages = _pages_at(inside[0], start) + _pages_at(inside[-1], end - 1) if inside else []
    header = f"Paper: {doc.title}" + (f"\nSection: {section}" if section else "")
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
