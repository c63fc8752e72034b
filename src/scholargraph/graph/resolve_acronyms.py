"""Acronym spelling on raw words (rule d of :mod:`scholargraph.graph.resolve`).

Is a word acronym-like ("RAG", "LLMs", "IoT", "SF1625"), which letters does it spell, and can a
long form spell them? Each content word gives its initial, and further letters only where a piece
of it starts: a hyphen/slash part, a capital inside it ("MORphological PArser"), every letter of
an acronym inside it ("TNFR-associated factor"), or a known morpheme ("deoxy|ribo|nucleic acid",
"inter|leukin", "phenyl|keto|n|uria"); a piece may also give the letter after its start ("histone
de|ac|etylase", "MeSH"). A lower-case letter of a mixed-case acronym may come from anywhere in
the word ("apoE" = "apolipoprotein E"). Short function words may give a letter or none ("IoT" =
"Internet of Things"). A short table holds the exceptions ("OWL" = "Web Ontology Language": letters
in another order; "TB" = "tuberculosis"). Letters from anywhere inside words made "ISA" "Israel",
"RDF" "Random Forest", "SSN" "Session" and "CISC" "ChannelingSpec" (issue 27 item 11): such a
spelling (:data:`INSIDE`) is still reported, for rule d to ask closer vectors ("DOX" =
"doxorubicin"), except into a compound of capitalised words or by the capitals alone. Word-level
only: the surface-level test, with shared leading/trailing words set aside, is
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
    return tuple(letters for letters, _free in acronym_spellings(word_text))


def acronym_spellings(word_text: str) -> tuple[tuple[str, frozenset[int]], ...]:
    """:func:`acronym_letters`, each with the indexes of its lower-case letters when the acronym
    mixes cases ("apoE": a, p, o; "IoT": o): those may come from inside a long-form word."""
    letters: list[str] = []
    capitals: list[str] = []
    lower: list[int] = []
    for w in word_text.split():
        core = w
        if len(core) > 2 and core.endswith("s") and (core[-2].isupper() or core[-2].isdigit()):
            core = core[:-1]
        mixed = any(c.isupper() for c in core) and any(c.islower() for c in core)
        for c in core:
            if c.isalpha():
                if mixed and c.islower():
                    lower.append(len(letters))
                letters.append(c.lower())
        capitals += [c.lower() for c in core if c.isalpha() and c.isupper()]
    out = [("".join(letters), frozenset(lower))]
    caps = "".join(capitals)
    if len(caps) >= 2 and caps != out[0][0]:
        out.append((caps, frozenset()))
    return tuple(s for s in out if s[0])


# Morphemes that start a piece of a scientific word, written before the rest ("deoxy|ribo|nucleic",
# "inter|leukin", "immuno|deficiency") or after it ("keton|uria", "deacetyl|ase"). Their boundaries are where
# an acronym may take a letter from inside a word.
_PREFIX_MORPHEMES = frozenset(
    "de deoxy oxy ribo nucleo inter intra immuno anti non di tri tetra mono poly hydro hydroxy methyl methylene "
    "ethyl acetyl amino phospho phenyl keto fluoro chloro bromo iodo nitro glyco gluco galacto lipo apo leuko "
    "lympho myelo cyto neuro cardio hepato nephro osteo thrombo hemo haemo endo exo extra ultra super sub micro "
    "macro multi bio geo photo electro thermo radio nano auto homo hetero pseudo proto semi trans pre post hyper "
    "hypo peri para meta ortho uni bi co tuber".split()
)
_SUFFIX_MORPHEMES = frozenset(
    "ase uria emia aemia itis osis oma pathy logy ology genesis lysis cyte blast uracil loader ware".split()
)

# Abbreviations that do not follow the spelling: "TB" takes the "b" of "tuberculosis" (from "tubercle
# bacillus"), "OWL" has its letters in another order (the W3C's name for the Web Ontology Language).
_IRREGULAR_STARTS = {"tuberculosis": frozenset({2})}
_IRREGULAR_FORMS = frozenset({("owl", "web ontology language")})

_SUFFIXES_REVERSED = frozenset(f[::-1] for f in _SUFFIX_MORPHEMES)


def _chain_ends(word: str, forms: frozenset[str]) -> set[int]:
    """Positions p at which ``word[:p]`` is a run of one or more ``forms`` (p < len(word))."""
    ends, frontier = set(), [0]
    while frontier:
        at = frontier.pop()
        for form in forms:
            end = at + len(form)
            if end < len(word) and word.startswith(form, at) and end not in ends:
                ends.add(end)
                frontier.append(end)
    return ends


@functools.lru_cache(maxsize=262144)
def _piece_starts(part: str) -> frozenset[int]:
    """Where a piece of one long-form word part starts, by its letters' positions (0 excluded):
    capitals inside it, every letter of an acronym, morpheme boundaries."""
    letters = "".join(c for c in part if c.isalpha())
    if is_acronym_word(part):
        return frozenset(range(1, len(letters)))
    starts = {i for i, c in enumerate(letters) if i and c.isupper()}
    low = letters.lower()
    starts |= _chain_ends(low, _PREFIX_MORPHEMES)
    starts |= {len(low) - p for p in _chain_ends(low[::-1], _SUFFIXES_REVERSED)}
    starts |= _IRREGULAR_STARTS.get(low, frozenset())
    return frozenset(p for p in starts if 0 < p < len(low))


@functools.lru_cache(maxsize=262144)
def word_parts(word: str) -> tuple[tuple[str, bool, frozenset[int]], ...]:
    """(letters, optional?, piece starts) of each hyphen/slash part of one long-form word; numbers dropped."""
    out = []
    for part in SPLIT_PARTS_RE.split(word):
        part = part.strip(EDGE_PUNCT + "+")
        if not part:
            continue
        letters = "".join(c for c in part if c.isalpha()).lower()
        if not letters:  # a number: checked through the numbers of both sides
            continue
        optional = part.lower() in _FUNCTION_WORDS or (part.islower() and len(part) <= 2)
        out.append((letters, optional, _piece_starts(part)))
    return tuple(out)


def _long_form_words(words: Sequence[str]) -> list[tuple[str, bool, frozenset[int]]] | None:
    """(letters of the word, optional?, piece starts) for each word/part of a long form; None if unusable."""
    out = [p for w in words for p in word_parts(w)]
    return out or None


def _spells(acr: str, free: frozenset[int], words: list[tuple[str, bool, frozenset[int]]], whole: bool) -> bool:
    """Can the words spell ``acr``? Each content word gives its initial and up to 3 later letters,
    each at a piece start, right after a piece start it took, or anywhere for the letters at the
    ``free`` indexes of ``acr`` (lower-case letters of a mixed-case acronym; all of them for the
    old spelling test, :data:`INSIDE`). ``whole``: the long form is one word, every letter after
    its initial must start a piece."""
    n_letters = len(acr)

    @functools.cache
    def go(wi: int, li: int) -> bool:
        if wi == len(words):
            return li == n_letters
        word, optional, _starts = words[wi]
        if optional and go(wi + 1, li):
            return True
        if li >= n_letters or word[0] != acr[li]:
            return False
        return inside(wi, li + 1, 0, 0)

    @functools.cache
    def inside(wi: int, li: int, pos: int, taken: int) -> bool:
        """Word ``wi`` gave letters up to ``acr[li]`` (excluded), the last at ``pos``."""
        if go(wi + 1, li):
            return True
        if li >= n_letters or taken >= 3:
            return False
        word, _optional, starts = words[wi]
        after_start = not whole and (pos == 0 or pos in starts)
        for p in range(pos + 1, len(word)):
            if word[p] != acr[li]:
                continue
            if (p in starts or (after_start and p == pos + 1) or li in free) and inside(wi, li + 1, p, taken + 1):
                return True
        return False

    return go(0, 0)


AT_STARTS = 2  # the acronym's letters start words or pieces of words of the long form ("DNA")
INSIDE = 1  # some come from anywhere inside a word ("DOX" = "doxorubicin", but also "ISA" / "Israel")


@functools.lru_cache(maxsize=262144)
def acronym_words(wa: tuple[str, ...], wb: tuple[str, ...]) -> int:
    """Do the acronym-like words ``wa`` abbreviate the words ``wb`` (rule d's spelling test)?
    :data:`AT_STARTS`, :data:`INSIDE` (only by letters from inside words, as Schwartz–Hearst
    allow: not for capitals alone, nor into a compound of capitalised words, "ChannelingSpec") or 0."""
    long_words = _long_form_words(wb)
    if not long_words:
        return 0
    # Cheap rejection first: the acronym's first letter starts one of the first long-form parts.
    first = next((c.lower() for c in wa[0] if c.isalpha()), "")
    if not first or not any(w[0] == first for w, _opt, _starts in long_words[:3]):
        return 0
    if not all(is_acronym_word(w) for w in wa):
        return 0
    if len(wb) == 1 and is_acronym_word(wb[0]):
        return 0
    if (" ".join(wa).lower(), " ".join(wb).lower()) in _IRREGULAR_FORMS:
        return AT_STARTS
    spellings = acronym_spellings(" ".join(wa))
    n_content = sum(1 for _w, opt, _starts in long_words if not opt)
    total = sum(len(w) for w, _opt, _starts in long_words)
    found = 0
    for n, (acr, free) in enumerate(spellings):
        if len(acr) < 2 or total <= len(acr) or n_content > len(acr):
            continue
        if len(long_words) == 1 and (len(acr) > 4 or len(long_words[0][0]) < max(6, 2 * len(acr))):
            continue  # one word abbreviated: "PKU" = "phenylketonuria", not "PR" = "Prl"
        if _spells(acr, free, long_words, whole=len(long_words) == 1):
            return AT_STARTS
        if not found and n == 0 and not any(_CAMEL_COMPOUND.fullmatch(w.strip(EDGE_PUNCT)) for w in wb):
            found = INSIDE if _spells(acr, frozenset(range(len(acr))), long_words, whole=False) else 0
    return found
