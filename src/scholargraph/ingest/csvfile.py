"""CSV/TSV loader: one paper per row (fastbmRAG layout).

Columns (matched ignoring case, spaces, "_" and "-"): ``abstract`` and/or ``main_text`` (also
``main text``, ``body``, ``text``, ``full_text``) carry the text; ``paper_id`` (or ``id``, ``pmid``,
``doi``) the id; ``articletitle``/``title``, ``year``, ``journal``, ``authors`` the bibliography.
An unnamed index column is ignored; every other column goes to ``Document.metadata``.
``main_text`` may be a Python list literal of paragraphs ("['p1', 'p2']") or newline-separated.
"""

from __future__ import annotations

import ast
import csv
import itertools
import math
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from ..digests import DigestMap
from ..errors import LoadError
from ..models import Document, Section
from .identity import doc_id, paper_id
from .jsonfile import parse_authors, parse_year
from .registry import LoaderSpec, LoadOptions
from .sections import clean_ws, join_paragraphs, title_from_text
from .text import open_text

ABSTRACT_COLS = ("abstract",)
MAIN_COLS = ("maintext", "body", "text", "fulltext", "bodytext", "content")
ID_COLS = ("paperid", "id", "pmid", "doi")
TITLE_COLS = ("articletitle", "title", "papertitle")
YEAR_COLS = ("year", "pubyear", "publicationyear")
VENUE_COLS = ("journal", "venue", "journaltitle")
AUTHOR_COLS = ("authors", "author")
FLOAT_COLS = ("weight", "impactfactor")
INDEX_COLS = ("", "unnamed0", "index")
MISSING = {"", "nan", "none", "null", "na", "n/a"}
MAX_LISTED = 10

_NORM = re.compile(r"[\s_\-:.]+")
# fastbmRAG abstracts separate structured parts with "|" ("...endometriosis.|Five patients ...").
_ABSTRACT_PART = re.compile(r"(?<=[.!?)\]])\|(?=\s*\S)")


def _norm(name: str) -> str:
    return _NORM.sub("", name or "").lower()


def _raise_field_limit() -> None:
    limit = sys.maxsize
    while True:
        try:
            csv.field_size_limit(limit)
            return
        except OverflowError:
            limit //= 2


def _delimiter(text: str, suffix: str) -> str:
    """The delimiter with most occurrences on the header line; tab for .tsv on a tie."""
    header = text.split("\n", 1)[0]
    counts = {d: header.count(d) for d in (",", "\t", ";", "|")}
    best = max(counts, key=lambda d: (counts[d], d == ("\t" if suffix == ".tsv" else ",")))
    return best if counts[best] else ("\t" if suffix == ".tsv" else ",")


class _Columns:
    """Maps the roles (abstract, main text, id...) to the header names actually present."""

    def __init__(self, header: list[str]):
        self.header = header
        by_norm: dict[str, str] = {}
        for name in header:
            by_norm.setdefault(_norm(name), name)
        self.by_norm = by_norm

    def find(self, names: tuple[str, ...]) -> str | None:
        return next((self.by_norm[n] for n in names if n in self.by_norm), None)

    def roles(self) -> dict[str, str | None]:
        return {
            "abstract": self.find(ABSTRACT_COLS),
            "main": self.find(MAIN_COLS),
            "id": self.find(ID_COLS),
            "title": self.find(TITLE_COLS),
            "year": self.find(YEAR_COLS),
            "venue": self.find(VENUE_COLS),
            "authors": self.find(AUTHOR_COLS),
            "doi": self.find(("doi",)),
            "pmid": self.find(("pmid",)),
        }

    def extra(self, used: set[str]) -> list[str]:
        """Columns for metadata: not used by a role and not an unnamed index column."""
        return [c for c in self.header if c not in used and _norm(c) not in INDEX_COLS and not c.startswith("Unnamed:")]


def _cell(row: dict[str, str | None], column: str | None) -> str:
    value = (row.get(column) or "").strip() if column else ""
    return "" if value.lower() in MISSING else value


def split_main_text(value: str) -> list[str]:
    """Paragraphs of a main-text cell: a Python list literal, or newline-separated text."""
    value = value.strip()
    if value.startswith("[") and value.endswith("]"):
        try:
            parsed = ast.literal_eval(value)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            parsed = None
        if isinstance(parsed, list | tuple):
            return [clean_ws(str(p)) for p in parsed if p is not None and str(p).strip()]
    return [clean_ws(p) for p in re.split(r"\n+", value) if p.strip()]


def split_abstract(value: str) -> list[str]:
    """Abstract parts: blank-line/newline separated, or fastbmRAG's "|" between sentences."""
    parts = [p for chunk in re.split(r"\n+", value) for p in _ABSTRACT_PART.split(chunk)]
    return [clean_ws(p) for p in parts if p.strip()]


def _float_or_text(value: str) -> float | str:
    try:
        return float(value)
    except ValueError:
        return value


def _metadata(row: dict[str, str | None], columns: list[str]) -> dict[str, object]:
    meta: dict[str, object] = {}
    for column in columns:
        value = _cell(row, column)
        if value:
            meta[column] = _float_or_text(value) if _norm(column) in FLOAT_COLS else value
    return meta


def row_to_document(
    row: dict[str, str | None], roles: dict[str, str | None], extra: list[str], path: Path
) -> Document | None:
    """One Document from a row, or None when the row has no abstract and no main text."""
    abstract = join_paragraphs(split_abstract(_cell(row, roles["abstract"])))
    paragraphs = split_main_text(_cell(row, roles["main"]))
    sections: list[Section] = []
    if abstract:
        sections.append(Section("Abstract", abstract, kind="abstract"))
    if paragraphs:
        sections.append(Section("Main text", join_paragraphs(paragraphs), kind="body"))
    if not sections:
        return None
    text = "\n\n".join(s.text for s in sections)
    given = _cell(row, roles["id"])
    identifier, md5 = doc_id(given or None, text)
    numeric_paper_id = _norm(roles["id"] or "") == "paperid" and given.split(".")[0].isdigit()
    return Document(
        id=identifier,
        title=clean_ws(_cell(row, roles["title"])) or title_from_text(abstract or paragraphs[0]),
        sections=sections,
        source_path=str(path),
        authors=parse_authors(_cell(row, roles["authors"])),
        year=parse_year(_cell(row, roles["year"])),
        venue=clean_ws(_cell(row, roles["venue"])) or None,
        doi=_cell(row, roles["doi"]) or None,
        pmid=paper_id(_cell(row, roles["pmid"]) or (given if numeric_paper_id else None)),
        abstract=abstract,
        metadata=_metadata(row, extra),
        content_md5=md5,
    )


def _rows(path: Path, warnings: list[str]) -> Iterator[list[str]]:
    """The file's non-blank rows, read as they are consumed (the header first)."""
    stream, found = open_text(path)
    warnings += found
    with stream:
        first = stream.readline()
        _raise_field_limit()
        reader = csv.reader(itertools.chain([first], stream), delimiter=_delimiter(first, path.suffix.lower()))
        try:
            for row in reader:
                if any(cell.strip() for cell in row):
                    yield row
        except csv.Error as exc:
            raise LoadError(str(path), f"malformed CSV near line {reader.line_num}: {exc}") from exc
        except UnicodeDecodeError as exc:
            raise LoadError(str(path), f"invalid {stream.encoding.upper()} text near line {reader.line_num}: "
                                       f"{exc.reason}") from exc


def _require_text_columns(path: Path, header: list[str], roles: dict[str, str | None]) -> None:
    if roles["abstract"] or roles["main"]:
        return
    found = ", ".join(repr(h) for h in header if h) or "(none)"
    raise LoadError(
        str(path),
        f"no text column: found columns {found}; need 'abstract' and/or 'main_text' "
        "(also accepted: 'main text', 'text', 'body', 'full_text'), plus optionally 'paper_id'",
    )


def _listed(numbers: list[int]) -> str:
    return ", ".join(str(n) for n in numbers[:MAX_LISTED]) + (", ..." if len(numbers) > MAX_LISTED else "")


def iter_csv(path: Path, options: LoadOptions, warnings: list[str]) -> Iterator[Document]:
    """One Document per row, yielded as the file is read (memory does not grow with the rows);
    warnings about the whole file go to ``warnings`` (the last ones once the file is read)."""
    rows = _rows(path, warnings)
    header = [h.strip() for h in next(rows, None) or []]
    if not header:
        raise LoadError(str(path), "no text content (file is blank)")
    columns = _Columns(header)
    roles = columns.roles()
    _require_text_columns(path, header, roles)
    extra = columns.extra({c for c in roles.values() if c})
    skipped: list[int] = []  # the first rows without text (named in the warning), and how many
    skipped_count = number = 0
    # paper id -> its first data row (duplicate warnings), as 8-byte digests: ~16-32 B per row, where a
    # dict of the ids took ~120 B (1M rows: ~0.1 GB) until the whole file was read
    seen = DigestMap()
    for number, cells in enumerate(rows, start=1):
        doc = row_to_document(dict(zip(header, cells, strict=False)), roles, extra, path)
        if doc is None:
            skipped_count += 1
            if len(skipped) <= MAX_LISTED:
                skipped.append(number)
            continue
        first = seen.setdefault(doc.id, number)
        if first != number:
            doc.warnings.append(f"duplicate paper id {doc.id!r} (data rows {first} and {number})")
        doc.metadata.setdefault("row", number)
        yield doc
    if not len(seen):
        raise LoadError(str(path), f"no row has text in {roles['abstract'] or roles['main']!r} ({number} data rows)")
    if skipped:
        warnings.append(f"skipped {skipped_count} of {number} rows without abstract or main text (data rows {_listed(skipped)})")


def load_csv(path: Path, options: LoadOptions) -> list[Document]:
    """Every row's Document at once (``iter_csv`` streams them); the file's warnings go to the first."""
    warnings: list[str] = []
    docs = list(iter_csv(path, options, warnings))
    docs[0].warnings[:0] = warnings
    return docs


def _cell_text(value: object) -> str:
    """A DataFrame cell as the CSV loader reads it: a list as its Python literal (paragraphs),
    a missing value (None, NaN) as empty."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, list | tuple):
        return repr([str(v) for v in value])
    return str(value)


def records_to_documents(records: Sequence[Mapping[str, object]], source: str) -> list[Document]:
    """Papers from in-memory rows (a DataFrame's records, fastbmRAG's ``insert_paper`` input): the
    columns of a CSV file; a ``meta_info`` dict (fastbmRAG's main.py) is spread into the row."""
    rows: list[dict[str, str | None]] = []
    for record in records:
        flat = {str(k): v for k, v in record.items() if k != "meta_info"}
        meta = record.get("meta_info")
        if isinstance(meta, Mapping):
            flat.update({str(k): v for k, v in meta.items() if str(k) not in flat})
        rows.append({k: _cell_text(v) for k, v in flat.items()})
    header = list(dict.fromkeys(k for row in rows for k in row))
    columns = _Columns(header)
    roles = columns.roles()
    _require_text_columns(Path(source), header, roles)
    extra = columns.extra({c for c in roles.values() if c})
    docs = [doc for row in rows if (doc := row_to_document(row, roles, extra, Path(source))) is not None]
    for doc in docs:
        doc.source_path = source
    return docs


SPECS = [
    LoaderSpec(
        name="csv",
        suffixes=(".csv", ".tsv"),
        load=load_csv,
        stream=iter_csv,
        description="one paper per row: abstract, main_text, paper_id (+ title, year, journal, ...) columns",
    )
]
