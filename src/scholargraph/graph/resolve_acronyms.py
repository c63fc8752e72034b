"""Acronym spelling on raw words (rule d of :mod:`scholargraph.graph.resolve`).

Is a word acronym-like ("RAG", "LLMs", "IoT", "SF1625"), which letters does it spell, and can a
long form spell them (Schwartz–Hearst style: each content word gives its initial and up to three
later letters; short function words may give a letter or none)? Word-level only: the surface-level
test, with shared leading/trailing words set aside, is
:func:`scholargraph.graph.resolve_names.acronym_matches`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

SPLIT_PARTS_RE = re.compile(r"[-\u2010\u2011\u2012\u2013\u2014\u2212_/]+")
EDGE_PUNCT = " \t.,;:!?'\"()[]{}<>*#|\\"
# Lower-case words that may or may not give a letter to an acronym.
_FUNCTION_WORDS = frozenset({"of", "and", "the", "for", "in", "on", "to", "with", "by", "a", "an", "at", "from",
                             "de", "der", "den", "von", "van", "la", "le", "du", "&", "or", "via", "into"})


# A compound of capitalised words written together ("PageRank", "PubMed", "ImageNet"): its capitals
# are word starts, not an abbreviation ("PageRank" is not "Passage Ranking").
_CAMEL_COMPOUND = re.compile(r"(?:[A-Z][a-z]{2,})+[A-Z][a-z]{2,}")


@functools.lru_cache(maxsize=262144)
def is_acronym_word(word: str) -> bool:
    """"RAG", "LLMs", "IoT", "nDCG", "apoE", "Dll4", "TF-IDF", "5-FU", "SF1625" (not "Transformer",
    nor the compound "PageRank")."""
    if not 2 <= len(word) <= 12 or not any(c.isalpha() for c in word):
        return False
    if _CAMEL_COMPOUND.fullmatch(word):
        return False
    if not all(c.isalnum() or c in "-&.+/" for c in word):
        return False
    letters = [c for c in word if c.isalpha()]
    uppers = sum(1 for c in letters if c.isupper())
    if uppers >= 2:
        return True
    if any(c.isupper() for c in word[1:]):
        return True
    return word[0].isupper() and any(c.isdigit() for c in word)


def acronym_letters(word_text: str) -> tuple[str, ...]:
    """Letters an acronym-like surface spells: all letters, and the capitals alone if different."""
    letters, capitals = [], []
    for w in word_text.split():
        core = w
        if len(core) > 2 and core.endswith("s") and (core[-2].isupper() or core[-2].isdigit()):
            core = core[:-1]
        letters += [c.lower() for c in core if c.isalpha()]
        capitals += [c.lower() for c in core if c.isalpha() and c.isupper()]
    out = ["".join(letters)]
    caps = "".join(capitals)
    if len(caps) >= 2 and caps != out[0]:
        out.append(caps)
    return tuple(s for s in out if s)

@functools.lru_cache(maxsize=262144)
def word_parts(word: str) -> tuple[tuple[str, bool], ...]:
    """(letters, optional?) of each hyphen/slash part of one long-form word; numbers dropped."""
    out = []
    for part in SPLIT_PARTS_RE.split(word):
        part = part.strip(EDGE_PUNCT + "+")
        if not part:
            continue
        letters = "".join(c for c in part if c.isalpha()).lower()
        if not letters:  # a number: checked through the numbers of both sides
            continue
        optional = part.lower() in _FUNCTION_WORDS or (part.islower() and len(part) <= 2)
        out.append((letters, optional))
    return tuple(out)


def _long_form_words(words: Sequence[str]) -> list[tuple[str, bool]] | None:
    """(letters of the word, optional?) for each word/part of a long form; None if unusable."""
    out = [p for w in words for p in word_parts(w)]
    return out or None


def _spells(acr: str, words: list[tuple[str, bool]]) -> bool:
    """Can the words spell ``acr``? Each content word: its initial + up to 3 later letters."""
    n_letters = len(acr)

    @functools.cache
    def go(wi: int, li: int) -> bool:
        if wi == len(words):
            return li == n_letters
        word, optional = words[wi]
        if optional and go(wi + 1, li):
            return True
        if li >= n_letters or word[0] != acr[li]:
            return False
        # Take the initial, then 0..3 further letters as a subsequence of the rest of the word.
        if go(wi + 1, li + 1):
            return True
        pos, nxt = 1, li + 1
        for _extra in range(3):
            if nxt >= n_letters:
                break
            found = word.find(acr[nxt], pos)
            if found < 0:
                break
            pos, nxt = found + 1, nxt + 1
            if go(wi + 1, nxt):
                return True
        return False

    return go(0, 0)


@functools.lru_cache(maxsize=262144)
def acronym_words(wa: tuple[str, ...], wb: tuple[str, ...]) -> bool:
    """Do the acronym-like words ``wa`` abbreviate the words ``wb`` (rule d's spelling test)?"""
    long_words = _long_form_words(wb)
    if not long_words:
        return False
    # Cheap rejection first: the acronym's first letter starts one of the first long-form parts.
    first = next((c.lower() for c in wa[0] if c.isalpha()), "")
    if not first or not any(w[0] == first for w, _opt in long_words[:3]):
        return False
    if not all(is_acronym_word(w) for w in wa):
        return False
    if len(wb) == 1 and is_acronym_word(wb[0]):
        return False
    letters = acronym_letters(" ".join(wa))
    if not letters:
        return False
    n_content = sum(1 for _w, opt in long_words if not opt)
    total = sum(len(w) for w, _opt in long_words)
    for acr in letters:
        if len(acr) < 2 or total <= len(acr) or n_content > len(acr):
            continue
        if len(long_words) == 1 and (len(acr) > 4 or len(long_words[0][0]) < max(6, 2 * len(acr))):
            continue  # one word abbreviated: "PKU" = "phenylketonuria", not "PR" = "Prl"
        if _spells(acr, long_words):
            return True
    return False
