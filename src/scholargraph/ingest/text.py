"""Plain-text and Markdown loader (.txt, .text, .md, .markdown).

Markdown ``#`` headings become Sections; plain text is one section, split on numbered headings
("1 Introduction", "2.1 Methods") when the file clearly has them. ``decode_bytes`` is shared with
the CSV and JSON loaders.
"""

from __future__ import annotations

import codecs
import io
import re
import unicodedata
from pathlib import Path
from typing import TextIO

from ..errors import LoadError
from ..models import Document, Section
from .identity import doc_id
from .registry import LoaderSpec, LoadOptions
from .sections import classify_heading, make_section

LATIN1_WARNING = "decoded as latin-1: not valid UTF-8"
SNIFF_BYTES = 8192
MAX_CONTROL_RATIO = 0.30
MAX_TITLE_CHARS = 200

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_TEXT_CONTROLS = set("\t\n\r\f\v")


# --- decoding --------------------------------------------------------------------------------


def decode_bytes(data: bytes, path: str) -> tuple[str, list[str]]:
    """Decode file bytes to text; returns (text, warnings). Raises LoadError for binary data."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return _check_text(data.decode(encoding), path), []
            except UnicodeDecodeError as exc:
                raise LoadError(path, f"invalid {encoding.upper()} text after byte-order mark: {exc.reason}") from exc
    if b"\x00" in data[:SNIFF_BYTES]:
        raise LoadError(path, "binary file, not text")
    try:
        return _check_text(data.decode("utf-8"), path), []
    except UnicodeDecodeError:
        pass
    if _mostly_non_text(data[:SNIFF_BYTES]):
        raise LoadError(path, "binary file, not text")
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return _check_text(text, path), [LATIN1_WARNING]


def _mostly_non_text(sample: bytes) -> bool:
    """Not UTF-8 and full of control or high bytes: real latin-1 text has few of either."""
    odd = sum(1 for b in sample if (b < 0x20 and b not in b"\t\n\r\f\v") or b >= 0x80)
    return bool(sample) and odd / len(sample) > MAX_CONTROL_RATIO


def _check_text(text: str, path: str) -> str:
    sample = text[:SNIFF_BYTES]
    if sample:
        controls = sum(1 for ch in sample if ch not in _TEXT_CONTROLS and unicodedata.category(ch) == "Cc")
        if "\x00" in sample or controls / len(sample) > MAX_CONTROL_RATIO:
            raise LoadError(path, "binary file, not text")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_text(path: Path) -> tuple[str, list[str]]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LoadError(str(path), f"cannot read file: {exc.strerror or exc}") from exc
    return decode_bytes(data, str(path))


def open_text(path: Path) -> tuple[TextIO, list[str]]:
    """The file as a text stream read as it is consumed (lines end in ``\n``), decoded as
    ``read_text`` would decode it; the file is scanned once (in blocks) to choose the encoding, so
    memory does not grow with its size. Raises LoadError for binary data."""
    try:
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
        encoding, warnings = _stream_encoding(path, head)
        stream = io.TextIOWrapper(path.open("rb"), encoding=encoding, newline=None)
    except OSError as exc:
        raise LoadError(str(path), f"cannot read file: {exc.strerror or exc}") from exc
    sample = stream.read(SNIFF_BYTES) if head else ""
    try:
        _check_text(sample, str(path))
        stream.seek(0)
    except BaseException:
        stream.close()
        raise
    return stream, warnings


def _stream_encoding(path: Path, head: bytes) -> tuple[str, list[str]]:
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            return encoding, []
    if b"\x00" in head:
        raise LoadError(str(path), "binary file, not text")
    if _decodes(path, "utf-8"):
        return "utf-8", []
    if _mostly_non_text(head):
        raise LoadError(str(path), "binary file, not text")
    return ("cp1252" if _decodes(path, "cp1252") else "latin-1"), [LATIN1_WARNING]


def _decodes(path: Path, encoding: str, block: int = 1 << 20) -> bool:
    decoder = codecs.getincrementaldecoder(encoding)()
    with path.open("rb") as handle:
        try:
            while data := handle.read(block):
                decoder.decode(data)
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            return False
    return True


# --- markdown --------------------------------------------------------------------------------

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
_YAML_TITLE = re.compile(r"^title:[ \t]*(.+?)[ \t]*$", re.M | re.I)


def _heading_at(lines: list[str], i: int, in_fence: bool) -> tuple[int, str] | None:
    """(level, heading) when lines[i] starts a heading; setext headings use lines[i + 1]."""
    if in_fence:
        return None
    match = _ATX.match(lines[i])
    if match:
        return len(match.group(1)), (match.group(2) or "").strip()
    line = lines[i].strip()
    single_line_para = i == 0 or not lines[i - 1].strip()
    if line and single_line_para and i + 1 < len(lines) and not line.startswith(("-", "*", "|", ">")):
        underline = _SETEXT.match(lines[i + 1])
        if underline:
            return (1 if underline.group(1)[0] == "=" else 2), line
    return None


def _markdown_blocks(text: str) -> list[tuple[int, str | None, list[str]]]:
    """[(level, heading or None for the front part, body lines)] in file order."""
    lines = text.split("\n")
    blocks: list[tuple[int, str | None, list[str]]] = [(0, None, [])]
    in_fence, i = False, 0
    while i < len(lines):
        heading = _heading_at(lines, i, in_fence)
        if heading is not None:
            blocks.append((heading[0], _strip_markup(heading[1]), []))
            i += 1 if _ATX.match(lines[i]) else 2
            continue
        if _FENCE.match(lines[i]):
            in_fence = not in_fence
        blocks[-1][2].append(lines[i])
        i += 1
    return blocks


def _strip_markup(heading: str) -> str:
    heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # [text](link) -> text
    return heading.strip().strip("*_`").strip()


def _markdown_sections(text: str) -> tuple[list[Section], str | None]:
    """Sections and the first H1 heading (the title), if any."""
    title: str | None = None
    sections: list[Section] = []
    for level, heading, lines in _markdown_blocks(text):
        body = _tidy("\n".join(lines))
        if heading is None:
            if body:
                sections.append(Section(heading="", text=body, level=1, kind="front"))
            continue
        is_title = level == 1 and title is None and heading != ""
        if is_title:
            title = heading
        kind = "front" if is_title and classify_heading(heading) == "body" else None
        sections.append(make_section(heading, body, level=level, kind=kind))
    return sections, title


def _tidy(text: str) -> str:
    """Strip trailing spaces and collapse runs of blank lines to one."""
    lines = [line.rstrip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


# --- plain text ------------------------------------------------------------------------------

_NUMBERED = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,3})\.?[ \t]+([A-Z][^\n]{1,100})$")
_NAMED = re.compile(
    r"^(abstract|references|bibliography|acknowledge?ments?|appendix)$",
    re.I,
)


def _numbered_heading(line: str) -> tuple[str, int, int] | None:
    """(heading, level, top-level number) for a line that looks like a numbered heading."""
    line = line.strip()
    match = _NUMBERED.match(line)
    if not match or line.endswith((".", ",", ";", ":")) or len(match.group(2).split()) > 12:
        return None
    parts = match.group(1).split(".")
    return line, len(parts), int(parts[0])


def _plain_headings(lines: list[str]) -> dict[int, tuple[str, int]]:
    """Line index -> (heading, level), only when the numbering runs 1, 2, ... (two or more)."""
    found: dict[int, tuple[str, int]] = {}
    expected = 1
    for i, line in enumerate(lines):
        standalone = (i == 0 or not lines[i - 1].strip()) or (i + 1 < len(lines) and not lines[i + 1].strip())
        if not standalone:
            continue
        numbered = _numbered_heading(line)
        if numbered and numbered[1] == 1 and numbered[2] == expected:
            found[i], expected = (numbered[0], 1), expected + 1
        elif numbered and numbered[1] > 1 and numbered[2] == expected - 1:
            found[i] = (numbered[0], numbered[1])
        elif _NAMED.match(line.strip()):
            found[i] = (line.strip(), 1)
    if expected <= 2:  # fewer than two top-level numbered headings: not a sectioned paper
        return {}
    return found


def _plain_sections(text: str) -> list[Section]:
    lines = text.split("\n")
    headings = _plain_headings(lines)
    if not headings:
        return [Section(heading="", text=_tidy(text), level=1, kind="body")]
    sections: list[Section] = []
    starts = sorted(headings)
    front = _tidy("\n".join(lines[: starts[0]]))
    if front:
        sections.append(Section(heading="", text=front, level=1, kind="front"))
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        heading, level = headings[start]
        sections.append(make_section(heading, _tidy("\n".join(lines[start + 1 : end])), level=level))
    return sections


# --- loader ----------------------------------------------------------------------------------


def _first_line_title(text: str) -> str | None:
    for line in text.split("\n"):
        line = line.strip().lstrip("#").strip()
        if line and not (len(line) < 40 and classify_heading(line) != "body"):  # not "Abstract"
            return line if len(line) < MAX_TITLE_CHARS else None
    return None


def split_references(sections: list[Section]) -> tuple[list[Section], list[str]]:
    """Move "References" sections out: (other sections, one entry per non-empty line)."""
    kept: list[Section] = []
    references: list[str] = []
    for section in sections:
        if section.kind != "references":
            kept.append(section)
            continue
        for line in section.text.split("\n"):
            entry = re.sub(r"^\s*(?:[-*+]|\d+\.)\s+", "", line).strip()
            if entry:
                references.append(entry)
    return kept, references


def parse_text(text: str, path: Path, markdown: bool, include_references: bool = False) -> Document:
    """Build one Document from decoded text (markdown or plain)."""
    metadata: dict[str, str] = {}
    title: str | None = None
    if markdown:
        front_matter = _FRONT_MATTER.match(text)
        if front_matter:
            yaml_title = _YAML_TITLE.search(front_matter.group(1))
            if yaml_title:
                title = metadata["front_matter_title"] = yaml_title.group(1).strip().strip("\"'")
            text = text[front_matter.end() :]
        sections, h1 = _markdown_sections(text)
        title = title or h1
    else:
        sections = _plain_sections(text)
    references: list[str] = []
    if not include_references:
        sections, references = split_references(sections)
    doc = Document(id="", title="", sections=sections, source_path=str(path), metadata=metadata, references=references)
    if not doc.full_text.strip():
        raise LoadError(str(path), "no text content")
    doc.id, doc.content_md5 = doc_id(None, doc.full_text)
    doc.title = title or _first_line_title(text) or path.stem
    doc.abstract = next((s.text for s in sections if s.kind == "abstract" and s.text), "")
    return doc


def load_text(path: Path, options: LoadOptions) -> list[Document]:
    text, warnings = read_text(path)
    if not text.strip():
        raise LoadError(str(path), "no text content (file is blank)")
    markdown = path.suffix.lower() in {".md", ".markdown"}
    doc = parse_text(text, path, markdown, options.include_references)
    doc.warnings.extend(warnings)
    return [doc]


SPECS = [
    LoaderSpec(
        name="text",
        suffixes=(".txt", ".text", ".md", ".markdown"),
        load=load_text,
        description="plain text and Markdown (# headings become sections)",
        one_document=True,
    )
]
