"""Lexical terms for full-text search: one tokenisation for indexed chunks and for questions.

Scientific text names things with symbols that a plain word splitter destroys: ``IL-6``,
``BRCA1``, ``F1``, ``COVID-19``, ``p<0.05``, ``Ca2+``, ``c.201C>A``. :func:`lexical_terms` keeps them:

* a compound word is kept whole (``il-6``, ``sars-cov-2``, ``ca2+``), with its parts (``il``, ``6``)
  so that ``IL 6`` still matches, and -- when a part holds a digit -- glued (``il6``, ``covid19``)
  so that ``IL6`` matches ``IL-6``;
* a comparison (``p<0.05``, ``P ≤ .05``, ``n=12``) is one term (``p<0.05``, ``p<=.05``, ``n=12``),
  besides its number;
* numbers and words with digits are kept as written (``0.05``, ``brca1``, ``f1``); other words are
  case-folded, stopwords dropped, and stemmed (Snowball English: ``mutations`` -> ``mutat``).

Every term consists of letters, digits and :data:`TERM_SYMBOLS` only, so a backend can index the
terms joined by spaces with a tokenizer that splits on whitespace alone (SQLite FTS5:
:data:`FTS5_TOKENIZE`). Changing what this module emits changes :data:`LEXICAL_VERSION`, which makes
stores rebuild their lexical index.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import Stemmer

from .stopwords import STOPWORDS

__all__ = ["FTS5_TOKENIZE", "LEXICAL_VERSION", "TERM_SYMBOLS", "lexical_terms", "query_terms_lexical"]

LEXICAL_VERSION = "1"
TERM_SYMBOLS = "-./+%<>="
# SQLite FTS5 tokenizer for space-joined terms: the symbols above are part of a token
FTS5_TOKENIZE = f"unicode61 remove_diacritics 0 tokenchars '{TERM_SYMBOLS}'"

_DASHES = str.maketrans({"\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2212": "-",
                         "\u2264": "<=", "\u2265": ">=", "\u2019": "'"})
# a short symbol or statistic compared with a number: p<0.05, P = .01, n=12, OR>=1.5
_COMPARISON = re.compile(r"(?<![\w.])([a-z]{1,3})\s*(<=|>=|==|=|<|>)\s*(-?(?:\d+(?:\.\d+)?|\.\d+))(?![\d.]*\w)")
# words with internal connectors ("IL-6", "sodium/iodide", "0.05", "Alzheimer's"), a trailing "+" ("Ca2+")
_TOKEN = re.compile(r"\w+(?:[-/'.+]\w+)*\+*%?")
_CONNECTOR = re.compile(r"[-/']+")
_ALLOWED = re.compile(rf"[^\w{re.escape(TERM_SYMBOLS)}]|_")  # "_" is a word character to \w, not to FTS5
_STEMMER = Stemmer.Stemmer("english")


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return _STEMMER.stemWord(word) if len(word) > 3 else word


def _clean(token: str) -> str:
    return _ALLOWED.sub("", token).strip(".-/")


@lru_cache(maxsize=200_000)
def _word_terms(token: str) -> tuple[str, ...]:
    """The terms of one token (already case-folded and normalised)."""
    if token.endswith("'s"):
        token = token[:-2]
    token = token.replace("'", "")
    if not token or token in STOPWORDS:
        return ()
    if token.isalpha():
        return (_stem(token),)
    parts = [p for p in _CONNECTOR.split(token) if p]
    whole = _clean(token)
    if len(parts) <= 1:
        return (whole,) if whole else ()
    out = [whole] if whole else []
    if any(ch.isdigit() for ch in token) and all(p.isalnum() for p in parts):
        out.append("".join(parts))  # il-6 -> il6, covid-19 -> covid19
    for p in parts:
        p = _clean(p)
        if p and p not in STOPWORDS:
            out.append(_stem(p) if p.isalpha() else p)
    return tuple(out)


def lexical_terms(text: str) -> list[str]:
    """The search terms of ``text``, in order, repeated as often as they occur."""
    text = unicodedata.normalize("NFKC", text).translate(_DASHES).casefold()
    out: list[str] = []
    for m in _COMPARISON.finditer(text):
        out.append(f"{m.group(1)}{m.group(2)}{m.group(3)}")
    for token in _TOKEN.findall(text):
        out.extend(_word_terms(token))
    return out


def query_terms_lexical(question: str, limit: int = 64) -> list[str]:
    """Distinct terms of a question, in order of first appearance (at most ``limit``)."""
    return list(dict.fromkeys(lexical_terms(question)))[:limit]
