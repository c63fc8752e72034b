"""JSON and JSON Lines loader (.json, .jsonl).

Accepted shapes, each object becoming one Document:
  * a list of paper objects ``{title, text | abstract | content | body | sections ..., id, authors, ...}``;
  * a single paper object, e.g. ASKG ``{iri, title, authors, sections: [{subtitle, paragraphs:
    [{sentences: [{text}]}]}]}``, S2ORC ``{paper_id, title, pdf_parse: {body_text: [...]}}``,
    QASPER ``{title, abstract, full_text}``;
  * an object mapping ids to paper objects (PubMedQA, QASPER) or titles to texts (HotpotQA corpus);
  * JSON Lines / concatenated JSON values (also in a ``.json`` file, e.g. SciERC).
Keys that are not understood go to ``Document.metadata``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from ..errors import LoadError, NotPapersError
from ..models import Document, Section
from .identity import doc_id
from .registry import LoaderSpec, LoadOptions
from .sections import clean_ws, join_paragraphs, make_section, title_from_text
from .text import open_text, read_text, split_references

TEXT_KEYS = (
    "text",
    "content",
    "body",
    "main_text",
    "full_text",
    "document",
    "passage",
    "paragraphs",
    "sentences",
)  # sentences last
SECTION_KEYS = ("sections", "full_text", "body_text", "pdf_parse")
TITLE_KEYS = ("title", "article_title", "paper_title", "name")
ID_KEYS = ("id", "paper_id", "doc_id", "doc_key", "_id", "uid", "pmid", "doi")
CONTAINER_KEYS = ("papers", "documents", "docs", "records", "articles", "items", "data", "corpus")
EXPECTED = "text, abstract, content, body, main_text, full_text or sections"
MAX_LISTED = 10
MIN_TEXT_WORDS = 25  # a {title: text} map whose texts are all shorter is a lookup table, not papers

_KEY_NORM = re.compile(r"[\s_\-]+")


def _norm(key: str) -> str:
    return _KEY_NORM.sub("", str(key)).lower()


class _Record:
    """Case- and separator-insensitive access to a paper object; remembers which keys were used."""

    def __init__(self, raw: dict[str, Any]):
        self.raw = raw
        self.keys = {_norm(k): k for k in raw}
        self.used: set[str] = set()

    def get(self, *names: str) -> Any:
        for name in names:
            key = self.keys.get(_norm(name))
            if key is not None and self.raw[key] not in (None, "", [], {}):
                self.used.add(key)
                return self.raw[key]
        return None

    def rest(self) -> dict[str, Any]:
        return {k: v for k, v in self.raw.items() if k not in self.used and v is not None}


# --- parsing ---------------------------------------------------------------------------------


def parse_json_values(text: str, path: str) -> list[Any]:
    """All JSON values in ``text``: one for a JSON file, one per line for JSON Lines."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    pos, end = 0, len(text)
    while True:
        while pos < end and text[pos] in " \t\r\n\ufeff":
            pos += 1
        if pos >= end:
            return values
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise LoadError(path, _json_error(exc, text)) from exc
        except RecursionError as exc:
            raise LoadError(path, "invalid JSON: nested too deeply to read") from exc
        values.append(value)


def _json_error(exc: json.JSONDecodeError, text: str) -> str:
    at = "" if exc.msg.endswith(" at") else " at"  # "Unterminated string starting at"
    cut = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
    hint = " (the file looks truncated)" if cut else ""
    return f"invalid JSON: {exc.msg}{at} line {exc.lineno} column {exc.colno}{hint}"


def _records(values: list[Any], path: str) -> list[tuple[str | None, Any]]:
    """(fallback id, paper object) pairs for the top-level JSON values."""
    if len(values) > 1:  # JSON Lines
        pairs: list[tuple[str | None, Any]] = []
        for value in values:
            if isinstance(value, list):
                pairs.extend((None, v) for v in value)
            else:
                pairs.append((None, value))
        return pairs
    top = values[0] if values else None
    if isinstance(top, list):
        return [(None, v) for v in top]
    if not isinstance(top, dict):
        raise NotPapersError(
            path, f"not papers: JSON holds {type(top).__name__ if values else 'nothing'}; expected an object or a list of objects"
        )
    return _records_in_object(top)


def _records_in_object(top: dict[str, Any]) -> list[tuple[str | None, Any]]:
    record = _Record(top)
    if record.get(*TEXT_KEYS, *SECTION_KEYS, *TITLE_KEYS, *ID_KEYS, "abstract", "contexts") is not None:
        return [(None, top)]
    container = record.get(*CONTAINER_KEYS)
    if isinstance(container, list):
        return [(None, v) for v in container]
    values = list(top.values())
    if values and all(isinstance(v, dict) for v in values):
        return [(str(k), v) for k, v in top.items()]  # {paper id: paper}
    if values and all(isinstance(v, str) for v in values) and max(len(v.split()) for v in values) < MIN_TEXT_WORDS:
        raise NotPapersError("", f"a map of {len(values)} short strings (e.g. file name -> title), not papers: "
                                 f"expected paper objects with one of the fields {EXPECTED}, or title -> text")
    if values and all(isinstance(v, str | list) for v in values):
        return [(None, {"title": str(k), "sentences" if isinstance(v, list) else "text": v}) for k, v in top.items()]
    return [(None, top)]


# --- text from the various shapes ------------------------------------------------------------

_DETOK = ((re.compile(r" ([.,;:!?%)\]}])"), r"\1"), (re.compile(r"([(\[{]) "), r"\1"))


def _sentences_text(value: Any) -> str:
    """Sentences (strings, token lists or ``{text}`` objects) joined by spaces."""
    if isinstance(value, str):
        return clean_ws(value)
    parts = []
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, list):
            sentence = " ".join(str(t) for t in item)
            for pattern, repl in _DETOK:
                sentence = pattern.sub(repl, sentence)
            parts.append(sentence)
        elif isinstance(item, dict):
            parts.append(str(item.get("text") or ""))
        elif isinstance(item, str):
            parts.append(item)
    return clean_ws(" ".join(parts))


def _as_text(value: Any) -> str:
    """Text of a field: a string, paragraphs (list), ``{text}`` or ``{sentences}`` objects."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, dict):
        if "sentences" in value:
            return _sentences_text(value["sentences"])
        return _as_text(value.get("text") or value.get("content") or "")
    if isinstance(value, list):
        if value and all(isinstance(v, list) for v in value):  # token lists
            return _sentences_text(value)
        return join_paragraphs(_as_text(v) for v in value)
    return ""


def _labelled(contexts: Any, labels: Any) -> str:
    """PubMedQA-style abstract parts with their labels: "BACKGROUND: ..."."""
    if isinstance(contexts, list) and isinstance(labels, list) and len(labels) == len(contexts):
        return join_paragraphs(
            f"{str(lab).strip().title()}: {_as_text(c)}" if lab else _as_text(c)
            for c, lab in zip(contexts, labels, strict=True)
        )
    return _as_text(contexts)


def _heading_and_level(name: Any, level: Any) -> tuple[str, int]:
    parts = [p.strip() for p in str(name or "").split(":::")]  # QASPER nests as "A ::: B"
    depth = level if isinstance(level, int) and 1 <= level <= 6 else len(parts)
    return parts[-1], min(depth, 6)


def _section_list(items: list[Any], level: int = 1) -> list[Section]:
    """Sections from ``[{subtitle|heading|title|section_name, paragraphs|text, subsections}]``."""
    sections: list[Section] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        rec = _Record(item)
        heading, depth = _heading_and_level(
            rec.get("subtitle", "heading", "title", "section_name", "name", "section"), rec.get("level")
        )
        value = rec.get("paragraphs", "text", "content", "body", "sentences")
        section = make_section(heading, _as_text(value), level=max(depth, level))
        section.sentences = _given_sentences(value, section.text)
        sections.append(section)
        children = rec.get("subsections", "sections", "children")
        if isinstance(children, list):
            sections.extend(_section_list(children, level + 1))
    return sections


def _sentence_objects(value: Any) -> list[tuple[str, str]]:
    """(text, IRI) of the sentence objects of a DDM field -- ``[{sentences: [{iri, text}]}]`` or
    ``[{iri, text}]`` --, [] when the field is not made of sentence objects."""
    items = value if isinstance(value, list) else []
    if items and all(isinstance(p, dict) and isinstance(p.get("sentences"), list) for p in items):
        return [s for p in items for s in _sentence_objects(p["sentences"])]
    if not items or not all(isinstance(s, dict) and isinstance(s.get("text"), str) for s in items):
        return []
    return [(clean_ws(s["text"]), str(s.get("iri") or s.get("id") or "")) for s in items if clean_ws(s["text"])]


def _given_sentences(value: Any, text: str) -> list[tuple[int, int, str]]:
    """The input's own sentence segmentation of a section as (start, end, IRI) offsets into its
    ``text``; [] when it has none or a sentence cannot be found in order (the text is then split)."""
    out: list[tuple[int, int, str]] = []
    cursor = 0
    for sentence, iri in _sentence_objects(value):
        at = text.find(sentence, cursor)
        if at < 0:
            return []
        out.append((at, at + len(sentence), iri))
        cursor = at + len(sentence)
    return out


def _body_text_sections(paragraphs: list[Any]) -> list[Section]:
    """S2ORC ``body_text``: consecutive paragraphs of one section become one Section."""
    groups: list[tuple[str, list[str]]] = []
    for para in paragraphs:
        if not isinstance(para, dict) or not str(para.get("text") or "").strip():
            continue
        heading = str(para.get("section") or "")
        if not groups or groups[-1][0] != heading:
            groups.append((heading, []))
        groups[-1][1].append(str(para["text"]))
    return [make_section(h, join_paragraphs(ps)) for h, ps in groups]


def _structured_sections(rec: _Record) -> list[Section]:
    """Sections from a sectioned field; [] (and the field left unused) when there is none."""
    value = rec.get(*SECTION_KEYS)
    if isinstance(value, dict) and isinstance(value.get("body_text"), list):  # S2ORC pdf_parse
        return _body_text_sections(value["body_text"])
    if isinstance(value, dict) and isinstance(value.get("section_name"), list):  # columnar QASPER
        paras = value.get("paragraphs") or []
        items = [{"section_name": n, "paragraphs": p} for n, p in zip(value["section_name"], paras, strict=False)]
        return _section_list(items)
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        if "section" in value[0] and "text" in value[0] and "paragraphs" not in value[0]:
            return _body_text_sections(value)
        return _section_list(value)
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):  # bare paragraphs
        return [make_section("", join_paragraphs(value))]
    rec.used.difference_update(k for k, v in rec.raw.items() if v is value)  # not sectioned after all
    return []


# --- metadata --------------------------------------------------------------------------------


def parse_authors(value: Any) -> list[str]:
    """Authors from a list of names/objects or a "A; B" / "A, B and C" string."""
    if isinstance(value, list):
        return [name for name in (_author_name(v) for v in value) if name]
    if not isinstance(value, str) or not value.strip():
        return []
    if ";" in value:  # "Smith, John; Doe, Jane"
        return [_last_first(p) for p in value.split(";") if p.strip()]
    parts = re.split(r"\s*,\s*|\s+and\s+", value)
    if len(parts) == 2 and all(len(p.split()) == 1 for p in parts):  # "Smith, John": one author
        return [_last_first(value)]
    return [clean_ws(p) for p in parts if p.strip()]


def _last_first(name: str) -> str:
    """ "Smith, John" -> "John Smith"; other names unchanged."""
    parts = [p.strip() for p in name.split(",")]
    return clean_ws(f"{parts[1]} {parts[0]}") if len(parts) == 2 and all(parts) else clean_ws(name)


def _author_name(value: Any) -> str:
    if isinstance(value, str):
        return clean_ws(value)
    if not isinstance(value, dict):
        return ""
    if value.get("name") or value.get("full_name"):
        return clean_ws(str(value.get("name") or value.get("full_name")))
    middle = value.get("middle") or []
    parts = [value.get("first") or value.get("given") or value.get("given_names") or value.get("forename")]
    parts += middle if isinstance(middle, list) else [middle]
    parts.append(value.get("last") or value.get("family") or value.get("surname"))
    return clean_ws(" ".join(str(p) for p in parts if p))


def parse_year(value: Any) -> int | None:
    """A four-digit year from an int, float, or date-like string."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float) and value == value and 1000 <= value < 3000:
        return int(value)
    match = re.search(r"\b(1[5-9]\d\d|20\d\d)\b", str(value))
    return int(match.group(1)) if match else None


def _bib_references(pdf_parse: Any) -> list[str]:
    entries = pdf_parse.get("bib_entries") if isinstance(pdf_parse, dict) else None
    if not isinstance(entries, dict):
        return []
    refs = [clean_ws(str(e.get("raw_text") or e.get("title") or "")) for e in entries.values() if isinstance(e, dict)]
    return [r for r in refs if r]


# --- record -> Document ----------------------------------------------------------------------


def _record_document(raw: object, fallback_id: str | None, path: Path, options: LoadOptions) -> Document | None:
    """The document of one record, or None when it is not a paper (or absurdly nested)."""
    try:
        return record_to_document(raw, fallback_id, path, options) if isinstance(raw, dict) else None
    except RecursionError:  # absurdly nested sections/paragraphs
        return None


def record_to_document(
    raw: dict[str, Any], fallback_id: str | None, path: Path, options: LoadOptions
) -> Document | None:
    """One Document from a paper object, or None when it has no text."""
    rec = _Record(raw)
    abstract = _as_text(rec.get("abstract")) or _labelled(rec.get("contexts"), rec.get("labels"))
    pdf_parse = raw.get("pdf_parse")
    if not abstract and isinstance(pdf_parse, dict):
        abstract = _as_text(pdf_parse.get("abstract"))
    sections = [Section("Abstract", abstract, kind="abstract")] if abstract else []
    body = _structured_sections(rec)
    if not body:
        flat = _as_text(rec.get(*TEXT_KEYS[:-1])) or _sentences_text(rec.get("sentences") or [])
        body = [Section("", flat, kind="body")] if flat else []
    sections += [s for s in body if not (abstract and s.kind == "abstract" and clean_ws(s.text) == clean_ws(abstract))]
    references = _bib_references(pdf_parse)
    if not options.include_references:
        sections, more = split_references(sections)
        references += more
    text = "\n\n".join(s.text for s in sections if s.text)
    if not text.strip():
        return None
    given = rec.get(*ID_KEYS)
    if isinstance(given, bool) or not isinstance(given, str | int | float):
        given = None
    doc_id_, md5 = doc_id(given if given is not None else fallback_id, text)
    title = clean_ws(_as_text(rec.get(*TITLE_KEYS))) or title_from_text(text)
    doi, pmid = rec.get("doi"), rec.get("pmid")
    return Document(
        id=doc_id_,
        title=title,
        sections=sections,
        source_path=str(path),
        authors=parse_authors(rec.get("authors", "author")),
        year=parse_year(rec.get("year", "publication_year", "pub_year", "date")),
        venue=clean_ws(str(rec.get("venue", "journal", "journal_title", "booktitle") or "")) or None,
        doi=str(doi) if doi is not None else None,
        pmid=str(pmid) if pmid is not None else None,
        abstract=abstract or next((s.text for s in sections if s.kind == "abstract"), ""),
        metadata=rec.rest(),
        content_md5=md5,
        references=references,
    )


def _skipped_warning(skipped: list[int], total: int) -> str:
    listed = ", ".join(str(n) for n in skipped[:MAX_LISTED]) + (", ..." if len(skipped) > MAX_LISTED else "")
    return f"skipped {len(skipped)} of {total} records without text (expected a field: {EXPECTED}); records {listed}"


def load_json(path: Path, options: LoadOptions) -> list[Document]:
    text, warnings = read_text(path)
    if not text.strip():
        raise LoadError(str(path), "no text content (file is blank)")
    try:
        pairs = _records(parse_json_values(text, str(path)), str(path))
    except NotPapersError as exc:
        raise NotPapersError(str(path), exc.reason) from None
    docs: list[Document] = []
    skipped: list[int] = []
    for number, (fallback_id, raw) in enumerate(pairs, start=1):
        doc = _record_document(raw, fallback_id, path, options)
        if doc is None:
            skipped.append(number)
        else:
            docs.append(doc)
    if not docs:
        keys = sorted({str(k) for _, raw in pairs[:50] if isinstance(raw, dict) for k in raw})[:20]
        found = f"found keys: {', '.join(keys)}" if keys else "found no JSON objects"
        raise NotPapersError(str(path), f"not papers: no usable records: expected objects with one of the fields "
                                        f"{EXPECTED}; {found}")
    if skipped:
        warnings.append(_skipped_warning(skipped, len(pairs)))
    docs[0].warnings.extend(warnings)
    return docs


# --- streaming (an array or JSON Lines of many records) ----------------------------------------

READ_CHARS = 1 << 20  # text read at a time while a record is incomplete
_BLANK = " \t\r\n\ufeff"


class _Values:
    """The top-level JSON values of a text stream, one at a time, as the stream is read."""

    def __init__(self, stream: TextIO, path: str):
        self.stream, self.path = stream, path
        self.buf, self.pos, self.eof = "", 0, False
        self.lines_before = self.columns_before = 0  # where the buffer starts in the file (for error messages)
        self._decoder = json.JSONDecoder()

    def _more(self) -> bool:
        # at least as much again as is held: a large value is decoded again a few times, not once per block
        chunk = "" if self.eof else self.stream.read(max(READ_CHARS, len(self.buf) - self.pos))
        if not chunk:
            self.eof = True
            return False
        consumed = self.buf[:self.pos]  # goes
        self.lines_before += consumed.count("\n")
        self.columns_before = (len(consumed) - consumed.rfind("\n") - 1 if "\n" in consumed
                               else self.columns_before + len(consumed))
        self.buf, self.pos = self.buf[self.pos:] + chunk, 0
        return True

    def peek(self) -> str | None:
        """The next character that is not blank (not consumed), or None at the end."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in _BLANK:
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more():
                return None

    def take(self, char: str) -> bool:
        if self.peek() == char:
            self.pos += 1
            return True
        return False

    def value(self) -> Any:
        self.peek()  # raw_decode starts at a value, not at the blanks before it
        while True:
            try:
                value, end = self._decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if self._more():  # maybe only cut by the end of what was read so far
                    continue
                raise LoadError(self.path, self._error(exc)) from exc
            except RecursionError as exc:
                raise LoadError(self.path, "invalid JSON: nested too deeply to read") from exc
            if end == len(self.buf) and self._more():  # a number at the end may go on ("12" of "123")
                continue
            self.pos = end
            return value

    def expected(self, what: str) -> LoadError:
        return LoadError(self.path, self._error(json.JSONDecodeError(f"Expecting {what}", self.buf, self.pos)))

    def _error(self, exc: json.JSONDecodeError) -> str:
        line = self.lines_before + self.buf.count("\n", 0, exc.pos) + 1
        newline = self.buf.rfind("\n", 0, exc.pos)
        column = exc.pos - newline if newline >= 0 else self.columns_before + exc.pos + 1
        at = "" if exc.msg.endswith(" at") else " at"
        cut = exc.pos >= len(self.buf.rstrip()) or exc.msg.startswith("Unterminated string")
        return f"invalid JSON: {exc.msg}{at} line {line} column {column}{' (the file looks truncated)' if cut else ''}"


def _streamed_records(values: _Values, first: Any) -> Iterator[tuple[str | None, Any]]:
    """JSON Lines (or concatenated values) from the second value on: a list's items are records."""
    value = first
    while True:
        yield from ((None, v) for v in (value if isinstance(value, list) else [value]))
        if values.peek() is None:
            return
        value = values.value()


def _array_records(values: _Values) -> Iterator[tuple[str | None, Any]]:
    """The items of the array that opens the stream, one by one; values after it as JSON Lines."""
    values.take("[")
    if not values.take("]"):
        while True:
            yield None, values.value()
            if values.take("]"):
                break
            if not values.take(","):
                raise values.expected("',' delimiter")
    if values.peek() is not None:
        yield from _streamed_records(values, values.value())


def _documents(pairs: Iterable[tuple[str | None, Any]], path: Path, options: LoadOptions,
               warnings: list[str]) -> Iterator[Document]:
    """Each record as a Document (records without text skipped, and counted in ``warnings``)."""
    total, found = 0, False
    skipped: list[int] = []
    keys: set[str] = set()
    for total, (fallback_id, raw) in enumerate(pairs, start=1):
        if isinstance(raw, dict) and total <= 50:
            keys.update(str(k) for k in raw)
        doc = _record_document(raw, fallback_id, path, options)
        if doc is None:
            skipped.append(total)
            continue
        found = True
        yield doc
    if not found:
        listed = f"found keys: {', '.join(sorted(keys)[:20])}" if keys else "found no JSON objects"
        raise NotPapersError(str(path), f"not papers: no usable records: expected objects with one of the fields "
                                        f"{EXPECTED}; {listed}")
    if skipped:
        warnings.append(_skipped_warning(skipped, total))


def stream_json(path: Path, options: LoadOptions, warnings: list[str]) -> Iterator[Document]:
    """A JSON array or JSON Lines of records, record by record as the file is read (a file of a
    million records is never held whole); a single object (one paper, a map of papers) is read at
    once, as ``load_json`` reads it."""
    stream, encoding_warnings = open_text(path)
    with stream:
        warnings += encoding_warnings
        values = _Values(stream, str(path))
        start = values.peek()
        if start is None:
            raise LoadError(str(path), "no text content (file is blank)")
        if start == "[":
            yield from _documents(_array_records(values), path, options, warnings)
            return
        first = values.value()
        if values.peek() is not None:  # JSON Lines
            yield from _documents(_streamed_records(values, first), path, options, warnings)
            return
    try:
        pairs = _records([first], str(path))
    except NotPapersError as exc:
        raise NotPapersError(str(path), exc.reason) from None
    yield from _documents(pairs, path, options, warnings)


SPECS = [
    LoaderSpec(
        name="json",
        suffixes=(".json", ".jsonl"),
        load=load_json,
        stream=stream_json,
        description="JSON / JSON Lines papers: {title, text|abstract|sections, ...} objects, ASKG, S2ORC, QASPER",
    )
]
