"""Paragraph and sentence boundaries as character spans (no models, no downloads)."""

from __future__ import annotations

import re

_PARA_BREAK = re.compile(r"\n[ \t]*\n+")
# Candidate sentence ends: . ! ? (optionally followed by quotes/brackets) then whitespace.
_SENT_END = re.compile(r"[.!?][\"'\u201d\u2019)\]]*\s+")
_ABBREVIATIONS = {
    "e.g", "i.e", "et al", "al", "fig", "figs", "eq", "eqs", "vs", "cf", "etc", "approx", "dr", "mr", "mrs",
    "ms", "prof", "no", "nos", "vol", "pp", "sec", "secs", "tab", "ref", "refs", "resp", "ca", "viz", "st",
    "inc", "ltd", "co", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    "max", "min", "avg", "std", "dept", "univ", "ch", "eds", "ed", "suppl",
}
_LAST_WORD = re.compile(r"([A-Za-z][A-Za-z.]*)\.?$")


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    """Spans of non-empty paragraphs (separated by blank lines), whitespace-trimmed."""
    spans = []
    start = 0
    for match in _PARA_BREAK.finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return [s for s in (_trim(text, a, b) for a, b in spans) if s[1] > s[0]]


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _is_abbreviation(text: str, dot_pos: int) -> bool:
    """True when the '.' at ``dot_pos`` ends an abbreviation, an initial or a number."""
    head = text[max(0, dot_pos - 12) : dot_pos]
    match = _LAST_WORD.search(head)
    if not match:
        return head[-1:].isdigit() and text[dot_pos + 1 : dot_pos + 2].isdigit()
    word = match.group(1).rstrip(".").lower()
    if word in _ABBREVIATIONS:
        return True
    if len(word) == 1 and match.group(1).isupper():  # initials: "J. Smith"
        return True
    return "." in word  # "e.g", "U.S"


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentence spans inside ``text[start:end]``; a sentence never crosses a paragraph break."""
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    for p_start, p_end in paragraph_spans(text[start:end]):
        p_start += start
        p_end += start
        cursor = p_start
        for match in _SENT_END.finditer(text, p_start, p_end):
            if text[match.start()] == "." and _is_abbreviation(text, match.start()):
                continue
            nxt = text[match.end() : match.end() + 1]
            if nxt and nxt.islower():  # "... approx. the" – not a sentence start
                continue
            spans.append(_trim(text, cursor, match.end()))
            cursor = match.end()
        if cursor < p_end:
            spans.append(_trim(text, cursor, p_end))
    return [s for s in spans if s[1] > s[0]]
