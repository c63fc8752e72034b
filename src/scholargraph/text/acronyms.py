"""Acronym detection: acronym-like tokens and "long form (SF)" definitions.

Schwartz & Hearst (2003) with a plural-"s" extension ("large language models (LLMs)"), tried
after a word-initials match ("Retrieval-Augmented Generation (RAG)").
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["AcronymDefinition", "find_acronym_definition_spans", "find_acronym_definitions", "is_acronym"]


class AcronymDefinition(NamedTuple):
    long_form: str
    acronym: str
    long_start: int
    long_end: int
    short_start: int
    short_end: int


_PAREN_RE = re.compile(r"\(([^()]{1,120})\)")
_WORDS_RE = re.compile(r"\S+")
_SF_STOP_LEADERS = frozenset({"the", "a", "an", "of", "and", "or", "in", "on", "for", "to", "with", "by", "from"})


def is_acronym(token: str) -> bool:
    """Acronym-like token: "NER", "LLMs", "GPT-4", "IL-6", "TP53" (not "Retrieval-Augmented").

    2-10 chars (plus an optional plural "s"), starts alphanumeric, at least two capitals, no other
    lower-case letters, only letters/digits/hyphens/"&"."""
    core = token[:-1] if len(token) > 2 and token.endswith("s") and token[-2].isupper() else token
    if not 2 <= len(core) <= 10 or not core[0].isalnum():
        return False
    if sum(1 for c in core if c.isupper()) < 2:
        return False
    if any(c.islower() for c in core):
        return False
    return all(c.isalnum() or c in "-&" for c in core) and not core.isdigit()


def _valid_short_form(sf: str) -> bool:
    if not 2 <= len(sf) <= 10 or len(sf.split()) > 2:
        return False
    if not sf[0].isalnum() or not any(c.isalpha() for c in sf):
        return False
    if not any(c.isupper() for c in sf):  # "(here)", "(i)", "(e.g." are not acronyms
        return False
    if len(sf) == 2 and sum(c.isupper() for c in sf) < 2:  # "(En)", "(Ar)": language codes, units
        return False
    if sf.lower() in {"e.g", "i.e", "cf", "etc"} or re.fullmatch(r"[ivxlcdm]+|[IVXLCDM]+|[A-Za-z]", sf):
        return False
    return True


def _match_core(sf: str) -> str:
    """The letters of a short form used for matching: drop a plural "s" ("LLMs" -> "LLM")."""
    core = sf
    if len(core) > 2 and core.endswith("s") and core[-2].isupper():
        core = core[:-1]
    return core


def _best_long_form(sf: str, candidate: str) -> int | None:
    """Schwartz-Hearst: start index in ``candidate`` of the shortest long form matching ``sf``."""
    s_idx = len(sf) - 1
    l_idx = len(candidate) - 1
    while s_idx >= 0:
        c = sf[s_idx].lower()
        if not c.isalnum():
            s_idx -= 1
            continue
        while l_idx >= 0 and (
            candidate[l_idx].lower() != c or (s_idx == 0 and l_idx > 0 and candidate[l_idx - 1].isalnum())
        ):
            l_idx -= 1
        if l_idx < 0:
            return None
        l_idx -= 1
        s_idx -= 1
    # Extend back to the start of the word the first letter was found in.
    start = l_idx + 1
    while start > 0 and not candidate[start - 1].isspace():
        start -= 1
    return start


_INITIAL_SKIP = frozenset({"of", "and", "the", "for", "in", "on", "to", "with", "by", "a", "an", "&"})


def _initials_long_form(core: str, candidate: str) -> int | None:
    """Start of the shortest word suffix of ``candidate`` whose word initials spell ``core``.

    Words split on hyphens and slashes ("Retrieval-Augmented Generation" -> R, A, G); small
    function words inside the long form are skipped ("Bag of Words" -> BoW). Tried before the
    Schwartz-Hearst character match, which may match letters inside words
    ("Category Cooccurrence Restrictions (CCRs)" would otherwise lose "Category").
    """
    letters = "".join(c for c in core.lower() if c.isalpha())
    if len(letters) < 2:
        return None
    words = list(_WORDS_RE.finditer(candidate))
    for n in range(1, len(words) + 1):
        first = words[-n]
        if first.group().lower() in _INITIAL_SKIP:
            continue
        initials = ""
        for w in words[-n:]:
            lw = w.group().lower()
            if lw in _INITIAL_SKIP:
                continue
            initials += "".join(part[0] for part in re.split(r"[-/\u2010\u2011]", lw) if part and part[0].isalpha())
        if initials == letters:
            return first.start()
        if len(initials) > len(letters) + 2:
            break
    return None


def _check_pair(long_form: str, sf: str) -> bool:
    words = long_form.split()
    core = _match_core(sf)
    if not words or len(long_form) <= len(sf):
        return False
    if words[0].lower() in _SF_STOP_LEADERS:
        return False
    if len(words) > min(len(core) + 5, len(core) * 2):
        return False
    if sf.lower() in long_form.lower().split():
        return False
    # The first letter of the short form must start the long form (first alphanumeric char).
    first = next((ch for ch in long_form if ch.isalnum()), "")
    return first.lower() == core[0].lower()


def _defined_before(text: str, m: re.Match[str]) -> AcronymDefinition | None:
    """A "long form (SF)" definition: the long form is searched in the clause before the parenthesis."""
    inner = m.group(1)
    # Content up to a separator: "(RAG; Lewis et al. 2020)" -> "RAG".
    sf_raw = re.split(r"[;,]| - ", inner, maxsplit=1)[0].strip()
    sf_start = m.start(1) + inner.find(sf_raw) if sf_raw else m.start(1)
    # Text before the parenthesis, cut at the last clause boundary.
    before_start = max(0, m.start() - 200)
    before = text[before_start : m.start()]
    cut = max(
        (b.end() for b in re.finditer(r"[.;:!?](?:\s|$)|[()\[\]]", before)),
        default=0,
    )
    window = before[cut:].rstrip()
    window_offset = before_start + cut
    if not (sf_raw and _valid_short_form(sf_raw) and window):
        return None
    core = _match_core(sf_raw)
    words = list(_WORDS_RE.finditer(window))
    max_words = min(len(core) + 5, len(core) * 2)
    words = words[-max_words:]
    if not words:
        return None
    cand_start = words[0].start()
    candidate = window[cand_start:]
    start = _initials_long_form(core, candidate)
    if start is None:
        start = _best_long_form(core, candidate)
    if start is None:
        return None
    lf = candidate[start:].strip(" ,-\"'")
    lf_abs = window_offset + cand_start + start
    lf_abs += len(candidate[start:]) - len(candidate[start:].lstrip(" ,-\"'"))
    if not _check_pair(lf, sf_raw):
        return None
    return AcronymDefinition(lf, sf_raw, lf_abs, lf_abs + len(lf), sf_start, sf_start + len(sf_raw))


def _defined_after(text: str, m: re.Match[str]) -> AcronymDefinition | None:
    """A "SF (long form)" definition: the word right before the parenthesis is the short form."""
    inner = m.group(1)
    prev = re.search(r"(\S+)\s*$", text[max(0, m.start() - 20) : m.start()])
    if not (prev and len(inner.split()) >= 2):
        return None
    sf = prev.group(1).strip(",;:")
    if not (_valid_short_form(sf) and is_acronym(sf)):
        return None
    lf = re.split(r"[;,]", inner, maxsplit=1)[0].strip()
    start = _best_long_form(_match_core(sf), lf)
    if not (start == 0 and _check_pair(lf, sf)):
        return None
    sf_abs = max(0, m.start() - 20) + prev.start(1)
    lf_abs = m.start(1) + inner.find(lf)
    return AcronymDefinition(lf, sf, lf_abs, lf_abs + len(lf), sf_abs, sf_abs + len(sf))


def find_acronym_definition_spans(text: str) -> list[AcronymDefinition]:
    """All acronym definitions in ``text`` with character spans, in order of appearance.

    Handles "long form (SF)" -- the long form is searched in the words before the parenthesis,
    within the current clause -- and "SF (long form)".
    """
    out: list[AcronymDefinition] = []
    for m in _PAREN_RE.finditer(text):
        definition = _defined_before(text, m) or _defined_after(text, m)
        if definition is not None:
            out.append(definition)
    return out


def find_acronym_definitions(text: str) -> list[tuple[str, str]]:
    """``(long_form, acronym)`` pairs defined in ``text``, unique, in order of first appearance.

    >>> find_acronym_definitions("We use large language models (LLMs) for this.")
    [('large language models', 'LLMs')]
    """
    seen: dict[tuple[str, str], None] = {}
    for d in find_acronym_definition_spans(text):
        seen.setdefault((d.long_form, d.acronym), None)
    return list(seen)
