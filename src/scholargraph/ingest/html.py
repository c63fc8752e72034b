"""HTML loader (``.html``, ``.htm``): readable text, with h1-h6 headings kept as sections.

Boilerplate is removed before reading: scripts, styles, navigation, headers, footers, asides,
forms, hidden elements, and elements whose class/id/role says navigation, menu, sidebar, cookie
banner, breadcrumb, advert, share/social or comments. When the page has a ``<main>`` or
``<article>``, only that is read. Lists become "- item" lines, tables tab-separated rows,
``<pre>`` keeps its layout. Title, authors, year and DOI come from the ``citation_*`` meta tags
(Google Scholar / Highwire), ``og:title``, ``<title>`` or the first ``<h1>``.

libxml2 stops building the tree 256 elements deep and drops everything below (a page of nested
``<div>``s lost all its text). Such a page is read flat instead, from the parser's events (lxml's
parser target interface: no tree, no depth limit): headings still start sections, blocks still
make paragraphs, scripts and styles are still skipped, but no boilerplate is removed; the
document says so in a warning.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import lxml.etree
import lxml.html

from ..errors import LoadError
from ..models import Document, Section
from .identity import doc_id
from .registry import LoaderSpec, LoadOptions
from .sections import classify_heading

NO_TEXT = "no readable text in HTML"
DROP_TAGS = {
    "script",
    "style",
    "noscript",
    "nav",
    "header",
    "footer",
    "aside",
    "form",
    "svg",
    "iframe",
    "template",
    "button",
    "select",
    "input",
    "textarea",
    "object",
    "embed",
    "canvas",
    "dialog",
    "head",
}
BOILERPLATE = (
    "nav",
    "menu",
    "sidebar",
    "footer",
    "header",
    "cookie",
    "banner",
    "breadcrumb",
    "advert",
    "share",
    "social",
    "comment",
    "skip",
    "hidden",
    "sr-only",
    "visually-hidden",
    "popup",
    "modal",
    "newsletter",
)
DROP_ROLES = {"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar", "toolbar", "dialog"}
BLOCK_TAGS = {
    "p",
    "div",
    "section",
    "article",
    "main",
    "ul",
    "ol",
    "li",
    "table",
    "pre",
    "blockquote",
    "dl",
    "dt",
    "dd",
    "figure",
    "figcaption",
    "hr",
    "address",
    "details",
    "summary",
    "center",
    "body",
    "fieldset",
    "tbody",
    "thead",
    "tfoot",
    "tr",
    "td",
    "th",
    "caption",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
}
_HEADING = re.compile(r"^h([1-6])$")
_TOKEN = re.compile(r"[^a-z0-9]+")
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.I)
_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")
_YEAR = re.compile(r"\b(1[5-9]\d\d|2[0-2]\d\d)\b")
TREE_DEPTH_LIMIT = 250  # libxml2 cuts at 256; deeper than this, the page is read flat
FLAT_SKIP = {"script", "style", "noscript", "template", "head", "title", "svg", "textarea", "select", "button"}


# --- reading -------------------------------------------------------------------------------


def decode(data: bytes) -> str:
    """Bytes -> text: BOM, then <meta charset>, then UTF-8, then Windows-1252."""
    for bom, enc in ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
        if data.startswith(bom):
            return data[len(bom) :].decode(enc, errors="replace")
    declared = _CHARSET.search(data[:4096])
    for enc in ([declared.group(1).decode("ascii")] if declared else []) + ["utf-8"]:
        try:
            return data.decode(enc)
        except (UnicodeDecodeError, LookupError):
            continue
    return data.decode("cp1252", errors="replace")


def parse_tree(text: str) -> Any:
    text = re.sub(r"^\s*<\?xml[^>]*\?>", "", text)  # lxml refuses str input with an encoding declaration
    if not text.strip():
        raise ValueError("empty document")
    return lxml.html.document_fromstring(text)


# --- boilerplate ---------------------------------------------------------------------------


def _is_boilerplate(el: Any) -> bool:
    if not isinstance(el.tag, str):
        return True  # comments, processing instructions
    tag = el.tag.lower()
    if tag in DROP_TAGS:
        return True
    attrs = el.attrib
    if "hidden" in attrs or attrs.get("aria-hidden") == "true" or _HIDDEN_STYLE.search(attrs.get("style", "")):
        return True
    if attrs.get("role", "").lower() in DROP_ROLES:
        return True
    tokens = _TOKEN.split(f"{attrs.get('class', '')} {attrs.get('id', '')}".lower())
    return any(tok.startswith(word) for tok in tokens if tok for word in BOILERPLATE)


def strip_boilerplate(root: Any) -> None:
    """Remove boilerplate elements in place; never one that holds the main content."""
    doomed = []
    for el in root.iter():
        if el is root or (isinstance(el.tag, str) and el.tag.lower() in ("body", "main", "article")):
            continue
        if _is_boilerplate(el) and not _holds_main(el):
            doomed.append(el)
    for el in doomed:
        if el.getparent() is not None and not any(a in doomed for a in el.iterancestors()):
            el.drop_tree()  # keeps the tail text


def _holds_main(el: Any) -> bool:
    return (
        isinstance(el.tag, str)
        and el.tag.lower() not in DROP_TAGS
        and next(el.iterdescendants("main", "article", "h1"), None) is not None
    )


def content_root(root: Any) -> Any:
    """<main>, else the largest <article>, else <body>."""
    main = next(root.iter("main"), None)
    if main is not None and _text_len(main) > 0:
        return main
    articles = sorted(root.iter("article"), key=_text_len, reverse=True)
    if articles and _text_len(articles[0]) > 0:
        return articles[0]
    body = root.find("body")
    return body if body is not None else root


def _text_len(el: Any) -> int:
    return len((el.text_content() or "").strip())


# --- text ----------------------------------------------------------------------------------


def _clean(text: str) -> str:
    lines = (_SPACES.sub(" ", ln).strip() for ln in (text or "").split("\n"))
    return "\n".join(ln for ln in lines if ln)


def _inline(el: Any) -> str:
    return el.text_content() or ""


def mark_line_breaks(root: Any) -> None:
    """Source newlines are spaces (outside <pre>); <br> is the only line break."""
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        in_pre = el.tag == "pre" or any(a.tag == "pre" for a in el.iterancestors())
        if el.text and not in_pre:
            el.text = el.text.replace("\n", " ")
        if el.tail and not (in_pre and el.tag != "pre"):
            el.tail = el.tail.replace("\n", " ")
        if el.tag == "br":
            el.tail = "\n" + (el.tail or "")


class _Reader:
    """Walks the content in document order: headings start sections, blocks become paragraphs."""

    def __init__(self) -> None:
        self.blocks: list[tuple[str, int, list[str]]] = [("", 0, [])]

    def para(self, text: str, raw: bool = False) -> None:
        text = text.strip("\n") if raw else _clean(text)
        if text.strip():
            self.blocks[-1][2].append(text)

    def walk(self, el: Any) -> None:
        tag = el.tag.lower() if isinstance(el.tag, str) else ""
        if (m := _HEADING.match(tag)) is not None:
            self.blocks.append((_clean(_inline(el)).replace("\n", " "), int(m.group(1)), []))
        elif tag in ("ul", "ol"):
            self.para("\n".join(self._list_lines(el, 0)), raw=True)
        elif tag == "table":
            self.para(self._table(el), raw=True)
        elif tag == "pre":
            self.para(el.text_content() or "", raw=True)
        else:
            self._container(el)

    def _container(self, el: Any) -> None:
        buf = el.text or ""
        for child in el:
            ctag = child.tag.lower() if isinstance(child.tag, str) else ""
            if ctag in BLOCK_TAGS or ctag in ("ul", "ol"):
                self.para(buf)
                buf = ""
                self.walk(child)
            elif ctag == "br":
                buf += "\n"
            elif ctag:
                buf += _inline(child)
            buf += child.tail or ""
        self.para(buf)

    def _list_lines(self, el: Any, depth: int) -> list[str]:
        lines = []
        for li in el:
            if not isinstance(li.tag, str) or li.tag.lower() != "li":
                continue
            own = li.text or ""
            nested = []
            for child in li:
                if isinstance(child.tag, str) and child.tag.lower() in ("ul", "ol"):
                    nested += self._list_lines(child, depth + 1)
                elif isinstance(child.tag, str):
                    own += _inline(child)
                own += child.tail or ""
            text = _clean(own).replace("\n", " ")
            if text:
                lines.append(f"{'  ' * depth}- {text}")
            lines += nested
        return lines

    @staticmethod
    def _table(el: Any) -> str:
        rows = []
        for tr in el.iter("tr"):
            cells = [
                _clean(_inline(td)).replace("\n", " ")
                for td in tr
                if isinstance(td.tag, str) and td.tag in ("td", "th")
            ]
            if any(cells):
                rows.append("\t".join(cells))
        return "\n".join(rows)


def tree_depth(root: Any) -> int:
    depth = deepest = 0
    for event, _ in lxml.etree.iterwalk(root, events=("start", "end")):
        depth += 1 if event == "start" else -1
        deepest = max(deepest, depth)
    return deepest


class _FlatReader:
    """The page's text from parser events (a parser target), for pages nested too deep for a tree."""

    def __init__(self) -> None:
        self.blocks: list[tuple[str, int, list[str]]] = [("", 0, [])]
        self.buffer: list[str] = []
        self.heading: int | None = None
        self.skip = 0

    def start(self, tag: str, attrib: Any) -> None:
        tag = tag.lower()
        if tag in FLAT_SKIP:
            self.skip += 1
        elif tag == "br":
            self.buffer.append("\n")
        elif (m := _HEADING.match(tag)) is not None:
            self._paragraph()
            self.heading = int(m.group(1))
        elif tag in BLOCK_TAGS:
            self._paragraph()

    def end(self, tag: str) -> None:
        tag = tag.lower()
        if tag in FLAT_SKIP:
            self.skip = max(0, self.skip - 1)
        elif _HEADING.match(tag) is not None and self.heading is not None:
            title = _clean("".join(self.buffer)).replace("\n", " ")
            self.blocks.append((title, self.heading, []))
            self.buffer, self.heading = [], None
        elif tag in BLOCK_TAGS:
            self._paragraph()

    def data(self, data: str) -> None:
        if not self.skip:
            self.buffer.append(data.replace("\n", " "))

    def close(self) -> list[tuple[str, int, list[str]]]:
        self._paragraph()
        return self.blocks

    def _paragraph(self) -> None:
        if self.heading is not None or not self.buffer:
            return
        text = _clean("".join(self.buffer))
        if text:
            self.blocks[-1][2].append(text)
        self.buffer = []


def read_flat(text: str) -> list[tuple[str, int, list[str]]]:
    text = re.sub(r"^\s*<\?xml[^>]*\?>", "", text)
    return lxml.etree.fromstring(text, lxml.etree.HTMLParser(target=_FlatReader(), huge_tree=True))


# --- metadata ------------------------------------------------------------------------------


def _meta(root: Any, *names: str) -> list[str]:
    out = []
    for el in root.iter("meta"):
        key = (el.get("name") or el.get("property") or "").strip().lower()
        if key in names and (el.get("content") or "").strip():
            out.append(_clean(el.get("content")).replace("\n", " "))
    return out


def metadata(root: Any) -> dict[str, Any]:
    title = next(iter(_meta(root, "citation_title", "dc.title")), "")
    if not title:
        node = root.find(".//title")
        title = _clean(node.text_content()).replace("\n", " ") if node is not None else ""
    title = title or next(iter(_meta(root, "og:title")), "")
    if not title:
        h1 = next(root.iter("h1"), None)
        title = _clean(h1.text_content()).replace("\n", " ") if h1 is not None else ""
    authors = _meta(root, "citation_author", "dc.creator")
    if not authors:
        authors = [a.strip() for m in _meta(root, "author") for a in re.split(r";|\band\b", m) if a.strip()]
    dates = _meta(
        root,
        "citation_publication_date",
        "citation_date",
        "citation_online_date",
        "citation_year",
        "dc.date",
        "article:published_time",
    )
    year = next((int(m.group(1)) for d in dates if (m := _YEAR.search(d))), None)
    doi = next(iter(_meta(root, "citation_doi", "dc.identifier", "prism.doi")), None)
    if doi:
        doi = re.sub(r"^(?:doi:\s*|https?://(?:dx\.)?doi\.org/)", "", doi.strip(), flags=re.I)
        doi = doi if doi.startswith("10.") else None
    venue = next(iter(_meta(root, "citation_journal_title", "citation_conference_title", "og:site_name")), None)
    abstract = next(iter(_meta(root, "citation_abstract", "dc.description")), "")
    return {"title": title, "authors": authors, "year": year, "doi": doi, "venue": venue, "abstract": abstract}


# --- document ------------------------------------------------------------------------------


def _sections(blocks: list[tuple[str, int, list[str]]]) -> list[Section]:
    sections = []
    parents: list[tuple[int, str]] = []
    has_headings = len(blocks) > 1
    for heading, level, paras in blocks:
        text = "\n\n".join(paras)
        if not heading:
            if text:
                sections.append(Section("", text, 1, kind="front" if has_headings else "body"))
            continue
        kind = classify_heading(heading)
        while parents and parents[-1][0] >= level:
            parents.pop()
        if kind == "body" and parents and parents[-1][1] in ("abstract", "introduction", "conclusion", "references"):
            kind = parents[-1][1]
        parents.append((level, kind))
        sections.append(Section(heading, text, level, kind=kind))
    return sections


def parse_html(data: bytes, path: Path, options: LoadOptions | None = None) -> Document:
    options = options or LoadOptions()
    page = decode(data)
    try:
        root = parse_tree(page)
    except (ValueError, lxml.etree.ParserError) as exc:
        raise LoadError(str(path), f"{NO_TEXT} ({exc})") from exc
    meta = metadata(root)
    warnings = []
    if (depth := tree_depth(root)) >= TREE_DEPTH_LIMIT:
        blocks = read_flat(page)
        warnings.append(f"elements nested {depth}+ levels deep: read as flat text, without removing boilerplate")
    else:
        strip_boilerplate(root)
        mark_line_breaks(root)
        reader = _Reader()
        reader.walk(content_root(root))
        blocks = reader.blocks
    sections = _sections(blocks)
    kept = [s for s in sections if s.kind != "references" or options.include_references]
    text = "\n\n".join(s.text for s in kept if s.text and s.kind != "references")
    if not text.strip():
        raise LoadError(str(path), NO_TEXT)
    references = [ln.lstrip("- ").strip() for s in sections if s.kind == "references" for ln in s.text.split("\n")]
    doc = Document(
        id="",
        title=meta["title"] or path.stem,
        sections=kept,
        source_path=str(path),
        authors=meta["authors"],
        year=meta["year"],
        venue=meta["venue"],
        doi=meta["doi"],
        abstract=next((s.text for s in sections if s.kind == "abstract"), "") or meta["abstract"],
        metadata={"parser": "lxml (flat)" if warnings else "lxml"},
        references=[r for r in references if r],
        warnings=warnings,
    )
    doc.id, doc.content_md5 = doc_id(doc.doi, text)  # a manifest entry is applied by the loader registry
    return doc


def load(path: Path, options: LoadOptions) -> list[Document]:
    return [parse_html(path.read_bytes(), path, options)]


SPECS = [LoaderSpec("html", (".html", ".htm"), load, "HTML pages and articles (lxml)", one_document=True)]
