"""Backend-neutral PDF layout model and analysis (thesis 000 §5.2.2).

A backend (``pdf_pypdf``, ``pdf_pymupdf``) turns each page into ``Span`` records: text with font
size, weight and a top-down bounding box. Everything here is a pure function of those records:
lines, running headers/footers, the title (largest horizontal bold font on the first pages), and
text cleaning, headings (numbering patterns, font size/weight, the embedded outline) and
section assembly with page spans. Nothing here opens a file.
"""

from __future__ import annotations

import functools
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field

LIGATURES = {
    "ﬀ": "ff",
    "ﬁ": "fi",
    "ﬂ": "fl",
    "ﬃ": "ffi",
    "ﬄ": "ffl",
    "ﬅ": "st",
    "ﬆ": "st",
    "\u00ad": "",
    "\u00a0": " ",
    "\uf0b7": "•",
    "\uf0a7": "•",
}
_LIG_RE = re.compile("|".join(LIGATURES))
_BOLD_RE = re.compile(r"bold|black|heavy|semibold|demi|medi|-b$|,b$|-bd|tb$|\.b$|^cmbx|^cmb\d", re.I)
_WS = re.compile(r"\s+")


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


# --- text cleaning -------------------------------------------------------------------------


def clean_text(text: str) -> str:
    """Ligatures to letters, soft hyphens removed, no-break spaces to spaces."""
    return _LIG_RE.sub(lambda m: LIGATURES[m.group(0)], text)


@functools.lru_cache(maxsize=4096)
def is_bold_font(name: str) -> bool:
    """Bold from a font name: Bold/Black/Heavy/Semibold/Medium, "-B", ",Bold", TeX "...TB"."""
    base = name.split("+", 1)[-1]  # drop the subset prefix ABCDEF+
    return bool(_BOLD_RE.search(base))


def collapse_letter_spacing(text: str) -> str:
    """'A T T E N T I O N  I S' -> 'ATTENTION IS' when the text is mostly single letters."""
    tokens = text.split()
    singles = sum(1 for t in tokens if len(t) == 1)
    if len(tokens) < 4 or singles < 0.7 * len(tokens):
        return text
    words = re.split(r"\s{2,}", text.strip())
    if len(words) == 1:
        # single spaces everywhere: keep multi-letter tokens as word boundaries
        out, cur = [], ""
        for tok in tokens:
            if len(tok) == 1 and tok.isalnum():
                cur += tok
            else:
                if cur:
                    out.append(cur)
                out.append(tok) if len(tok) > 1 else out.append(tok)
                cur = ""
        if cur:
            out.append(cur)
        return " ".join(out).replace(" :", ":").replace(" ,", ",")
    return " ".join(w.replace(" ", "") for w in words)


def append_line(out: str, part: str, keep_hyphen: bool = False, new_paragraph: bool = False) -> str:
    """Append one wrapped line: "meth-" + "ods" -> "methods" (``keep_hyphen``: "Long-" + "form")."""
    part = part.strip()
    if not part or not out:
        return out or part
    if new_paragraph:
        return f"{out}\n\n{part}"
    if out.endswith("-") and len(out) > 1 and out[-2].isalpha() and part[:1].isalpha():
        word = out.rsplit(None, 1)[-1]
        keep = keep_hyphen or "-" in word[:-1] or not part[:1].islower()
        return out + part if keep else out[:-1] + part
    return f"{out} {part}"


def join_lines(parts: list[str], keep_hyphen: bool = False) -> str:
    out = ""
    for part in parts:
        out = append_line(out, part, keep_hyphen)
    return out


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
    return _WS.sub(" ", collapse_letter_spacing(clean_text(text))).strip()


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
    line.bold_prefix = "" if line.all_bold else _WS.sub(" ", clean_text(prefix)).strip()
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


# --- title ---------------------------------------------------------------------------------

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


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= max(0.6, 0.05 * max(a, b))


def _title_group(lines: list[Line], start: int) -> list[Line]:
    first = lines[start]
    group = [first]
    for line in lines[start + 1 :]:
        prev = group[-1]
        gap = line.y0 - prev.y1
        if (
            not _close(line.size, first.size)
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
    """
    for lines in pages[:max_pages]:
        cands = [ln for ln in lines if _title_candidate(ln) and ln.size >= min_size]
        ids = {id(ln) for ln in cands}
        for size in sorted({ln.size for ln in cands}, reverse=True)[:3]:
            at_size = [i for i, ln in enumerate(lines) if id(ln) in ids and _close(ln.size, size)]
            bold = [i for i in at_size if lines[i].bold]
            group = _title_group(lines, (bold or at_size)[0])
            text = title_text(group)
            words = len(text.split())
            if 2 <= words <= 40 or (words == 1 and len(text) >= 4 and size == max(ln.size for ln in cands)):
                return text, group
    return "", []


def body_size(pages: list[list[Line]]) -> float:
    weight: Counter[float] = Counter()
    for lines in pages:
        for ln in lines:
            weight[ln.size] += len(ln.text)
    return weight.most_common(1)[0][0] if weight else 10.0


def median(values: list[float], default: float = 0.0) -> float:
    return statistics.median(values) if values else default


# --- headings ------------------------------------------------------------------------------

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
        parts = m.group(1).split(".")
        n = ord(parts[0]) - ord("A")
        expected = st.letter < n <= st.letter + 2 if len(parts) == 1 else n == st.letter
        if expected and (st.appendix or m.group(2)):
            st.letter = n
            return text, len(parts)
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
            if near and other.bold and _close(other.size, line.size) and abs(other.x0 - line.x0) < 3 * line.size:
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


def _line_heading(lines: list[Line], i: int, st: _State, early: bool) -> Heading | None:
    line = lines[i]
    text = line.text
    if len(text) > 120 or _NEVER.match(text) or line.size < st.body - 0.6:
        return None
    name = text.strip(" .:")
    if early and (m := _INLINE_ABSTRACT.match(text)) and not line.bold:
        return Heading(i, "Abstract", 1, rest=m.group(2))
    if _strong(line, st) and line.words <= 16 and (num := _numbered(line, st)):
        return Heading(i, num[0], num[1])
    if _KNOWN.match(name) and (_strong(line, st) or name.isupper()):
        st.appendix = st.appendix or name.lower().startswith(("appendi", "reference", "bibliography"))
        return Heading(i, name, 1)
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
        return Heading(i, name, level)
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
        same = nxt.page == line.page and nxt.bold == line.bold and _close(nxt.size, line.size)
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
    st.column = median([ln.x1 - ln.x0 for ln in lines if _close(ln.size, body)], 200.0)
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
    title = _WS.sub(" ", clean_text(item.title)).strip()
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


# --- sections ------------------------------------------------------------------------------


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
        and _close(line.size, last.size)
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
