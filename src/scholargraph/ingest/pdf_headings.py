"""Heading detection of the PDF layout analysis: numbering patterns (1., 2.1, IV., A.), known
section names, font size and weight, run-in bold prefixes, and the embedded outline."""

from __future__ import annotations

import re
import statistics
from collections import Counter
from dataclasses import dataclass, field

from .pdf_text import clean_text, collapse_letter_spacing, join_lines, same_size, squash_ws
from .pdf_types import Line, OutlineItem


def median(values: list[float], default: float = 0.0) -> float:
    return statistics.median(values) if values else default


_NUM = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,3})\.?\s+(\S.*)$")
_ROMAN = re.compile(r"^([IVX]{1,6})\.\s+(\S.*)$")
_LETTER = re.compile(r"^([A-H](?:\.\d{1,2}){0,2})(\.?)\s+(\S.*)$")
_INLINE_ABSTRACT = re.compile(r"^(abstract)\s*[—–\-.:]\s*(\S.*)$", re.I)
_KNOWN = re.compile(
    r"^(?:abstract|introduction|related work|background|conclusions?|discussion|references|bibliography"
    r"|acknowledge?ments?|appendix|appendices|limitations|ethics statement|ethical considerations"
    r"|broader impacts?|future work|methods?|results|materials and methods|keywords|index terms)$",
    re.I,
)
_NEVER = re.compile(
    r"^(?:fig\.|figure|table|tab\.|algorithm|listing|eq\.|equation|example|lemma|theorem|proof)\b", re.I
)
_ROMANS = ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII", "XIII", "XIV", "XV"]


@dataclass
class Heading:
    index: int  # position in the flat line list
    text: str
    level: int
    rest: str = ""  # run-in heading: the paragraph text after it on the same line
    extra: int = 0  # continuation lines consumed (multi-line heading)


@dataclass
class _State:
    body: float
    major: int = 0
    roman: int = 0
    letter: int = -1
    appendix: bool = False
    top_size: float = 0.0
    column: float = 0.0  # typical width of a body line
    starts: list[float] = field(default_factory=list)  # x where body lines usually begin (column edges)
    anchored: bool = False  # a numbered or well-known heading has been seen


def _heading_rest_ok(rest: str) -> bool:
    letters = sum(c.isalpha() for c in rest)
    return bool(rest) and (rest[0].isupper() or rest[0] in "[“\"'") and letters >= 0.5 * len(rest.replace(" ", ""))


def _numbered(line: Line, st: _State) -> tuple[str, int] | None:
    text = line.text
    if (m := _NUM.match(text)) and _heading_rest_ok(m.group(2)):
        parts = [int(p) for p in m.group(1).split(".")]
        ok = st.major < parts[0] <= st.major + 2 if len(parts) == 1 else parts[0] in (st.major, st.major + 1)
        if ok and not st.appendix:
            st.major = parts[0]
            return text, len(parts)
    if (m := _ROMAN.match(text)) and _heading_rest_ok(m.group(2)) and m.group(1) in _ROMANS:
        n = _ROMANS.index(m.group(1)) + 1
        if st.roman < n <= st.roman + 2:
            st.roman = n
            return text, 1
    if (m := _LETTER.match(text)) and _heading_rest_ok(m.group(3)):
        letters = m.group(1).split(".")
        n = ord(letters[0]) - ord("A")
        expected = st.letter < n <= st.letter + 2 if len(letters) == 1 else n == st.letter
        if expected and (st.appendix or m.group(2)):
            st.letter = n
            return text, len(letters)
    return None


def _strong(line: Line, st: _State) -> bool:
    return line.bold or line.size >= st.body + 1.0


def _bold_run(lines: list[Line], i: int) -> bool:
    """Line i belongs to a multi-line bold paragraph (a bold sentence, a caption), not a heading."""
    line = lines[i]
    for j in (i - 1, i + 1):
        if 0 <= j < len(lines):
            other = lines[j]
            near = other.page == line.page and abs(other.y0 - line.y0) < 1.8 * line.size
            if near and other.bold and same_size(other.size, line.size) and abs(other.x0 - line.x0) < 3 * line.size:
                if not (_NUM.match(other.text) or _KNOWN.match(other.text.strip(" .:"))):
                    return True
    return False


def _para_start(lines: list[Line], i: int) -> bool:
    if i == 0:
        return True
    prev, line = lines[i - 1], lines[i]
    return (
        prev.text.rstrip()[-1:] in ".!?:)" or prev.page != line.page or line.y0 - prev.y1 > 0.6 * line.size or prev.bold
    )


_MEASURE = re.compile(r"[=<>±%]|\d")


def _may_be_unnumbered_heading(lines: list[Line], i: int, st: _State) -> bool:
    """An unnumbered bold line (or bold run-in) can be a heading only where a heading can stand: past
    the front matter (authors and affiliations precede the first numbered or well-known heading), at
    a column's left edge, and not inside a figure or table."""
    line = lines[i]
    if not st.anchored and line.page <= 1:
        return False
    if st.starts and not any(-2.0 <= line.x0 - x <= 2.5 * line.size for x in st.starts):
        return False
    words = line.text.split()
    if sum(1 for w in words if _MEASURE.search(w)) >= max(1, len(words) / 2) or "=" in line.text:
        return False
    return not _figure_text(lines, i, st)


def _figure_text(lines: list[Line], i: int, st: _State) -> bool:
    """A figure's labels or a table's cells: pieces in a row, or a label with empty space (an image) below."""
    return _spread_out(lines[i]) or _in_a_row(lines, i, st) or _alone_above_space(lines, i)


def _spread_out(line: Line) -> bool:
    """Pieces far apart on one baseline: figure panel labels or table cells, not a heading."""
    pieces = [s for s in line.spans if s.text.strip()]
    return any(b.x0 - a.x1 > 2.0 * max(a.size, b.size) for a, b in zip(pieces, pieces[1:], strict=False))


def _in_a_row(lines: list[Line], i: int, st: _State) -> bool:
    """Another piece of text on the same baseline within one column's width: a table row or a row of
    figure labels (the other column of a two-column page is a column's width or more away)."""
    line = lines[i]
    for j in range(max(0, i - 6), min(len(lines), i + 7)):
        other = lines[j]
        if j == i or other.page != line.page or other.rotated:
            continue
        overlap = min(line.y1, other.y1) - max(line.y0, other.y0)
        if overlap > 0.5 * min(line.y1 - line.y0, other.y1 - other.y0) and abs(other.x0 - line.x0) < 0.9 * st.column:
            return True
    return False


def _alone_above_space(lines: list[Line], i: int) -> bool:
    """The next line in the same column is far below (an image follows), or there is none on the page."""
    line = lines[i]
    for nxt in lines[i + 1 :]:
        if nxt.page != line.page or nxt.y1 < line.y1:  # next page or next column: the text goes on there
            return False
        if nxt.x1 < line.x0 or nxt.x0 > line.x1:  # beside it, not under it
            continue
        return nxt.y0 - line.y1 > 3.0 * line.size
    return False


def _line_heading(lines: list[Line], i: int, st: _State, early: bool) -> Heading | None:
    line = lines[i]
    if len(line.text) > 120 or _NEVER.match(line.text) or line.size < st.body - 0.6:
        return None
    found = _anchored_heading(lines, i, st, early)
    if found is not None:
        st.anchored = True
        return found
    if not _may_be_unnumbered_heading(lines, i, st):
        return None
    found = _bold_line_heading(lines, i, st)
    return found if found is not None else _bold_prefix_heading(lines, i)


def _anchored_heading(lines: list[Line], i: int, st: _State, early: bool) -> Heading | None:
    """An inline abstract, a numbered heading or a known section name: each anchors the outline."""
    line = lines[i]
    text = line.text
    name = text.strip(" .:")
    if early and (m := _INLINE_ABSTRACT.match(text)) and not line.bold:
        return Heading(i, "Abstract", 1, rest=m.group(2))
    if _strong(line, st) and line.words <= 16 and (num := _numbered(line, st)):
        return Heading(i, num[0], num[1])
    if _KNOWN.match(name) and (_strong(line, st) or name.isupper()) and not _figure_text(lines, i, st):
        st.appendix = st.appendix or name.lower().startswith(("appendi", "reference", "bibliography"))
        return Heading(i, name, 1)
    return None


def _bold_line_heading(lines: list[Line], i: int, st: _State) -> Heading | None:
    """A short line all in bold, capitalised, not ending mid-sentence, not one of a bold run."""
    line = lines[i]
    text = line.text
    short = line.x1 - line.x0 < 0.8 * st.column
    if (
        line.all_bold
        and short
        and line.words <= 10
        and text[0].isupper()
        and text[-1] not in "-,;"
        and not _bold_run(lines, i)
    ):
        level = 1 if st.top_size and line.size >= st.top_size - 0.3 else 2
        return Heading(i, text.strip(" .:"), level)
    return None


def _bold_prefix_heading(lines: list[Line], i: int) -> Heading | None:
    """A run-in heading: a paragraph opening with a few bold words ("Training. We ...")."""
    line = lines[i]
    text = line.text
    prefix = line.bold_prefix
    if prefix and 1 <= len(prefix.split()) <= 8 and prefix[0].isupper() and _para_start(lines, i):
        rest = text[len(prefix) :].strip() if text.startswith(prefix) else text.replace(prefix, "", 1).strip()
        if rest[:1] in (".", ":") and prefix[-1].isalnum():
            prefix, rest = prefix + rest[0], rest[1:].strip()
        if prefix[-1] in ".:" or (rest[:1].isupper() and prefix[-1].isalnum()):
            return Heading(i, prefix.strip(" .:"), 3, rest=rest)
    return None


def _continuation(lines: list[Line], h: Heading) -> int:
    """Multi-line headings: following lines in the same style, aligned with the heading text."""
    line, extra = lines[h.index], 0
    while h.index + extra + 1 < len(lines) and extra < 2:
        nxt = lines[h.index + extra + 1]
        prev = lines[h.index + extra]
        same = nxt.page == line.page and nxt.bold == line.bold and same_size(nxt.size, line.size)
        if not same or nxt.y0 - prev.y1 > 0.8 * line.size or nxt.x0 < line.x0 - 1 or nxt.words > 8:
            break
        if (
            _NUM.match(nxt.text)
            or _LETTER.match(nxt.text)
            or _KNOWN.match(nxt.text.strip(" .:"))
            or line.text.endswith(".")
        ):
            break
        extra += 1
    return extra


def detect_headings(lines: list[Line], body: float, skip: set[int]) -> list[Heading]:
    """Headings from numbering patterns, known section names, font size and weight."""
    st = _State(body=body)
    st.top_size = _top_heading_size(lines, body)
    st.column = median([ln.x1 - ln.x0 for ln in lines if same_size(ln.size, body)], 200.0)
    st.starts = _column_starts(lines, body)
    out: list[Heading] = []
    i = 0
    while i < len(lines):
        h = None if i in skip or lines[i].rotated else _line_heading(lines, i, st, early=lines[i].page <= 2)
        if h is None:
            i += 1
            continue
        if not h.rest and h.level <= 2:
            h.extra = _continuation(lines, h)
            if h.extra:
                h.text = join_lines([h.text] + [ln.text for ln in lines[i + 1 : i + 1 + h.extra]], keep_hyphen=True)
        h.text = collapse_letter_spacing(h.text)
        out.append(h)
        i += 1 + h.extra
    return out


def _column_starts(lines: list[Line], body: float) -> list[float]:
    """Left edges where body-text lines usually begin (one per column and page layout)."""
    starts = Counter(round(ln.x0) for ln in lines if same_size(ln.size, body) and not ln.rotated)
    total = sum(starts.values())
    return [float(x) for x, n in starts.items() if n >= max(5, 0.03 * total)]


def _top_heading_size(lines: list[Line], body: float) -> float:
    sizes = [ln.size for ln in lines if ln.bold and (m := _NUM.match(ln.text)) and "." not in m.group(1)]
    return median(sizes, 0.0)


def _norm_key(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", clean_text(text).lower())


def outline_headings(lines: list[Line], outline: list[OutlineItem]) -> list[Heading] | None:
    """Headings from the embedded outline, located on their pages; None if most cannot be found."""
    found: list[Heading] = []
    pos = 0
    for item in outline:
        key = _norm_key(item.title)
        if not key:
            continue
        hit = _find_outline_line(lines, pos, item, key)
        if hit is not None:
            found.append(hit)
            pos = hit.index + 1 + hit.extra
    usable = [it for it in outline if _norm_key(it.title)]
    return found if usable and len(found) >= 0.5 * len(usable) else None


def _find_outline_line(lines: list[Line], pos: int, item: OutlineItem, key: str) -> Heading | None:
    title = squash_ws(item.title)
    for i in range(pos, len(lines)):
        line = lines[i]
        if item.page and line.page < item.page:
            continue
        if item.page and line.page > item.page + 1:
            return None
        one = _norm_key(line.text)
        two = one + (_norm_key(lines[i + 1].text) if i + 1 < len(lines) else "")
        if one == key:
            return Heading(i, title, item.level)
        if one and key.startswith(one) and two == key:
            return Heading(i, title, item.level, extra=1)
        if len(key) >= 6 and one.startswith(key):
            return Heading(i, title, item.level, rest=_after_prefix(line.text, key))
    return None


def _after_prefix(text: str, key: str) -> str:
    """The part of ``text`` after the characters that spell ``key``."""
    n = 0
    for j, ch in enumerate(clean_text(text)):
        if n >= len(key):
            return text[j:].strip(" .:")
        if ch.lower().isalnum():
            n += 1
    return ""
