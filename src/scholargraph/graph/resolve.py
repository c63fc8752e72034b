"""Entity resolution: which entities are the same thing (paper2lkg §4.2, with name rules).

Pure algorithm, no database: the caller gives :class:`Candidate` rows (id, name, type,
description, aliases and a unit vector of "name: description") and gets back groups of ids to
merge, the id to keep first.

Pipeline
========
1. :func:`link_pairs` finds *candidate pairs* without comparing everything with everything.
   Name blocks, over every surface of a candidate (its name, each alias, and the outside and
   inside of a parenthesis in the name: "Retrieval-Augmented Generation (RAG)"):

   * the same compact key (rule c), the same set of content words (word order, rule e), a
     shared symmetric-delete key of a long word (one typo apart, rule f);
   * a code or proper name of one or two words against every name that starts with it
     ("SF1625" / "SF1625 Calculus in One Variable", rule e);
   * acronym keys "words before#letters#words after": "LLMs" and "large language models" both
     give ``#llm#``, "SMV thrombosis" and "superior mesenteric vein thrombosis" both give
     ``#smv#thrombosis`` (rule d);

   plus the top-``k`` vector neighbours of every candidate (cosine ≥ the lower of the two
   thresholds; below ``threshold`` only pairs with an acronym-like word and the same first
   letter are kept, as every other low-cosine rule is covered by a name block): exact
   block-wise matrix products up to ``exact_limit`` vectors, above that an inverted-file index
   (2·√n k-means cells, each vector filed under its ``nprobe`` nearest cells, top-k inside each
   cell). 100k candidates take about 20 s on two busy cores
   (``python -m benchmarks.eval_resolution --scale 100000``).

   Each pair is then *linked* when the rules below say so.

2. :func:`clique_partition` groups linked candidates the paper2lkg way: a connected component
   is not enough (A~B and B~C do not make A~C), so the maximum clique of each component is
   taken (Bron–Kerbosch, :func:`networkx.find_cliques`), removed, and the rest partitioned
   again. Only groups of two or more are returned.

3. :func:`resolve` = both, with every group ordered so that its first id is the one to keep:
   a full name before an acronym or code ("Retrieval-Augmented Generation" before "RAG",
   "SF1625 Calculus in One Variable" before "SF1625"), then the candidate with the most
   aliases, then one with a description, then the smallest id.

Rules (a pair of candidates is linked when ANY surface pair passes one of rules c–f, subject
to a and b)
==========================================================================================
a. **Type compatibility.** Types are mapped to classes (Method = Model = Tool = Algorithm =
   System ...; Dataset = Material = Corpus; Gene = Protein = "Gene/Protein"; Disease =
   Phenotype; Drug = Chemical = "Drug/Compound"; Genetic Variation = Sequence Variant; ...).
   Same class, or either type empty / a catch-all ("Concept", "Knowledge Concept",
   "OtherScientificTerm", "Generic", "Other", "Topic") → compatible. Everything else — Gene vs
   Genetic Variation, Disease vs Gene, Task vs Method — never merges. Unknown type names are
   compatible only with themselves (case/punctuation-insensitive) and the catch-alls.
b. **Variants never merge.** Each surface has a *variant signature*: its numbers (digit runs,
   roman numerals "II"/"IV"/"V" as standalone tokens), single letters next to a number or
   standing alone ("IL1A", "type 2B", "BCI-O"; Greek letter names count as letters: "HNF4alpha" =
   "HNF4A"), and size/flavour words ("base", "large", "XL", "mini", "micro", "macro", "turbo",
   ...). Surfaces whose signatures differ never link by rules c/e/f: "GPT-3"/"GPT-4",
   "ResNet-50"/"ResNet-101", "IL1A"/"IL1B", "SF1625"/"SF1626", "RISC"/"RISC-V",
   "Transformer"/"Transformer-XL", "BERT-base"/"BERT-large". Rule d compares numbers only
   (the letters of an acronym are spelt out by its long form).
c. **Same key.** The same compact key — every word plural-folded
   (:func:`~scholargraph.extract.text_utils.fold_plural`), case-folded, leading article,
   possessive "'s", hyphens, spaces and punctuation dropped, Greek letter names and roman
   numerals of two or more letters written as a letter/number: "LLM" = "LLMs", "ADAM-10" =
   "ADAM10", "Parkinson's disease" = "Parkinson disease", "beta-catenin" = "b-catenin",
   "type II diabetes" = "type 2 diabetes". Linked at any cosine, except that two
   acronym-like surfaces ("PD", "PD") also need cosine ≥ ``alias_threshold``: a short acronym is
   often two different things ("Parkinson's disease" / "panic disorder").
d. **Acronyms.** One surface is acronym-like ("RAG", "LLMs", "IoT", "nDCG", "apoE", "Dll4", "MDR
   TB") and the other spells it out: every content word gives its first letter and may give up
   to three later letters of itself (Schwartz–Hearst style: "HDAC" = "histone deacetylase",
   "MeSH" = "Medical Subject Headings"); hyphen/slash parts are words ("Retrieval-Augmented
   Generation"); short lower-case function words ("of", "and", "der", "von") may give a letter
   or none ("IoT" = "Internet of Things", "PDB" = "Paget's disease of bone"); a plural "s" on the
   acronym is ignored ("LLMs" = "large language models"). Words both surfaces share at the
   start or end are set aside first ("SMV thrombosis" = "superior mesenteric vein thrombosis",
   "type 2B VWD" = "type 2B von Willebrand disease"). Needs cosine ≥ ``alias_threshold``.
e. **Code / proper-name prefix.** The shorter surface is the whole of the first word(s) of the
   longer one and is
   * a code (letters and digits: "SF1625", "p38", "COVID-19") → linked unless the rest of the
     longer name turns it into something else ("receptor", "inhibitor", "mutation",
     "deficiency", "pathway", ...: "IL-6" ≠ "IL-6 receptor");
   * an acronym or capitalised name ("JAVELIN", "Dau", "RANSAC") and the rest is only generic
     head nouns ("system", "model", "measure", "technique", "framework", ...).
   Needs cosine ≥ ``alias_threshold``.
   Any other containment is **not** a link: modifiers in front of a head make a narrower
   thing ("congenital hypothyroidism" ⊂ "hypothyroidism", "large language model" ⊂ "language
   model", "non-Hodgkin lymphoma" ≠ "Hodgkin lymphoma"), and words added after a common name
   make a different one ("knowledge graph construction pipeline"), except when the shorter
   name's words are spread through the longer one (neither a prefix nor a suffix) and the
   vectors agree (cosine ≥ ``threshold``).
   The same content words in another order are the same name ("predictions of intelligibility"
   = "intelligibility prediction"; cosine ≥ ``alias_threshold``).
f. **Similar names, similar meaning.** Neither surface's words contain the other's, and either
   * all words equal but one, which is a single typo (one substitution, insertion, deletion or
     swap, not in its last two letters, in a word of ≥ 9 letters without digits:
     "von Willerand factor", "spiranolactone") — cosine ≥ ``alias_threshold``; or
   * cosine ≥ ``threshold`` AND character-trigram Jaccard of the compact keys ≥
     ``name_threshold`` ("hash-tag recommendation task" / "hashtag recommendation problem").
   A close vector alone never merges: "BERT"/"RoBERTa" have similar descriptions but trigram
   Jaccard 0.2.

A missing vector (``None``) counts as agreement for the ``alias_threshold`` rules and as
disagreement for the ``threshold`` ones (f's trigram test and spread-out containment). So does
a pair of candidates with the same description text (two names from one sentence, as the
offline extractor writes them): their vectors differ only by the names, so they are no
evidence either way — without this, "tetrahydrocortisol" and "tetrahydrocortisone" from one
sentence score 0.996 and merge by rule f.

Thresholds
==========
``alias_threshold`` (0.3) is a veto, not evidence: the name already says "same", the vectors
must only not say "unrelated". With the local MiniLM model over "name: <sentence>", mentions
from unrelated passages score 0.08 ± 0.12 (95th percentile 0.30) on the dev pairs of
``benchmarks/data/alias_pairs.jsonl``, so 0.3 rejects ~95% of unrelated contexts — "PD"
(Parkinson's disease) vs "PD" (panic disorder) scores 0.26. ``threshold`` (0.9) guards the
weak name evidence of rule f's trigram test and of spread-out containment; with sentence
descriptions it rarely passes for true aliases (dev pairs: mean cosine 0.60 for aliases, 0.63
for near-misses), so those rules mostly matter with LLM-written entity descriptions (see
``benchmarks/eval_resolution.py``).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from ..extract.text_utils import STOPWORDS, fold_plural

__all__ = [
    "Candidate",
    "ResolutionSettings",
    "acronym_matches",
    "clique_partition",
    "explain",
    "link_pairs",
    "name_similarity",
    "resolve",
    "type_class",
    "types_compatible",
]


@dataclass
class Candidate:
    """One entity (or mention) to resolve. ``vector``: the caller's embedding of
    "name: description" (normalised here); ``None`` = no vector evidence."""

    id: str
    name: str
    type: str = ""
    description: str = ""
    aliases: list[str] = field(default_factory=list)
    vector: np.ndarray | None = None  # unit vector of "name: description" (or similar)


@dataclass
class ResolutionSettings:
    """Tunable thresholds (see "Thresholds" in the module docstring) and search sizes."""

    threshold: float = 0.9  # cosine for rule f (similar names) and spread-out containment
    name_threshold: float = 0.5  # character-trigram Jaccard of compact names for rule f
    alias_threshold: float = 0.3  # cosine for acronyms, code/proper-name prefixes, typos, same-key acronyms
    max_group: int = 50  # largest group returned; a bigger clique is cut
    k: int = 10  # vector neighbours per candidate
    exact_limit: int = 10000  # above this many vectors, neighbours come from an inverted-file index
    nprobe: int = 2  # cells each vector is filed under (inverted-file index)
    block_limit: int = 64  # name blocks larger than this are only paired through their short names


# --------------------------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------------------------

_WILDCARD_TYPES = frozenset(
    {"", "concept", "knowledgeconcept", "otherscientificterm", "other", "generic", "term", "entity", "unknown",
     "topic", "misc", "thing", "none"}
)
_TYPE_CLASSES: dict[str, str] = {}
for _cls, _names in {
    "method": "method model tool algorithm software system technique framework architecture approach library "
              "toolkit program platform pipeline",
    "task": "task problem application researchproblem",
    "dataset": "dataset material corpus data benchmark database resource",
    "metric": "metric measure evaluationmetric",
    "gene": "gene protein geneprotein geneorgeneproduct geneproduct proteinorgene enzyme",
    "variant": "geneticvariation sequencevariant variant mutation snp variation",
    "disease": "disease diseaseorphenotypicfeature phenotype disorder condition symptom",
    "chemical": "chemical chemicalentity drug compound drugcompound chemicalcompound molecule",
    "organism": "organism organismtaxon species taxon",
    "cell": "cellline celltype cell",
    "anatomy": "anatomy tissue organ",
    "pathway": "pathway",
    "person": "person author teacher researcher",
    "organization": "organization organisation institution university company",
    "paper": "paper publication literature article",
}.items():
    for _n in _names.split():
        _TYPE_CLASSES[_n] = _cls
# Distinct classes that still merge with each other (kept small on purpose).
_COMPATIBLE_CLASSES: frozenset[frozenset[str]] = frozenset()


@functools.lru_cache(maxsize=4096)
def type_class(type_name: str) -> str:
    """Class of a type name: "*" for catch-alls, a known class, or the squashed name itself."""
    squashed = re.sub(r"[^a-z0-9]", "", unicodedata.normalize("NFKC", type_name or "").casefold())
    if squashed in _WILDCARD_TYPES:
        return "*"
    if squashed in _TYPE_CLASSES:
        return _TYPE_CLASSES[squashed]
    if squashed.endswith("s") and squashed[:-1] in _TYPE_CLASSES:
        return _TYPE_CLASSES[squashed[:-1]]
    return squashed


def types_compatible(a: str, b: str) -> bool:
    """Rule a: may entities of these two types be the same thing?"""
    ca, cb = type_class(a), type_class(b)
    return ca == "*" or cb == "*" or ca == cb or frozenset((ca, cb)) in _COMPATIBLE_CLASSES


# --------------------------------------------------------------------------------------------
# Surfaces: words, tokens, keys, signatures
# --------------------------------------------------------------------------------------------

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "`": "'", "\u00b4": "'", "\u201c": '"', "\u201d": '"'})
_SPLIT_PARTS = re.compile(r"[-\u2010\u2011\u2012\u2013\u2014\u2212_/]+")
_EDGE = " \t.,;:!?'\"()[]{}<>*#|\\"
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
# Lower-case words that may or may not give a letter to an acronym.
_FUNCTION_WORDS = frozenset({"of", "and", "the", "for", "in", "on", "to", "with", "by", "a", "an", "at", "from",
                             "de", "der", "den", "von", "van", "la", "le", "du", "&", "or", "via", "into"})
# Head nouns that add nothing to a proper name: "JAVELIN system" = "JAVELIN".
_GENERIC_HEADS = frozenset(
    "system method model approach technique algorithm framework tool toolkit library package software "
    "architecture measure metric score dataset corpus benchmark database formalism paradigm scheme procedure "
    "program platform pipeline project module gene protein language ontology network task problem service "
    "api engine parser classifier tagger index course".split()
)
# Words after a code that make it something else: "IL-6 receptor" is not "IL-6".
_HEAD_CHANGERS = frozenset(
    "receptor antagonist agonist inhibitor antibody ligand mutation mutant variant deficiency pathway signaling "
    "signalling expression level activity knockout domain family subunit binding promoter allele polymorphism "
    "loss gain haplotype transcript isoform score error rate".split()
)


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
        inner_acr = 0 < len(inner.split()) <= 3 and all(_is_acronym_word(w) for w in inner.split())
        if inner_acr or _acronym_words(tuple(outer.split()), tuple(_raw_words(inner))):
            alias = [inner]  # "Long Form (LF)" or "LF (Long Form)"; not "SF1625 (5 credits)"
    return (outer or name), alias


def _raw_words(text: str) -> list[str]:
    """Whitespace words, possessive "'s" and edge punctuation dropped (case kept)."""
    out = []
    for w in text.split():
        w = w.strip(_EDGE)
        if w.endswith("'s"):
            w = w[:-2]
        w = w.strip(_EDGE)
        if w:
            out.append(w)
    return out


@functools.lru_cache(maxsize=262144)
def _word_tokens(word: str) -> tuple[str, ...]:
    """Folded tokens of one whitespace word: hyphen/slash parts, plural-folded, case-folded."""
    out = []
    for part in _SPLIT_PARTS.split(word):
        part = part.strip(_EDGE + "+")
        if not part:
            continue
        out.append(fold_plural(part).casefold())
    return tuple(out)


@functools.lru_cache(maxsize=262144)
def _is_acronym_word(word: str) -> bool:
    """"RAG", "LLMs", "IoT", "nDCG", "apoE", "Dll4", "TF-IDF", "5-FU", "SF1625" (not "Transformer")."""
    if not 2 <= len(word) <= 12 or not any(c.isalpha() for c in word):
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


def _acronym_letters(word_text: str) -> tuple[str, ...]:
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
    sa, sb = _surface(a), _surface(b)
    return _jaccard(sa.trigrams, sb.trigrams)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


@functools.lru_cache(maxsize=262144)
def _surface_trigrams(compact: str) -> frozenset[str]:
    return _trigrams(compact)


@dataclass(frozen=True, slots=True)
class _Surface:
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

    @property
    def trigrams(self) -> frozenset[str]:
        return _surface_trigrams(self.compact)


@functools.lru_cache(maxsize=262144)
def _surface(text: str) -> _Surface:
    text = _surface_text(text)
    words = _raw_words(text)
    word_keys = tuple("".join(_word_tokens(w)) for w in words)
    start = 1 if len(words) > 1 and words[0].casefold() in _ARTICLES else 0
    tokens = tuple(t for w in words[start:] for t in _word_tokens(w))
    compact = re.sub(r"[^\w]|_", "", "".join(_canon_token(t) for t in tokens))
    acronym = 0 < len(words) <= 3 and all(_is_acronym_word(w) for w in words)
    letters = _acronym_letters(" ".join(words)) if acronym else ()
    has_digit = any(c.isdigit() for c in compact)
    has_alpha = any(c.isalpha() for c in compact)
    code = len(words) == 1 and has_digit and has_alpha and len(compact) <= 14
    proper = acronym or (len(words) == 1 and words[0][:1].isupper())
    has_acronym = any(_is_acronym_word(w) for w in words)
    return _Surface(text, tuple(words), word_keys, tokens, compact, acronym, has_acronym, letters, code, proper,
                    _signature(tokens), _numbers(tokens))


def _surfaces(c: Candidate) -> list[_Surface]:
    texts = [c.name]
    outer, inner = _split_parenthetical(c.name)
    if inner:
        texts.append(outer)
        texts += inner
    texts += list(c.aliases or [])
    out, seen = [], set()
    for t in texts:
        if not t or not t.strip():
            continue
        s = _surface(t)
        if s.compact and s.compact not in seen:
            seen.add(s.compact)
            out.append(s)
    return out


# --------------------------------------------------------------------------------------------
# Acronyms
# --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=262144)
def _word_parts(word: str) -> tuple[tuple[str, bool], ...]:
    """(letters, optional?) of each hyphen/slash part of one long-form word; numbers dropped."""
    out = []
    for part in _SPLIT_PARTS.split(word):
        part = part.strip(_EDGE + "+")
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
    out = [p for w in words for p in _word_parts(w)]
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


def acronym_matches(short: str, long: str) -> bool:
    """Rule d on two surfaces: is ``short`` an acronym of ``long`` (or of its differing middle)?

    >>> acronym_matches("LLMs", "large language models"), acronym_matches("LLM", "language models")
    (True, False)
    """
    return _acronym_pair(_surface(short), _surface(long))


def _acronym_pair(a: _Surface, b: _Surface) -> bool:
    if a.numbers != b.numbers or b.acronym:
        return False
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
        return False
    return _acronym_words(wa, wb)


@functools.lru_cache(maxsize=262144)
def _acronym_words(wa: tuple[str, ...], wb: tuple[str, ...]) -> bool:
    """Do the acronym-like words ``wa`` abbreviate the words ``wb`` (rule d's spelling test)?"""
    long_words = _long_form_words(wb)
    if not long_words:
        return False
    # Cheap rejection first: the acronym's first letter starts one of the first long-form parts.
    first = next((c.lower() for c in wa[0] if c.isalpha()), "")
    if not first or not any(w[0] == first for w, _opt in long_words[:3]):
        return False
    if not all(_is_acronym_word(w) for w in wa):
        return False
    if len(wb) == 1 and _is_acronym_word(wb[0]):
        return False
    letters = _acronym_letters(" ".join(wa))
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


# --------------------------------------------------------------------------------------------
# Pair rules
# --------------------------------------------------------------------------------------------

_NEVER = 2.0  # a cosine no pair reaches


def _pair_requirement(a: _Surface, b: _Surface, settings: ResolutionSettings) -> float:
    """Lowest cosine at which surfaces ``a`` and ``b`` link (``_NEVER`` when no rule applies)."""
    if a.compact == b.compact:  # rule c
        return settings.alias_threshold if (a.acronym and b.acronym) else -1.0
    # Rule d: acronyms (numbers only: its letters are spelt out).
    if a.has_acronym and not b.acronym and _acronym_pair(a, b):
        return settings.alias_threshold
    if b.has_acronym and not a.acronym and _acronym_pair(b, a):
        return settings.alias_threshold
    if a.signature != b.signature:  # rule b
        return _NEVER
    ta, tb = a.tokens, b.tokens
    if not ta or not tb:
        return _NEVER
    content_a, content_b = set(ta) - STOPWORDS, set(tb) - STOPWORDS
    if content_a == content_b and len(content_a) >= 2:  # word order: "X of Y" = "Y X"
        return settings.alias_threshold
    short, long = (a, b) if len(ta) <= len(tb) else (b, a)
    ts, tl = short.tokens, long.tokens
    if set(ts) <= set(tl):
        if tl[: len(ts)] == ts:  # rule e: prefix
            rest = tl[len(ts):]
            if short.code and not any(t in _HEAD_CHANGERS for t in rest):
                return settings.alias_threshold
            if short.proper and rest and all(t in _GENERIC_HEADS for t in rest):
                return settings.alias_threshold
            return _NEVER
        if tl[-len(ts):] == ts:  # modifiers in front: a narrower thing
            return _NEVER
        return settings.threshold  # words spread through the longer name
    if set(tl) <= set(ts):
        return _NEVER
    if _typo_pair(ta, tb):  # rule f: one slip of the pen in one long word
        return settings.alias_threshold
    if _jaccard(a.trigrams, b.trigrams) >= settings.name_threshold:  # rule f
        return settings.threshold
    return _NEVER


_TYPO_MIN_LEN = 9


def _typo_pair(ta: Sequence[str], tb: Sequence[str]) -> bool:
    """Same words but one, which differs by a single edit away from its last two letters.

    "von Willebrand factor" / "von Willerand factor", "spironolactone" / "spiranolactone". The
    word must have >= 9 letters and no digits: short words one letter apart are often different
    things ("cytosine" / "cytokine"), and so are different endings ("cortisol" / "cortisone").
    """
    if len(ta) != len(tb):
        return False
    diff = [(x, y) for x, y in zip(ta, tb, strict=True) if x != y]
    if len(diff) != 1:
        return False
    x, y = diff[0]
    if min(len(x), len(y)) < _TYPO_MIN_LEN or not (x.isalpha() and y.isalpha()):
        return False
    if len(x) > len(y):
        x, y = y, x
    i = 0
    while i < len(x) and x[i] == y[i]:
        i += 1
    if i >= len(y) - 2:
        return False
    if len(x) == len(y):
        if x[i + 1 :] == y[i + 1 :]:  # substitution
            return True
        return i + 1 < len(x) and x[i] == y[i + 1] and x[i + 1] == y[i] and x[i + 2 :] == y[i + 2 :]  # transposition
    return len(y) == len(x) + 1 and x[i:] == y[i + 1 :]  # insertion


def _cosine(a: Candidate, b: Candidate) -> float | None:
    if a.vector is None or b.vector is None:
        return None
    va, vb = np.asarray(a.vector, dtype=np.float32).ravel(), np.asarray(b.vector, dtype=np.float32).ravel()
    norm = float(np.linalg.norm(va) * np.linalg.norm(vb))
    return float(np.dot(va, vb)) / norm if norm > 0 else 0.0


def _linked(ca: Candidate, cb: Candidate, sa: list[_Surface], sb: list[_Surface], settings: ResolutionSettings,
            cos: float | None) -> bool:
    if not types_compatible(ca.type, cb.type):
        return False
    need = min((_pair_requirement(x, y, settings) for x in sa for y in sb), default=_NEVER)
    if need >= _NEVER:
        return False
    if cos is None:
        return need <= settings.alias_threshold
    return cos >= need


def explain(a: Candidate, b: Candidate, settings: ResolutionSettings | None = None) -> dict:
    """Why two candidates link or not (rules only; candidate-pair blocking is not involved).

    Types, the cosine, whether it counts (not when both have the same description), the lowest
    cosine a rule asks for, the best name similarity, and the verdict.
    """
    settings = settings or ResolutionSettings()
    sa, sb = _surfaces(a), _surfaces(b)
    need = min((_pair_requirement(x, y, settings) for x in sa for y in sb), default=_NEVER)
    cos = _cosine(a, b)
    same = _same_context(a, b)
    return {
        "types_compatible": types_compatible(a.type, b.type),
        "cosine": cos,
        "same_description": same,
        "required_cosine": None if need >= _NEVER else need,
        "name_similarity": max((_jaccard(x.trigrams, y.trigrams) for x in sa for y in sb), default=0.0),
        "linked": _linked(a, b, sa, sb, settings, None if same else cos),
    }


# --------------------------------------------------------------------------------------------
# Candidate pairs: name blocks + vector neighbours
# --------------------------------------------------------------------------------------------


_MAX_SPAN_WORDS = 8


def _acronym_keys(s: _Surface) -> tuple[list[str], list[str]]:
    """Block keys for rule d: (keys as an abbreviation, keys as a long form).

    Both have the form "words before#letters#words after": "SMV thrombosis" gives "#smv#thrombosis"
    and "superior mesenteric vein thrombosis" gives the same for the span of its first three
    words (initials with and without function words). Letters inside words ("HDAC" = "histone
    deacetylase") have no key: such pairs come from the vector neighbours.
    """
    words, keys = s.words, s.word_keys
    short: list[str] = []
    long: list[str] = []
    if not words or len(words) > _MAX_SPAN_WORDS:
        return short, long
    is_acr = [_is_acronym_word(w) for w in words]
    for i in range(len(words)):
        for j in range(i + 1, min(len(words), i + 2) + 1):
            if all(is_acr[i:j]):
                for letters in _acronym_letters(" ".join(words[i:j])):
                    short.append(f"{'|'.join(keys[:i])}#{letters}#{'|'.join(keys[j:])}")
    if s.acronym:
        return short, long
    parts = [_word_parts(w) for w in words]
    full_i = ["".join(p[0][0] for p in ps) for ps in parts]
    content_i = ["".join(p[0][0] for p in ps if not p[1]) for ps in parts]
    n_parts = [len(ps) for ps in parts]
    for i in range(len(words)):
        before = "|".join(keys[:i])
        full, content, count = "", "", 0
        for j in range(i + 1, len(words) + 1):
            full += full_i[j - 1]
            content += content_i[j - 1]
            count += n_parts[j - 1]
            if count < 2:
                continue
            after = "|".join(keys[j:])
            long.append(f"{before}#{full}#{after}")
            if content != full and len(content) >= 2:
                long.append(f"{before}#{content}#{after}")
    return short, long


def _typo_keys(tokens: Sequence[str]) -> list[str]:
    """Symmetric-delete keys (SymSpell): two names one typo apart in one long word share one."""
    if len(tokens) > 4:
        return []
    keys = []
    for idx, tok in enumerate(tokens):
        if len(tok) < _TYPO_MIN_LEN - 1 or not tok.isalpha():
            continue
        rest = " ".join(tokens[:idx]) + "|" + " ".join(tokens[idx + 1 :])
        variants = {tok} | {tok[:i] + tok[i + 1 :] for i in range(len(tok))}
        keys += [f"~{idx}|{v}|{rest}" for v in variants]
    return keys


def _name_blocks(surfaces: list[list[_Surface]], settings: ResolutionSettings) -> set[tuple[int, int]]:
    by_key: dict[str, list[int]] = defaultdict(list)
    by_prefix: dict[tuple[str, ...], list[int]] = defaultdict(list)
    shorts: list[tuple[int, tuple[str, ...]]] = []
    acr_short: dict[str, list[int]] = defaultdict(list)
    acr_long: dict[str, list[int]] = defaultdict(list)
    by_bag: dict[str, list[int]] = defaultdict(list)
    for i, ss in enumerate(surfaces):
        for s in ss:
            by_key[s.compact].append(i)
            content = sorted(set(s.tokens) - STOPWORDS)
            if len(content) >= 2:
                by_bag[" ".join(content)].append(i)
            for key in _typo_keys(s.tokens):
                by_bag[key].append(i)
            for m in range(1, min(3, len(s.tokens)) + 1):
                by_prefix[s.tokens[:m]].append(i)
            if 0 < len(s.tokens) <= 3 and len(s.word_keys) <= 2 and (s.code or s.proper):
                shorts.append((i, s.tokens))
            short_keys, long_keys = _acronym_keys(s)
            for key in short_keys:
                acr_short[key].append(i)
            for key in long_keys:
                acr_long[key].append(i)
    pairs: set[tuple[int, int]] = set()

    def add(i: int, j: int) -> None:
        if i != j:
            pairs.add((i, j) if i < j else (j, i))

    for members in [*by_key.values(), *by_bag.values()]:
        members = sorted(set(members))
        # Same compact key: all pairs; a huge block (thousands of "model"s) in chunks of max_group,
        # the most a group may hold anyway.
        chunk = len(members) if len(members) <= settings.block_limit else max(2, settings.max_group)
        for start in range(0, len(members), chunk):
            part = members[start : start + chunk]
            for x in range(len(part)):
                for y in range(x + 1, len(part)):
                    add(part[x], part[y])
    # Rule e: a code or proper name of one or two words against every name that starts with it.
    for i, prefix in shorts:
        for j in by_prefix.get(prefix, [])[:20000]:
            add(i, j)
    for letters, abbreviations in acr_short.items():
        longs = sorted(set(acr_long.get(letters, ())))
        if not longs:
            continue
        for i in sorted(set(abbreviations))[: settings.block_limit * 4]:
            for j in longs[: settings.block_limit * 16]:
                add(i, j)
    return pairs


def _vector_neighbours(vectors: np.ndarray, k: int, floor: float, settings: ResolutionSettings
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(i, j, cosine) with i < j: j among i's top-k neighbours (or i among j's), cosine >= floor."""
    n = len(vectors)
    empty = np.zeros(0, dtype=np.int64)
    if n < 2 or k <= 0:
        return empty, empty, np.zeros(0, dtype=np.float32)
    rows_all: list[np.ndarray] = []
    cols_all: list[np.ndarray] = []
    vals_all: list[np.ndarray] = []

    def top_k(block: np.ndarray, row_ids: np.ndarray, col_ids: np.ndarray) -> None:
        kk = min(k, block.shape[1] - 1)
        if kk <= 0:
            return
        idx = np.argpartition(-block, kk - 1, axis=1)[:, :kk]
        vals = np.take_along_axis(block, idx, axis=1)
        r, c = np.nonzero(vals >= floor)
        rows_all.append(row_ids[r])
        cols_all.append(col_ids[idx[r, c]])
        vals_all.append(vals[r, c])

    if n <= settings.exact_limit:
        step = max(1, min(1024, 2**24 // n))
        all_ids = np.arange(n)
        for start in range(0, n, step):
            block = vectors[start : start + step] @ vectors.T
            local = np.arange(block.shape[0])
            block[local, start + local] = -np.inf
            top_k(block, all_ids[start : start + step], all_ids)
    else:
        for members in _ivf_cells(vectors, settings):
            if len(members) < 2:
                continue
            sub = vectors[members]
            for start in range(0, len(members), 2048):
                block = sub[start : start + 2048] @ sub.T
                local = np.arange(block.shape[0])
                block[local, start + local] = -np.inf
                top_k(block, members[start : start + 2048], members)
    if not rows_all:
        return empty, empty, np.zeros(0, dtype=np.float32)
    rows, cols, vals = np.concatenate(rows_all), np.concatenate(cols_all), np.concatenate(vals_all)
    # A row may have neighbours from several cells: deduplicate, keep its k best overall.
    code, first = np.unique(rows.astype(np.int64) * n + cols, return_index=True)
    rows, cols, vals = rows[first], cols[first], vals[first]
    order = np.lexsort((cols, -vals, rows))
    rows, cols, vals = rows[order], cols[order], vals[order]
    rank = np.arange(len(rows)) - np.searchsorted(rows, rows, side="left")
    keep = rank < k
    rows, cols, vals = rows[keep], cols[keep], vals[keep]
    lo, hi = np.minimum(rows, cols), np.maximum(rows, cols)
    code, first = np.unique(lo.astype(np.int64) * n + hi, return_index=True)
    return lo[first], hi[first], vals[first]


def _ivf_cells(vectors: np.ndarray, settings: ResolutionSettings) -> list[np.ndarray]:
    """Inverted-file cells: k-means (seeded, deterministic) on a sample, each vector in nprobe cells."""
    n = len(vectors)
    # 2*sqrt(n) cells balance filing (n x cells) against searching (cells x cell_size^2).
    n_cells = max(2, int(2 * np.sqrt(n)))
    rng = np.random.default_rng(0)
    sample = vectors[rng.choice(n, size=min(n, 10 * n_cells), replace=False)]
    centroids = sample[rng.choice(len(sample), size=n_cells, replace=False)].copy()
    for _ in range(6):
        assign = np.argmax(sample @ centroids.T, axis=1)
        for c in range(n_cells):
            pts = sample[assign == c]
            if len(pts):
                centre = pts.mean(axis=0)
                norm = np.linalg.norm(centre)
                centroids[c] = centre / norm if norm > 0 else centre
    nprobe = max(1, min(settings.nprobe, n_cells))
    cells: list[list[np.ndarray]] = [[] for _ in range(n_cells)]
    for start in range(0, n, 8192):
        scores = vectors[start : start + 8192] @ centroids.T
        top = np.argpartition(-scores, nprobe - 1, axis=1)[:, :nprobe]
        for p in range(nprobe):
            col = top[:, p]
            order = np.argsort(col, kind="stable")
            bounds = np.searchsorted(col[order], np.arange(n_cells + 1))
            for c in range(n_cells):
                if bounds[c + 1] > bounds[c]:
                    cells[c].append(order[bounds[c] : bounds[c + 1]] + start)
    return [np.unique(np.concatenate(parts)) for parts in cells if parts]


def link_pairs(cands: Sequence[Candidate], settings: ResolutionSettings | None = None) -> list[tuple[str, str]]:
    """Linked id pairs ``(a, b)``, ``a`` before ``b`` in input order, sorted by that order.

    Candidate pairs come from name blocks and vector neighbours (see the module docstring);
    each is then checked against the rules.
    """
    settings = settings or ResolutionSettings()
    n = len(cands)
    if n < 2:
        return []
    surfaces = [_surfaces(c) for c in cands]
    name_pairs = _name_blocks(surfaces, settings)

    has_vec = np.array([c.vector is not None for c in cands], dtype=bool)
    mat: np.ndarray | None = None
    codes = [np.fromiter((i * n + j for i, j in name_pairs), dtype=np.int64, count=len(name_pairs))]
    if has_vec.sum() >= 2:
        idx = np.flatnonzero(has_vec)
        dim = int(np.asarray(cands[idx[0]].vector).size)
        mat = np.zeros((n, dim), dtype=np.float32)
        for i in idx.tolist():
            mat[i] = np.asarray(cands[i].vector, dtype=np.float32).reshape(-1)
        norms = np.linalg.norm(mat, axis=1, keepdims=True)
        mat /= np.where(norms > 0, norms, 1.0)
        floor = min(settings.threshold, settings.alias_threshold)
        lo, hi, vals = _vector_neighbours(mat[idx], settings.k, floor, settings)
        lo, hi = idx[lo], idx[hi]
        # Below `threshold` the name blocks already hold every pair that rules c, e and f's typo
        # test can link; what is left is rule d: an acronym-like word on a side, same first letter.
        acr = np.array([any(x.has_acronym for x in ss) for ss in surfaces], dtype=bool)
        first = np.array([ord(ss[0].compact[0]) if ss and ss[0].compact else -1 for ss in surfaces])
        keep = (vals >= settings.threshold) | ((acr[lo] | acr[hi]) & (first[lo] == first[hi]))
        codes.append(lo[keep].astype(np.int64) * n + hi[keep])
    all_codes = np.unique(np.concatenate(codes))
    rows, cols = all_codes // n, all_codes % n
    cos = np.full(len(all_codes), np.nan, dtype=np.float32)
    if mat is not None:
        both = has_vec[rows] & has_vec[cols]
        sel = np.flatnonzero(both)
        for start in range(0, len(sel), 65536):
            part = sel[start : start + 65536]
            cos[part] = np.einsum("ij,ij->i", mat[rows[part]], mat[cols[part]])

    links = []
    for i, j, c in zip(rows.tolist(), cols.tolist(), cos.tolist(), strict=True):
        value = None if c != c or _same_context(cands[i], cands[j]) else c
        if _linked(cands[i], cands[j], surfaces[i], surfaces[j], settings, value):
            links.append((cands[i].id, cands[j].id))
    return links


def _same_context(a: Candidate, b: Candidate) -> bool:
    """Both described by the same text (two names in one sentence): the vectors then differ
    only by the names and say nothing about whether the two are one thing."""
    da, db = (a.description or "").split(), (b.description or "").split()
    return bool(da) and da == db


# --------------------------------------------------------------------------------------------
# Clique partition
# --------------------------------------------------------------------------------------------

_MAX_CLIQUES_SCANNED = 20000


def clique_partition(nodes: Sequence[str], links: Iterable[tuple[str, str]], max_group: int = 50
                     ) -> list[list[str]]:
    """Greedy maximum-clique partition (paper2lkg §4.2): groups of size >= 2, deterministic.

    Per connected component: take a maximum clique (Bron–Kerbosch via
    :func:`networkx.find_cliques`; ties -> the clique whose members come first in ``nodes``),
    cut it to ``max_group`` members, remove it, repeat on what is left. Members keep the order of
    ``nodes``; groups are ordered by their first member. Very dense components scan at most
    20,000 maximal cliques per step (the best found is taken). Links naming unknown nodes are
    ignored.
    """
    order = {node: i for i, node in enumerate(nodes)}
    adj: dict[int, set[int]] = defaultdict(set)
    for a, b in links:
        ia, ib = order.get(a), order.get(b)
        if ia is None or ib is None or ia == ib:
            continue
        adj[ia].add(ib)
        adj[ib].add(ia)
    max_group = max(2, max_group)
    groups: list[list[int]] = []
    for comp in _components(sorted(adj), adj):
        groups += _partition_component(comp, adj, max_group)
    groups.sort(key=lambda g: g[0])
    return [[nodes[i] for i in g] for g in groups]


def _components(members: list[int], adj: dict[int, set[int]]) -> list[list[int]]:
    """Connected components (sorted lists, ordered by first member) of the graph on ``members``."""
    allowed = set(members)
    seen: set[int] = set()
    out = []
    for start in members:
        if start in seen:
            continue
        seen.add(start)
        comp, frontier = [start], [start]
        while frontier:
            v = frontier.pop()
            for u in adj[v]:
                if u in allowed and u not in seen:
                    seen.add(u)
                    comp.append(u)
                    frontier.append(u)
        out.append(sorted(comp))
    return out


def _partition_component(comp: list[int], adj: dict[int, set[int]], max_group: int) -> list[list[int]]:
    groups: list[list[int]] = []
    work = [comp]
    while work:
        c = work.pop(0)
        if len(c) < 2:
            continue
        cset = set(c)
        sub = {v: adj[v] & cset for v in c}
        n_edges = sum(len(x) for x in sub.values()) // 2
        if n_edges == 0:
            continue
        if n_edges == len(c) * (len(c) - 1) // 2:
            best = c
        else:
            graph = nx.Graph()
            graph.add_nodes_from(c)
            graph.add_edges_from((v, u) for v in c for u in sorted(sub[v]) if u > v)
            best_key: tuple | None = None
            for scanned, clique in enumerate(nx.find_cliques(graph)):
                key = (-len(clique), sorted(clique))
                if best_key is None or key < best_key:
                    best_key = key
                if scanned >= _MAX_CLIQUES_SCANNED:
                    break
            assert best_key is not None
            best = best_key[1]
        best = best[:max_group]
        groups.append(best)
        taken = set(best)
        rest = [v for v in c if v not in taken]
        work = _components(rest, sub) + work
    return groups


# --------------------------------------------------------------------------------------------
# Resolve
# --------------------------------------------------------------------------------------------


def _keep_key(c: Candidate) -> tuple:
    s = _surface(c.name)
    return (s.acronym, -len(c.aliases or []), 0 if (c.description or "").strip() else 1, c.id)


def resolve(cands: Sequence[Candidate], settings: ResolutionSettings | None = None) -> list[list[str]]:
    """Groups of candidate ids that are one entity; each group's first id is the one to keep.

    Keep order: a full name before an acronym/code, then more aliases, then having a
    description, then the smaller id. Groups come in the order of their earliest candidate.
    """
    settings = settings or ResolutionSettings()
    ids = [c.id for c in cands]
    if len(set(ids)) != len(ids):
        raise ValueError("candidate ids must be unique")
    by_id = {c.id: c for c in cands}
    groups = clique_partition(ids, link_pairs(cands, settings), settings.max_group)
    return [sorted(g, key=lambda i: _keep_key(by_id[i])) for g in groups]
