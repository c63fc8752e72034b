"""Paragraph and sentence boundaries as character spans: the project's one sentence splitter.

Used by chunking (sentence-aligned chunks), the offline extractor, fastbio's passage cutting and
extractive answers. Regexes and one abbreviation list; no models, no downloads.
"""

from __future__ import annotations

import re

__all__ = ["paragraph_spans", "sentence_spans", "split_sentences"]

# Lower-cased abbreviations (without their final period) after which a period does not end a sentence.
ABBREVIATIONS = frozenset(
    """
    e.g eg i.e ie et al cf vs viz fig figs eq eqs ref refs sec secs sect tab tabs no nos vol vols pp p
    approx ca resp dr mr mrs ms prof st inc ltd co corp dept univ ch chap eds ed suppl var spp sp
    jan feb mar apr jun jul aug sep sept oct nov dec mt ft est max min avg std
    """.split()
)
# Abbreviations that may end a sentence when a capitalised word follows ("... and so on, etc. The").
_SOFT_ABBREVIATIONS = frozenset({"etc", "al", "approx"})

_PARA_BREAK_RE = re.compile(r"\n[ \t\r\f\v]*\n")
# A sentence end candidate: terminal punctuation, optional closers, whitespace, then an opener.
_SENT_END_RE = re.compile(r"([.!?]+)([\"'\u201d\u2019)\]]*)(\s+)(?=[\"'\u201c\u2018(\[]?[^\W_])")
_WORD_BEFORE_RE = re.compile(r"([A-Za-z][A-Za-z.]*)$")
_INITIALS_RE = re.compile(r"(?:^|[\s(])(?:[A-Za-z]\.){2,}$")
_OPENERS = "\"'\u201c\u2018(["


def _is_non_terminal(text: str, dot_pos: int, next_char_pos: int) -> bool:
    """True when the period at ``dot_pos`` belongs to an abbreviation/initial, not a sentence end."""
    if text[dot_pos] != ".":
        return False
    before = text[max(0, dot_pos - 40) : dot_pos]
    if _INITIALS_RE.search(before + "."):  # "U.S." "e.g." "i.e."
        return True
    match = _WORD_BEFORE_RE.search(before)
    if not match:
        return False
    word = match.group(1)
    lw = word.lower().rstrip(".")
    nxt = text[next_char_pos : next_char_pos + 1]
    if lw in _SOFT_ABBREVIATIONS:
        # "et al. (2020)" / "et al. 2020" continue; "etc. The" ends a sentence.
        return not (nxt.isupper() and lw == "etc")
    if lw in ABBREVIATIONS:
        return True
    # A single capital letter: an initial ("J. Smith") -- unless it is a one-letter word like "I".
    return len(word) == 1 and word.isupper() and word not in {"I", "A"}


def _starts_lower(text: str, pos: int) -> bool:
    """The sentence candidate at ``pos`` starts with a lower-case letter (after an opener)."""
    if text[pos : pos + 1] in _OPENERS:
        pos += 1
    return text[pos : pos + 1].islower()


def paragraph_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Spans of the paragraphs (separated by blank lines) of ``text[start:end]``, whitespace-trimmed."""
    end = len(text) if end is None else end
    spans, para_start = [], start
    for m in _PARA_BREAK_RE.finditer(text, start, end):
        spans.append((para_start, m.start()))
        para_start = m.end()
    spans.append((para_start, end))
    return [s for s in (_trim(text, a, b) for a, b in spans) if s[1] > s[0]]


def _trim(text: str, a: int, b: int) -> tuple[int, int]:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of the sentences of ``text[start:end]``, whitespace-trimmed.

    Blank lines always end a sentence. A period followed by whitespace and a capital letter, digit
    or opening bracket ends a sentence unless it closes a known abbreviation ("e.g.", "et al.",
    "Fig.", "Eq.", "vs."), an initial ("J. Smith") or a dotted acronym ("U.S."). Decimals ("3.5")
    never split because no whitespace follows the period; a lower-case word never starts a sentence.
    """
    spans: list[tuple[int, int]] = []
    for p_start, p_end in paragraph_spans(text, start, end):
        cursor = p_start
        for m in _SENT_END_RE.finditer(text, p_start, p_end):
            dot_pos = m.start(1) + len(m.group(1)) - 1
            nxt = m.end(3)
            if _starts_lower(text, nxt) or _is_non_terminal(text, dot_pos, nxt):
                continue
            spans.append((cursor, m.end(2)))
            cursor = nxt
        spans.append((cursor, p_end))
    return [s for s in (_trim(text, a, b) for a, b in spans) if s[1] > s[0]]


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` as strings (see :func:`sentence_spans`)."""
    return [text[a:b] for a, b in sentence_spans(text)]


def without_repeats(text: str) -> str:
    """``text`` with every sentence that repeats an earlier one (case and spacing ignored) left out:
    a small model that loops writes the same sentence until its budget ends."""
    seen: set[str] = set()
    kept: list[str] = []
    sentences = split_sentences(text)
    for sentence in sentences:
        key = " ".join(sentence.casefold().split())
        if key not in seen:
            seen.add(key)
            kept.append(sentence)
    return text if len(kept) == len(sentences) else " ".join(kept)
