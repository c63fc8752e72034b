"""Light, dependency-free NLP helpers shared by the extractors.

Everything here is pure, deterministic and offline: regexes and small word lists, no models.

* :func:`sentence_spans` / :func:`split_sentences` -- sentence splitting that respects academic
  abbreviations ("e.g.", "i.e.", "et al.", "Fig.", "Eq.", "vs."), decimals and initials.
* :func:`tokenize_with_offsets` / :func:`tokenize` -- word tokens with character offsets.
* :data:`STOPWORDS` -- English function words plus academic connectives ("however", "et", "al").
  Content nouns such as "method" or "approach" are deliberately *not* stopwords; extractors keep
  their own lists of generic words.
* :func:`find_acronym_definitions` -- Schwartz-Hearst style "long form (SF)" / "SF (long form)"
  (defined in :mod:`.acronyms`, re-exported here with :func:`is_acronym`).
* :func:`normalise_name` -- the key under which entity names are merged.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import NamedTuple

from .acronyms import AcronymDefinition, find_acronym_definition_spans, find_acronym_definitions, is_acronym

__all__ = [
    "STOPWORDS",
    "AcronymDefinition",
    "Token",
    "find_acronym_definition_spans",
    "find_acronym_definitions",
    "fold_plural",
    "is_acronym",
    "normalise_name",
    "sentence_spans",
    "split_sentences",
    "tokenize",
    "tokenize_with_offsets",
]

# --------------------------------------------------------------------------------------------
# Stopwords
# --------------------------------------------------------------------------------------------

STOPWORDS: frozenset[str] = frozenset(
    """
    a about above across after afterwards again against all almost alone along already also although always
    am among amongst an and another any anybody anyhow anyone anything anyway anywhere are around as at
    be became because become becomes becoming been before beforehand behind being below beside besides
    between beyond both but by can cannot could did do does doing done down during each either else
    elsewhere enough etc even ever every everyone everything everywhere except few for former formerly
    from further furthermore had has have having he hence her here hereafter hereby herein hers herself
    him himself his how however i if in indeed inside instead into is it its itself just least less
    let like likewise may me meanwhile might mine more moreover most mostly much must my myself namely
    neither never nevertheless next no nobody none nonetheless noone nor not nothing now nowhere of off
    often on once one only onto or other others otherwise our ours ourselves out over own per perhaps
    quite rather really regarding same seem seemed seeming seems several she should since so some
    somebody somehow someone something sometime sometimes somewhat somewhere still such than that the
    their theirs them themselves then thence there thereafter thereby therefore therein thereof
    thereupon these they this those though through throughout thru thus to together too toward towards
    under unless unlike until up upon us very via was we well were what whatever when whence whenever
    where whereafter whereas whereby wherein whereupon wherever whether which while whither who whoever
    whole whom whose why will with within without would yet you your yours yourself yourselves
    shall should ought cannot can't won't don't doesn't isn't aren't wasn't weren't
    et al eg ie cf vs viz ca approx resp respectively i.e e.g
    two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty sixty seventy eighty
    ninety hundred thousand million billion dozen fewer
    additionally consequently finally firstly secondly thirdly lastly accordingly specifically
    particularly especially notably importantly interestingly surprisingly similarly conversely
    alternatively subsequently previously recently currently typically generally usually commonly
    widely largely mainly primarily essentially simply merely clearly obviously significantly
    due versus whilst amid far later earlier else ago away
    """.split()
)

# --------------------------------------------------------------------------------------------
# Sentence splitting
# --------------------------------------------------------------------------------------------

# Lower-cased abbreviations (without their final period) after which a period never ends a sentence.
_NO_SPLIT_ABBREVIATIONS = frozenset(
    """
    e.g eg i.e ie et al cf vs viz fig figs eq eqs ref refs sec secs sect tab tabs no nos vol vols pp p
    approx ca resp dr mr mrs ms prof st inc ltd co corp dept univ ch chap eds ed suppl var spp sp
    jan feb mar apr jun jul aug sep sept oct nov dec mt ft est al.
    """.split()
)
# Abbreviations that may end a sentence when a capitalised word follows ("... and so on, etc. The").
_SOFT_ABBREVIATIONS = frozenset({"etc", "al", "approx"})

_PARA_BREAK_RE = re.compile(r"\n[ \t\r\f\v]*\n")
# A sentence end candidate: terminal punctuation, optional closers, whitespace, then an opener.
_SENT_END_RE = re.compile(r"([.!?]+)([\"'\u201d\u2019)\]]*)(\s+)(?=[\"'\u201c\u2018(\[]?[A-Z0-9\u0391-\u03a9])")
_WORD_BEFORE_RE = re.compile(r"([A-Za-z][A-Za-z.]*)$")
_INITIALS_RE = re.compile(r"(?:^|[\s(])(?:[A-Za-z]\.){2,}$")


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
    if lw in _NO_SPLIT_ABBREVIATIONS:
        return True
    # A single capital letter: an initial ("J. Smith") -- unless it is a one-letter word like "I".
    if len(word) == 1 and word.isupper() and word not in {"I", "A"}:
        return True
    return False


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of the sentences of ``text``, whitespace-trimmed.

    Blank lines always end a sentence. A period followed by whitespace and a capital letter, digit
    or opening bracket ends a sentence unless it closes a known abbreviation ("e.g.", "et al.",
    "Fig.", "Eq.", "vs."), an initial ("J. Smith") or a dotted acronym ("U.S."). Decimals ("3.5")
    never split because no whitespace follows the period.
    """
    spans: list[tuple[int, int]] = []
    para_start = 0
    boundaries = [m for m in _PARA_BREAK_RE.finditer(text)]
    paragraphs = []
    for m in boundaries:
        paragraphs.append((para_start, m.start()))
        para_start = m.end()
    paragraphs.append((para_start, len(text)))
    for p_start, p_end in paragraphs:
        start = p_start
        segment = text[p_start:p_end]
        for m in _SENT_END_RE.finditer(segment):
            dot_pos = p_start + m.start(1) + len(m.group(1)) - 1
            nxt = p_start + m.end(3)
            if _is_non_terminal(text, dot_pos, nxt):
                continue
            end = p_start + m.end(2)
            spans.append((start, end))
            start = nxt
        spans.append((start, p_end))
    out = []
    for a, b in spans:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if b > a:
            out.append((a, b))
    return out


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` as strings (see :func:`sentence_spans`)."""
    return [text[a:b] for a, b in sentence_spans(text)]


# --------------------------------------------------------------------------------------------
# Tokenisation
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Name normalisation
# --------------------------------------------------------------------------------------------

# Words ending in "s" that are not plurals (or whose plural is the same word).
_NOT_PLURAL = frozenset(
    """
    bias class corpus series species this gas lens physics mathematics news means thesis analysis basis
    diabetes herpes rabies scabies measles mumps rickets arthritis atlas pancreas canvas alias chaos ethos
    cosmos kudos pathos thermos whereas texas christmas kansas arkansas always perhaps towards afterwards
    besides sometimes headquarters crossroads chassis apparatus status consensus focus virus bonus census
    campus nexus sinus fetus fungus syllabus thesaurus octopus genus stimulus locus nucleus radius plus
    minus bus thus various previous numerous famous analogous homogeneous heterogeneous
    """.split()
)
# "-ics" words that name a field (kept) -- other "-ics" words fold ("metrics" -> "metric").
_ICS_FIELDS = frozenset(
    """
    physics mathematics statistics biostatistics economics econometrics linguistics genetics epigenetics
    genomics proteomics metabolomics transcriptomics semantics pragmatics phonetics phonemics robotics
    electronics dynamics thermodynamics aerodynamics kinetics pharmacokinetics pharmacodynamics ethics
    graphics analytics informatics bioinformatics mechanics optics acoustics athletics politics logistics
    aesthetics cybernetics photonics forensics hydraulics ergonomics obstetrics pediatrics paediatrics
    geriatrics orthopedics orthopaedics therapeutics diagnostics psychometrics biometrics bibliometrics
    scientometrics cheminformatics hermeneutics mechatronics
    """.split()
)
_IRREGULAR_PLURALS = {
    "analyses": "analysis",
    "hypotheses": "hypothesis",
    "theses": "thesis",
    "syntheses": "synthesis",
    "diagnoses": "diagnosis",
    "prognoses": "prognosis",
    "parentheses": "parenthesis",
    "indices": "index",
    "matrices": "matrix",
    "vertices": "vertex",
    "apices": "apex",
    "cortices": "cortex",
    "appendices": "appendix",
    "simplices": "simplex",
    "criteria": "criterion",
    "phenomena": "phenomenon",
    "stimuli": "stimulus",
    "nuclei": "nucleus",
    "loci": "locus",
    "radii": "radius",
    "fungi": "fungus",
    "bacteria": "bacterium",
    "spectra": "spectrum",
    "maxima": "maximum",
    "minima": "minimum",
    "optima": "optimum",
    "corpora": "corpus",
    "genera": "genus",
    "schemata": "schema",
    "formulae": "formula",
    "biases": "bias",
    "aliases": "alias",
    "atlases": "atlas",
    "gases": "gas",
    "lenses": "lens",
    "viruses": "virus",
    "statuses": "status",
    "foci": "focus",
    "bonuses": "bonus",
    "campuses": "campus",
    "censuses": "census",
    "syllabi": "syllabus",
    "leaves": "leaf",
    "halves": "half",
    "lives": "life",
    "knives": "knife",
    "wolves": "wolf",
    "shelves": "shelf",
    "selves": "self",
    "thieves": "thief",
    "children": "child",
    "mice": "mouse",
    "women": "woman",
    "men": "man",
    "teeth": "tooth",
    "feet": "foot",
    "geese": "goose",
    "caches": "cache",
    "niches": "niche",
    "headaches": "headache",
    "avalanches": "avalanche",
    "cliches": "cliche",
    "movies": "movie",
    "cookies": "cookie",
    "calories": "calorie",
    "zombies": "zombie",
    "quizzes": "quiz",
}
_ACRONYM_PLURAL_RE = re.compile(r"^[A-Z][A-Z0-9\-]*[A-Z0-9]s$")


@functools.lru_cache(maxsize=65536)
def fold_plural(word: str) -> str:
    """Singular form of one word (case preserved except for irregular forms).

    "models" -> "model", "LLMs" -> "LLM", "strategies" -> "strategy", "analyses" -> "analysis";
    "bias", "class", "corpus", "series", "physics", "news" are left alone, as are words shorter
    than four characters (except acronym plurals such as "LMs").
    """
    if _ACRONYM_PLURAL_RE.match(word):
        return word[:-1]
    lw = word.lower()
    if lw in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[lw]
    if len(lw) < 4 or word.isupper():
        return word
    if not lw.endswith("s") or not lw[-2].isalpha():
        return word
    if lw in _NOT_PLURAL or lw in _ICS_FIELDS:
        return word
    if lw.endswith(("ss", "us", "is", "ous")):
        return word
    if lw.endswith("ies") and len(lw) > 4:
        return word[:-3] + ("Y" if word[-3].isupper() else "y")
    if lw.endswith("sses") or lw.endswith(("xes", "ches", "shes", "zzes")):
        return word[:-2]
    if lw.endswith("yses"):
        return word[:-3] + "is"
    return word[:-1]


_QUOTES = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "`": "'",
        "\u00b4": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u00ab": '"',
        "\u00bb": '"',
    }
)
_DASHES_RE = re.compile(r"[\-\u2010\u2011\u2012\u2013\u2014\u2015\u2212_]+")
_WS_RE = re.compile(r"\s+")
_EDGE_PUNCT = " \t\n.,;:!?'\"()[]{}<>*#|\\/"


@functools.lru_cache(maxsize=65536)
def normalise_name(name: str) -> str:
    """Key under which entity names are merged.

    NFKC, quotes unified, hyphens/dashes/underscores become spaces, surrounding punctuation
    stripped, whitespace collapsed, the last word plural-folded (:func:`fold_plural`) and the
    result casefolded. "Large Language Models" == "large-language model" == "large language models";
    "LLMs" == "LLM" == "llm".
    """
    text = unicodedata.normalize("NFKC", name).translate(_QUOTES)
    text = _DASHES_RE.sub(" ", text)
    text = _WS_RE.sub(" ", text).strip(_EDGE_PUNCT)
    if not text:
        return ""
    head, sep, last = text.rpartition(" ")
    last = fold_plural(last)
    return (head + sep + last).casefold()
