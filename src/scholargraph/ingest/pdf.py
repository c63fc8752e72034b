"""PDF loader: one Document per paper, with title, authors, abstract, sections and page spans.

Backends: pypdf (default, BSD) or PyMuPDF (optional AGPL extra, ~10x faster), chosen by
``backend="auto"|"pypdf"|"pymupdf"`` (auto = PyMuPDF when importable). Both produce the same
layout records (``pdf_layout``), so title detection (thesis §5.2.2), headings and sections behave
the same. Headings come from the embedded outline when it can be located in the text, else from
numbering patterns and font size/weight. A page that fails is skipped with a warning.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import LoadError
from ..models import Document, Section
from . import pdf_layout as L
from . import pdf_pymupdf, pdf_pypdf
from .identity import doc_id
from .pdf_year import detect_year
from .registry import LoaderSpec, LoadOptions
from .sections import classify_heading

BACKENDS = ("auto", "pypdf", "pymupdf")
NO_TEXT = "no text layer (scanned/image-only PDF): OCR is needed, e.g. `ocrmypdf in.pdf out.pdf`"
DAMAGED = "damaged or truncated PDF"
INTRO_WINDOW = (1500, 5000)  # last resort: abstract / introduction lengths when no headings exist


def resolve_backend(backend: str = "auto") -> str:
    if backend not in BACKENDS:
        raise ValueError(f"unknown PDF backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if backend == "auto":
        return pdf_pymupdf.NAME if pdf_pymupdf.available() else pdf_pypdf.NAME
    return backend


def extract_layout(path: Path, backend: str = "auto") -> L.PdfLayout:
    """Spans per page from the chosen backend; auto falls back to pypdf if PyMuPDF cannot open it."""
    name = resolve_backend(backend)
    if name == pdf_pypdf.NAME:
        return pdf_pypdf.extract(path)
    try:
        return pdf_pymupdf.extract(path)
    except LoadError as exc:
        if backend != "auto" or not exc.reason.startswith(DAMAGED):
            raise
        return pdf_pypdf.extract(path)


# --- analysis ------------------------------------------------------------------------------


def _page_lines(layout: L.PdfLayout, path: Path, truncated: bool) -> tuple[list[list[L.Line]], list[str]]:
    warnings = list(layout.warnings)
    pages, heights = [], []
    for page in layout.pages:
        if page.error:
            warnings.append(f"page {page.number}: could not extract text ({page.error}); skipped")
            continue
        pages.append(L.build_lines(page.spans, layout.gap_spaces))
        heights.append(page.height)
    if not any(any(c.isalnum() for ln in lines for c in ln.text) for lines in pages):
        if layout.pages and all(p.error for p in layout.pages):
            raise LoadError(str(path), f"{DAMAGED}: no page could be read ({layout.pages[0].error})")
        if truncated or layout.warnings:
            raise LoadError(str(path), f"{DAMAGED}: no text could be recovered")
        raise LoadError(str(path), NO_TEXT)
    return L.drop_headers_footers(pages, heights), warnings


def _kinds(blocks: list[L.Block]) -> list[str]:
    """Section kinds from headings; subsections inherit abstract/introduction/conclusion/references."""
    kinds: list[str] = []
    parents: list[tuple[int, str]] = []
    for i, block in enumerate(blocks):
        if i == 0 and not block.heading:
            kinds.append("front")
            continue
        kind = classify_heading(block.heading)
        while parents and parents[-1][0] >= block.level:
            parents.pop()
        if kind == "body" and parents and parents[-1][1] in ("introduction", "conclusion", "abstract", "references"):
            kind = parents[-1][1] if block.level > parents[-1][0] else kind
        parents.append((block.level, kind))
        kinds.append(kind)
    return kinds


def _introduction_fallback(blocks: list[L.Block], kinds: list[str]) -> None:
    """No "Introduction" heading: the first top-level section after the abstract is the introduction;
    with no section after the abstract at all, a fixed-length window is cut out of it."""
    if "introduction" in kinds or "abstract" not in kinds:
        return
    at = kinds.index("abstract")
    after = [i for i in range(at + 1, len(blocks)) if kinds[i] == "body"]
    if after:
        top = min(blocks[i].level for i in after)
        first = next(i for i in after if blocks[i].level == top)
        kinds[first] = "introduction"
        for i in range(first + 1, len(blocks)):
            if blocks[i].level <= top or kinds[i] != "body":
                break
            kinds[i] = "introduction"
        return
    if at == len(blocks) - 1 and len(blocks[at].text()[0]) > sum(INTRO_WINDOW):
        parts = _split_block(blocks[at], INTRO_WINDOW[0], "Introduction")
        intro = _split_block(parts[1], INTRO_WINDOW[1], "")
        blocks[at:] = [parts[0], *intro]
        kinds[at:] = ["abstract", "introduction", "body"][: len(blocks) - at]


def _split_block(block: L.Block, min_chars: int, heading: str) -> list[L.Block]:
    """Cut a block at the first sentence end after ``min_chars`` characters."""
    total = 0
    for i, (_, text) in enumerate(block.entries):
        total += len(text) + 1
        if total >= min_chars and text.rstrip().endswith((".", "?", "!")) and i + 1 < len(block.entries):
            first = block.entries[: i + 1]
            head = L.Block(block.heading, block.level, first, block.pages[:1] + [ln.page for ln, _ in first])
            rest = block.entries[i + 1 :]
            return [head, L.Block(heading, block.level, rest, [ln.page for ln, _ in rest])]
    return [block]


_REF_BRACKET = re.compile(r"^\s*\[\d{1,4}\]")
_REF_NUMBER = re.compile(r"^\s*(\d{1,4})\.\s")


def _marked_starts(entries: list[tuple[L.Line, str]]) -> list[int]:
    """Lines that open a reference by its marker: "[n]", else "n." numbering in sequence (a year
    opening a line, "2020. Title", is no marker)."""
    bracket = [i for i, (_, t) in enumerate(entries) if _REF_BRACKET.match(t)]
    if len(bracket) >= max(2, 0.15 * len(entries)):
        return bracket
    numbered: list[int] = []
    last = 0
    for i, (_, text) in enumerate(entries):
        if (m := _REF_NUMBER.match(text)) and (int(m.group(1)) == last + 1 or (not numbered and int(m.group(1)) < 10)):
            numbered.append(i)
            last = int(m.group(1))
    return numbered if len(numbered) >= max(2, 0.15 * len(entries)) else []


def _column(entries: list[tuple[L.Line, str]], line: L.Line) -> tuple[float, float]:
    """Left and right edge of the column ``line`` is in (lines of its page starting near it)."""
    same = [ln for ln, _ in entries if ln.page == line.page and abs(ln.x0 - line.x0) < 40]
    return min(ln.x0 for ln in same), max(ln.x1 for ln in same)


def _indent_starts(entries: list[tuple[L.Line, str]]) -> set[int]:
    """Lines at the left edge of their column: the first lines of hanging-indent references."""
    return {i for i, (line, _) in enumerate(entries) if i == 0 or line.x0 <= _column(entries, line)[0] + 1.0}


def _flush_left_starts(entries: list[tuple[L.Line, str]]) -> set[int]:
    """No indent to go by: a reference starts after a line that ends one (a short line ending with a
    full stop; a reference's last line rarely fills the column)."""
    starts = {0}
    for i in range(1, len(entries)):
        before, text = entries[i - 1]
        left, right = _column(entries, before)
        if text.rstrip().endswith(".") and before.x1 < right - 0.15 * (right - left):
            starts.add(i)
    return starts


def split_references(entries: list[tuple[L.Line, str]]) -> list[str]:
    """Reference entries: by "[n]"/"n." markers, else by hanging indent, else (every line at the
    left edge) by the short line that ends each reference."""
    if not entries:
        return []
    marked = _marked_starts(entries)
    if marked:
        starts = set(marked) | {0}
    else:
        starts = _indent_starts(entries)
        if len(entries) >= 6 and len(starts) > 0.6 * len(entries):  # one "reference" per line: no indent
            starts = _flush_left_starts(entries)
    refs: list[str] = []
    cur: list[str] = []
    for i, (_, text) in enumerate(entries):
        if i in starts and cur:
            refs.append(L.join_lines(cur))
            cur = []
        cur.append(text)
    if cur:
        refs.append(L.join_lines(cur))
    return [r for r in refs if len(r) > 3]


_ORG = re.compile(
    r"universit|institut|college|school|department|dept\.|laborator|\blab\b|\binc\b|corporation|centre|center"
    r"|research|academy|hospital|faculty|\bltd\b|gmbh|foundation|google|microsoft|allen ai|@|https?:|\d{3}",
    re.I,
)
_NAME_SPLIT = re.compile(r"\s*(?:\band\b|[^\w\s.'’\-]|\d+|\s{3,})\s*")
_NAME = re.compile(r"^[A-ZÀ-Ý][\w'’.\-]*(?:\s+(?:[A-ZÀ-Ý][\w'’.\-]*|van|von|de|der|den|da|di|du|le|la|del|bin))+$")


def detect_authors(front: list[L.Line], body: float) -> list[str]:
    """Best effort: person-name-like pieces of the largest-font lines between title and first heading."""
    cands: list[tuple[float, list[str]]] = []
    for line in front[:40]:
        if line.size < body - 0.3 or _ORG.search(line.text):
            continue
        names = [p.strip(" .") if p.count(".") > 1 else p.strip() for p in _NAME_SPLIT.split(line.text)]
        names = [n for n in names if n and _NAME.match(n) and 2 <= len(n.split()) <= 5]
        if names:
            cands.append((line.size, names))
    if not cands:
        return []
    top = max(size for size, _ in cands)
    out: list[str] = []
    for size, names in cands:
        if size >= top - 0.5:
            out += [n for n in names if n not in out]
    return out[:60]


def _meta_authors(text: str) -> list[str]:
    names = [n.strip() for n in re.split(r";|,|\band\b", text or "") if n.strip()]
    return names if names and all(_NAME.match(n) for n in names) else []


# --- document ------------------------------------------------------------------------------


def _analyse(layout: L.PdfLayout, path: Path, truncated: bool) -> dict[str, Any]:
    pages, warnings = _page_lines(layout, path, truncated)
    body = L.body_size(pages)
    title, title_lines = L.detect_title(pages, min_size=body + 1.0)
    title_source = "layout"
    weak = not title_lines or (not title_lines[0].bold and title_lines[0].size <= body + 0.5)
    if (weak or not L.looks_like_title(title, 2)) and L.looks_like_title(layout.meta_title):
        title, title_source = " ".join(L.clean_text(layout.meta_title).split()), "metadata"
    lines = L.flatten(pages)
    ids = {id(ln) for ln in title_lines}
    skip = {i for i, ln in enumerate(lines) if id(ln) in ids}
    headings, source = None, "layout"
    if len(layout.outline) >= 2:
        headings, source = L.outline_headings(lines, layout.outline), "outline"
    if headings is None:
        headings, source = L.detect_headings(lines, body, skip), "layout"
    blocks = L.assemble(lines, headings, skip)
    kinds = _kinds(blocks)
    _introduction_fallback(blocks, kinds)
    after_title = [ln for ln, _ in blocks[0].entries if not title_lines or ln.page == title_lines[0].page]
    authors = _meta_authors(layout.meta_author) or detect_authors(after_title, body)
    return {
        "title": title or path.stem,
        "title_source": title_source if title else "file name",
        "authors": authors,
        "blocks": blocks,
        "kinds": kinds,
        "warnings": warnings,
        "headings": source,
    }


def _sections(blocks: list[L.Block], kinds: list[str]) -> list[Section]:
    out = []
    for block, kind in zip(blocks, kinds, strict=True):
        text, marks = block.text()
        if kind == "front" and not text:
            continue
        out.append(Section(block.heading, text, block.level, block.page_start, block.page_end, kind, marks))
    return out


def _truncated(path: Path) -> bool:
    with path.open("rb") as fh:
        fh.seek(max(0, path.stat().st_size - 2048))
        return b"%%EOF" not in fh.read()


def load_pdf(path: Path, options: LoadOptions | None = None, backend: str = "auto") -> Document:
    """Parse one PDF into a Document (``backend``: auto | pypdf | pymupdf)."""
    path = Path(path)
    options = options or LoadOptions()
    layout = extract_layout(path, backend)
    truncated = _truncated(path)
    info = _analyse(layout, path, truncated)
    sections = _sections(info["blocks"], info["kinds"])
    references = [
        r
        for b, k in zip(info["blocks"], info["kinds"], strict=True)
        if k == "references"
        for r in split_references(b.entries)
    ]
    indexed = [s for s in sections if s.kind != "references"]
    warnings = info["warnings"]
    read = sum(1 for p in layout.pages if p.spans)
    if truncated:
        warnings.append(
            f"file appears truncated (no %%EOF marker); text recovered from {read} of {len(layout.pages)} pages"
        )
    doc = Document(
        id="",
        title=info["title"],
        sections=sections if options.include_references else indexed,
        source_path=str(path),
        authors=info["authors"],
        year=detect_year(layout),
        abstract=next((s.text for s in sections if s.kind == "abstract"), ""),
        metadata={
            "pages": len(layout.pages),
            "parser": layout.backend,
            "headings": info["headings"],
            "title_source": info["title_source"],
        },
        warnings=warnings,
        references=references,
    )
    # a manifest entry (DOI, id, authors, year, venue) is applied by the loader registry
    doc.id, doc.content_md5 = doc_id(None, "\n\n".join(s.text for s in indexed if s.text))
    return doc


def parse_pdf(path: Path, backend: str = "auto", include_references: bool = True) -> Document:
    """For ``scholargraph parse``: the full parse, references section included."""
    return load_pdf(Path(path), LoadOptions(include_references=include_references), backend)


def load(path: Path, options: LoadOptions) -> list[Document]:
    return [load_pdf(path, options, getattr(options, "pdf_backend", "auto") or "auto")]


SPECS = [LoaderSpec("pdf", (".pdf",), load, "PDF papers (pypdf; PyMuPDF when installed)")]
