"""Entity-name keys: plural folding and the normalised key under which names are merged."""

from __future__ import annotations

import functools
import re
import unicodedata

__all__ = ["fold_plural", "normalise_name"]

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
