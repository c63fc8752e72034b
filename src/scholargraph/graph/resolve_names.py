"""Name surfaces for resolution: keys, tokens, variant signatures, trigrams, acronym pairs.

A candidate's *surfaces* are its name, each alias, and the outside and inside of a parenthesis in
the name. Each :class:`Surface` carries what the rules of :mod:`scholargraph.graph.resolve` compare:
folded tokens, the compact key (rule c), the variant signature (rule b), acronym letters (rule d)
and character trigrams (rule f). A name that starts with a namespace prefix ("bci:Aspect",
"schema:Person", "owl:Thing": an ontology term written as a CURIE) is its local part in that
namespace: the words, tokens, letters and trigrams are the local part's ("Aspect", so no acronym
spells the prefix), and the namespace is part of the compact key ("bci:aspect").
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..text.names import fold_plural
from .resolve_acronyms import AT_STARTS, EDGE_PUNCT, SPLIT_PARTS_RE, acronym_letters, acronym_words, is_acronym_word
from .resolve_types import Candidate

__all__ = ["acronym_matches", "name_similarity"]

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "`": "'", "\u00b4": "'", "\u201c": '"', "\u201d": '"'})
_PAREN = re.compile(r"\s+[(\[]([^()\[\]]{1,80})[)\]]")  # " (RAG)"; "alpha(1)" is not split
_RUNS = re.compile(r"\d+|[^\W\d_]+")
_ROMAN = re.compile(r"^(?:x{0,3})(?:ix|iv|v?i{1,3}|v)$|^x{1,3}$")
_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10}
_GREEK = {"alpha": "a", "beta": "b", "gamma": "g", "delta": "d", "epsilon": "e", "kappa": "k", "\u03b1": "a",
          "\u03b2": "b", "\u03b3": "g", "\u03b4": "d", "\u03b5": "e", "\u03ba": "k"}
# Size/flavour words that make a different variant of the same base name.
_VARIANT_WORDS = frozenset(
    "base large small tiny mini medium xl xxl xs lite plus pro turbo nano micro macro weighted uncased cased "
    "distilled max ultra".split()
)
_ARTICLES = frozenset({"the", "a", "an"})
# "bci:Aspect", "schema:Person", "owl:Thing": a CURIE's prefix (lower-case letters, as ontologies write
# them) and a local part that starts with a letter. Not "10:30", "http://...", "GO:0008150", nor a
# complex of two genes or proteins ("Cas9:sgRNA", "IL-2:IL-2R"): such a name is compared whole.
_NAMESPACED = re.compile(r"([a-z][a-z_]{0,19}):([A-Za-z_][^\s:]*)")


def _surface_text(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    return re.sub(r"\s+", " ", text).strip()


def _split_parenthetical(name: str) -> tuple[str, list[str]]:
    """Outer text and alias of a name with a parenthesis after a space.

    "Retrieval-Augmented Generation (RAG)" -> ("Retrieval-Augmented Generation", ["RAG"]): a
    trailing parenthesis is an alias when it or the outer text is an acronym ("TNNT (The NLP-NER
    Toolkit)"), not in "SF1625 (5 credits)". One in the middle only drops out of the outer
    text ("N-methyl-D-aspartate (NMDA) receptor" -> "N-methyl-D-aspartate receptor", no alias):
    in "uroplakin (UP) III" the "UP" abbreviates a part, not the whole.
    """
    matches = list(_PAREN.finditer(name))
    if not matches:
        return name, []
    outer = _PAREN.sub(" ", name).strip()
    last = matches[-1]
    inner = last.group(1).strip()
    alias: list[str] = []
    if not name[last.end():].strip() and outer:
        inner_acr = 0 < len(inner.split()) <= 3 and all(is_acronym_word(w) for w in inner.split())
        if inner_acr or acronym_words(tuple(outer.split()), tuple(_raw_words(inner))):
            alias = [inner]  # "Long Form (LF)" or "LF (Long Form)"; not "SF1625 (5 credits)"
    return (outer or name), alias


def split_namespace(text: str) -> tuple[str, str]:
    """(namespace casefolded, the rest) of a name whose first word is a prefixed name ("bci:Aspect"
    -> ("bci", "Aspect"), "bci:Modality types" -> ("bci", "Modality types")); ("", text) otherwise."""
    first, _, rest = text.partition(" ")
    match = _NAMESPACED.fullmatch(first)
    if not match:
        return "", text
    return match.group(1).casefold(), f"{match.group(2)} {rest}".strip()


def _raw_words(text: str) -> list[str]:
    """Whitespace words, possessive "'s" and edge punctuation dropped (case kept)."""
    out = []
    for w in text.split():
        w = w.strip(EDGE_PUNCT)
        if w.endswith("'s"):
            w = w[:-2]
        w = w.strip(EDGE_PUNCT)
        if w:
            out.append(w)
    return out


@functools.lru_cache(maxsize=262144)
def _word_tokens(word: str) -> tuple[str, ...]:
    """Folded tokens of one whitespace word: hyphen/slash parts, plural-folded, case-folded."""
    out = []
    for part in SPLIT_PARTS_RE.split(word):
        part = part.strip(EDGE_PUNCT + "+")
        if not part:
            continue
        out.append(fold_plural(part).casefold())
    return tuple(out)

def _numbers(tokens: Iterable[str]) -> tuple[int, ...]:
    nums = []
    for t in tokens:
        if _ROMAN.match(t) and len(t) <= 4:
            nums.append(_roman_value(t))
            continue
        nums += [int(r) for r in _RUNS.findall(t) if r.isdigit()]
    return tuple(sorted(nums))


def _roman_value(t: str) -> int:
    total, prev = 0, 0
    for c in reversed(t):
        v = _ROMAN_VALUES[c]
        total = total - v if v < prev else total + v
        prev = max(prev, v)
    return total


def _signature(tokens: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """Rule b: numbers, letters next to numbers or standing alone, size/flavour words."""
    marks: list[tuple[str, str]] = []
    for t in tokens:
        if _ROMAN.match(t) and len(t) <= 4:
            marks.append(("n", str(_roman_value(t))))
            continue
        if t in _VARIANT_WORDS:
            marks.append(("w", t))
            continue
        if t in _GREEK:
            marks.append(("l", _GREEK[t]))
            continue
        if len(t) == 1 and t.isalpha():
            if t != "a":
                marks.append(("l", t))
            continue
        runs = _RUNS.findall(t)
        for i, r in enumerate(runs):
            if r.isdigit():
                marks.append(("n", str(int(r))))
                continue
            near_digit = (i > 0 and runs[i - 1].isdigit()) or (i + 1 < len(runs) and runs[i + 1].isdigit())
            letter = _GREEK.get(r, r if len(r) == 1 else None)
            if near_digit and letter:
                marks.append(("l", letter))
    return tuple(sorted(marks))


def _canon_token(t: str) -> str:
    """Token as spelt in the compact key: "beta" -> "b", "4alpha" -> "4a", "ii" -> "2"."""
    if t in _GREEK:
        return _GREEK[t]
    if len(t) >= 2 and _ROMAN.match(t):
        return str(_roman_value(t))
    runs = _RUNS.findall(t)
    if len(runs) > 1 and any(r in _GREEK for r in runs):
        return "".join(_GREEK.get(r, r) if r in _GREEK and (i > 0 and runs[i - 1].isdigit()) else r
                       for i, r in enumerate(runs))
    return t


def _trigrams(compact: str) -> frozenset[str]:
    s = f"#{compact}#"
    return frozenset(s[i : i + 3] for i in range(len(s) - 2)) if len(s) >= 3 else frozenset({s})


def name_similarity(a: str, b: str) -> float:
    """Character-trigram Jaccard of the compact keys of two names (rule f's name test)."""
    sa, sb = make_surface(a), make_surface(b)
    return jaccard(sa.trigrams, sb.trigrams)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


@functools.lru_cache(maxsize=262144)
def _surface_trigrams(compact: str) -> frozenset[str]:
    return _trigrams(compact)


@dataclass(frozen=True, slots=True)
class Surface:
    text: str
    words: tuple[str, ...]  # raw words, case kept
    word_keys: tuple[str, ...]  # per raw word: its folded tokens joined
    tokens: tuple[str, ...]  # folded tokens (hyphen/slash parts), leading article dropped
    compact: str
    acronym: bool  # acronym-like (<= 3 words, each acronym-like)
    has_acronym: bool  # some word is acronym-like ("SMV thrombosis")
    letters: tuple[str, ...]  # acronym letters (when acronym-like)
    code: bool  # one word of letters and digits: "SF1625", "p38", "IL-6", "COVID-19"
    proper: bool  # acronym-like or capitalised single word
    signature: tuple[tuple[str, str], ...]
    numbers: tuple[int, ...]
    namespace: str = ""  # "bci" of "bci:Aspect" (every other field describes the local part)

    @property
    def trigrams(self) -> frozenset[str]:
        return _surface_trigrams(self.compact[len(self.namespace) + 1:] if self.namespace else self.compact)


def _tokens_and_compact(words: list[str] | tuple[str, ...]) -> tuple[tuple[str, ...], str]:
    start = 1 if len(words) > 1 and words[0].casefold() in _ARTICLES else 0
    tokens = tuple(t for w in words[start:] for t in _word_tokens(w))
    return tokens, re.sub(r"[^\w]|_", "", "".join(_canon_token(t) for t in tokens))


def _qualified(namespace: str, compact: str) -> str:
    return f"{namespace}:{compact}" if namespace and compact else compact


def compact_key(text: str) -> str:
    """A name's compact key (rule c) alone: what ``make_surface(text).compact`` is, cheaper."""
    namespace, local = split_namespace(_surface_text(text))
    return _qualified(namespace, _tokens_and_compact(_raw_words(local))[1])


@functools.lru_cache(maxsize=262144)
def make_surface(text: str) -> Surface:
    text = _surface_text(text)
    namespace, local = split_namespace(text)
    words = _raw_words(local)
    word_keys = tuple("".join(_word_tokens(w)) for w in words)
    tokens, compact = _tokens_and_compact(words)
    acronym = 0 < len(words) <= 3 and all(is_acronym_word(w) for w in words)
    letters = acronym_letters(" ".join(words)) if acronym else ()
    has_digit = any(c.isdigit() for c in compact)
    has_alpha = any(c.isalpha() for c in compact)
    code = len(words) == 1 and has_digit and has_alpha and len(compact) <= 14
    proper = acronym or (len(words) == 1 and words[0][:1].isupper())
    has_acronym = any(is_acronym_word(w) for w in words)
    return Surface(text, tuple(words), word_keys, tokens, _qualified(namespace, compact), acronym, has_acronym, letters,
                   code, proper, _signature(tokens), _numbers(tokens), namespace)


def surface_texts(name: str, aliases: Iterable[str] = ()) -> list[str]:
    """The texts a candidate is known by: its name, the outside and inside of a parenthesis in it,
    its aliases (blank ones left out)."""
    texts = [name]
    outer, inner = _split_parenthetical(name)
    if inner:
        texts.append(outer)
        texts += inner
    texts += list(aliases or [])
    return [t for t in texts if t and t.strip()]


def surfaces_of(c: Candidate) -> list[Surface]:
    out, seen = [], set()
    for t in surface_texts(c.name, c.aliases):
        s = make_surface(t)
        if s.compact and s.compact not in seen:
            seen.add(s.compact)
            out.append(s)
    return out

def acronym_matches(short: str, long: str) -> bool:
    """Rule d on two surfaces: is ``short`` an acronym of ``long`` (or of its differing middle), its
    letters at the starts of words or of pieces of words? (Letters from anywhere inside words,
    "DOX" = "doxorubicin", link only with closer vectors: :mod:`scholargraph.graph.resolve`.)

    >>> acronym_matches("LLMs", "large language models"), acronym_matches("LLM", "language models")
    (True, False)
    """
    return acronym_pair(make_surface(short), make_surface(long)) == AT_STARTS


def acronym_pair(a: Surface, b: Surface) -> int:
    """How ``a`` abbreviates ``b``: ``AT_STARTS``, ``INSIDE`` or 0 (:func:`acronym_words`). Only
    within one namespace ("BCI" spells nothing of "bci:Aspect")."""
    if a.numbers != b.numbers or b.acronym or a.namespace != b.namespace:
        return 0
    wa, wb = a.words, b.words
    ka, kb = a.word_keys, b.word_keys
    # Set aside the words both share at the start and at the end.
    lead = 0
    while lead < min(len(wa), len(wb)) and ka[lead] == kb[lead]:
        lead += 1
    trail = 0
    while trail < min(len(wa), len(wb)) - lead and ka[-1 - trail] == kb[-1 - trail]:
        trail += 1
    wa, wb = wa[lead : len(wa) - trail], wb[lead : len(wb) - trail]
    if not wa or not wb or len(wa) > 2:
        return 0
    return acronym_words(wa, wb)
