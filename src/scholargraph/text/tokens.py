"""Word and punctuation tokens with character offsets (regex only, no models)."""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["Token", "tokenize", "tokenize_with_offsets"]

class Token(NamedTuple):
    text: str
    start: int
    end: int


# Words may contain internal hyphens/dashes, apostrophes, slashes and "+" joins ("BERT-base",
# "GPT-4", "sodium/iodide", "Alzheimer's", "C++"), decimals ("0.05") and a trailing "+" ("Ca2+").
_TOKEN_RE = re.compile(
    r"(?<![\w.])[cgmnpr]\.[A-Za-z*]{0,3}-?\d+[\w>*+\-]*(?<![-+])"  # HGVS variants: c.201C>A, p.Y67X
    r"|(?<![\w.])-?\d+[A-Za-z]*>[A-Za-z]+\b"  # 643C>T, -141Cins>del
    r"|\d+(?:[.,]\d+)+(?:%|[A-Za-z\u00b5\u03bc]{1,3}(?!\w))?"  # 0.05, 3.5%, 1.4kb, 0.5M
    r"|\w+(?:(?:[-\u2010\u2011\u2012\u2013'\u2019/+]|\.(?=\d))\w+)*\+*%?"
    r"|[^\w\s]"
)


def tokenize_with_offsets(text: str, start: int = 0, end: int | None = None) -> list[Token]:
    """Word and punctuation tokens of ``text[start:end]`` with offsets into ``text``."""
    matches = _TOKEN_RE.finditer(text, start, len(text) if end is None else end)
    return [Token(m.group(), m.start(), m.end()) for m in matches]


def tokenize(text: str) -> list[str]:
    """Token strings of ``text`` (see :func:`tokenize_with_offsets`)."""
    return [m.group() for m in _TOKEN_RE.finditer(text)]
