"""Shared helpers for loaders: section kinds from headings, paragraph joining.

``classify_heading`` maps a section heading to one of the ``Section.kind`` values
(abstract | introduction | body | conclusion | references). Loaders set "front" themselves
for text that comes before the first heading.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..models import Section

KINDS = ("abstract", "introduction", "body", "conclusion", "references", "front")

# A leading section number: "1", "2.1.", "IV.", "A.", "(3)", "§2" ...
_NUMBERING = re.compile(r"^\s*(?:§\s*)?(?:\(?(?:\d+(?:\.\d+)*|[ivxlcdm]+|[a-h])[.)]|\d+(?:\.\d+)*)\s+", re.I)

ABSTRACT_RE = re.compile(r"^(?:abstract|graphical abstract|structured abstract)\b", re.I)
INTRODUCTION_RE = re.compile(r"^(?:introduction|intro)\b", re.I)
CONCLUSION_RE = re.compile(
    r"\bconclusions?\b|\bconcluding (?:remarks|discussion|comments)\b|^summary and (?:outlook|future work)\b", re.I
)
REFERENCES_RE = re.compile(
    r"^(?:references?(?: and notes)?|bibliography|literature cited|works cited|cited literature|reference list)$", re.I
)

_WS = re.compile(r"\s+")


def normalise_heading(heading: str) -> str:
    """Heading without numbering, surrounding punctuation or markup, whitespace collapsed."""
    text = _WS.sub(" ", heading or "").strip()
    text = _NUMBERING.sub("", text, count=1)
    return text.strip(" \t*_#:.-—–").strip()


def classify_heading(heading: str) -> str:
    """Section kind for a heading: abstract | introduction | conclusion | references | body."""
    text = normalise_heading(heading)
    if not text:
        return "body"
    if ABSTRACT_RE.match(text):
        return "abstract"
    if INTRODUCTION_RE.match(text):
        return "introduction"
    if REFERENCES_RE.match(text):
        return "references"
    if CONCLUSION_RE.search(text):
        return "conclusion"
    return "body"


def clean_ws(text: str) -> str:
    """Collapse runs of whitespace (newlines included) to one space."""
    return _WS.sub(" ", text or "").strip()


def join_paragraphs(paragraphs: Iterable[str]) -> str:
    """Non-empty paragraphs, stripped, separated by blank lines."""
    return "\n\n".join(p.strip() for p in paragraphs if p and p.strip())


def make_section(heading: str, text: str, level: int = 1, kind: str | None = None) -> Section:
    """A Section whose kind comes from its heading unless given."""
    return Section(heading=heading.strip(), text=text.strip(), level=level, kind=kind or classify_heading(heading))


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")


def first_sentence(text: str, limit: int = 200) -> str:
    """The first sentence of ``text`` (whitespace collapsed), cut to ``limit`` characters at a word."""
    flat = clean_ws(text)
    sentence = _SENTENCE_END.split(flat, maxsplit=1)[0] if flat else ""
    if len(sentence) <= limit:
        return sentence
    head = sentence[: limit - 1]
    cut = head.rsplit(" ", 1)[0] if " " in head else head
    return cut.rstrip(" ,;:") + "…"


_LEAD_LABEL = re.compile(r"^(?:[A-Z][A-Za-z]+(?: [A-Za-z]+){0,3}):\s+(?=\S)")


def title_from_text(text: str, limit: int = 200) -> str:
    """A stand-in title: the first sentence, without a structured-abstract label ("Background:")."""
    return first_sentence(_LEAD_LABEL.sub("", clean_ws(text), count=1), limit)
