"""Word lists and token patterns of the offline extractor (see :mod:`.offline`).

Closed lists of generic academic words, evaluative modifiers, verbs (base forms inflected by
:func:`_inflect`), "-ing" nouns, adjective cues and the regexes that tell numbers, placeholders,
acronym-like and mixed-case tokens apart. Pure data and small predicates; no state.
"""

from __future__ import annotations

import re

from ...text.tokens import Token

# --------------------------------------------------------------------------------------------
# Word lists
# --------------------------------------------------------------------------------------------


def word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Generic academic nouns: never an entity on their own, and a phrase made only of these (plus
# generic adjectives) is dropped. Compared against normalised (singular, lower-case) words.
GENERIC_WORDS = word_set(
    """
    result table figure fig section work paper study approach method methodology technique model system
    framework algorithm task problem solution way case example number set use usage part type kind form level
    order value term fact idea issue question effect analysis experiment evaluation performance improvement
    information article chapter appendix note state art field area domain aspect respect end time step process
    outcome finding conclusion introduction discussion background objective purpose aim goal contribution
    advantage disadvantage limitation difference similarity amount range lot variety sort manner means basis
    point thing one addition comparison need ability author researcher reader people person year day
    literature research setting setup detail overview summary proposal version component property
    characteristic factor input output parameter instance sample item element object concept notion
    principle perspective view context scenario condition situation challenge difficulty trend direction
    future development application implementation extension modification change increase decrease reduction
    gain rate ratio size length degree extent cost benefit impact role importance relevance usefulness
    effectiveness efficiency quality reliability validity total average group category list collection pair
    combination subset half majority portion fraction proportion percentage stage phase period round
    state-of-the-art sota regard account consideration focus emphasis interest insight evidence support help
    effort attempt practice other others respect hand side kind lot aspect technique test measure
    experiment score baseline work works design version task tasks patient subject participant individual
    control cohort report journal conference proceedings workshop university department institute et al
    today yesterday tomorrow dataset data gene protein mutation expression association treatment population
    family loss survival level control week month hour minute disease disorder syndrome deficiency dysfunction
    receptor inhibitor drug compound
    """
)

GENERIC_ADJECTIVES = word_set(
    """
    experimental empirical extensive comprehensive detailed overall main key major general possible available
    following above present previous existing recent current future further additional final initial
    original alternative relevant related corresponding respective total whole entire small large big high
    low good better best new novel simple different various several many multiple similar same certain
    specific particular significant important interesting effective efficient promising competitive strong
    substantial common typical traditional conventional standard basic preliminary qualitative quantitative
    theoretical practical numerous quick fast slow easy difficult hard useful powerful proposed first second
    third last previous prior next whole great greater greatest higher lower highest lowest larger smaller
    largest smallest wide broad clinical special past sufficient necessary open independent representative
    explicit implicit close easy challenging crucial critical essential fundamental central primary secondary
    potential actual real true false correct complex reasonable acceptable satisfactory excellent poor worse bad
    little much few proper improper single double individual several minor limited
    """
)

# Modifiers trimmed from the of a phrase ("a novel framework" -> "framework").
LEADING_MODIFIERS = word_set(
    """
    new novel proposed simple various different several many multiple existing previous recent current
    other such same similar certain particular specific given good better best significant important
    interesting effective efficient promising competitive strong stronger substantial considerable main
    key major overall additional further following above respective corresponding extensive comprehensive
    detailed possible available entire total first second third fourth fifth last final initial original
    latter former typical appropriate suitable successful superior notable remarkable state-of-the-art
    well-known so-called widely-used commonly-used numerous certain preliminary extra novel prior
    aforementioned above-mentioned underlying respective overall whole deeper larger smaller higher lower
    faster slower stronger weaker wider longer shorter simpler richer finer coarser greater
    """
)

# Base forms whose inflections (and the base itself) are verbs in scientific prose.
_VERB_BASES = """
    achieve improve outperform perform provide obtain apply evaluate demonstrate consider describe introduce
    allow enable require yield decrease reduce compare suggest indicate reveal identify associate include
    contain consist involve depend rely address tackle solve handle exploit leverage employ adopt utilize
    utilise incorporate combine integrate extend construct develop implement conduct investigate explore
    examine analyze analyse assess predict generate produce create propose present show use make take give
    report
    get become remain seem appear help enhance boost surpass exceed beat establish confirm verify validate
    observe determine define denote represent correspond refer relate capture exhibit display possess lack
    fail succeed tend want try seek intend permit prevent avoid ensure guarantee facilitate affect influence
    cause induce inhibit promote activate regulate mediate modulate suppress decline emerge arise occur
    happen exist belong derive originate follow precede outline summarize summarise discuss argue
    notice highlight emphasize emphasise illustrate depict concentrate select choose collect gather calculate
    optimize optimise minimize minimise maximize maximise operate execute deploy publish know
    believe assume hypothesize hypothesise expect prove reach attain deliver offer contribute compose comprise
    constitute characterize characterise administer diagnose detect recognize recognise distinguish differ
    vary cover reflect explain motivate inspire mitigate alleviate overcome suffer continue begin keep
    bring see say tell receive send accept reject ignore neglect omit add remove replace substitute modify
    adapt adjust convert connect attach interact compete correlate agree disagree
    conclude infer deduce assign categorize categorise generalize generalise accelerate simplify
    clarify specify enrich augment increase aim serve allow enable study propagate train learn
    entail deal classify tokenize tokenise finetune fine-tune pretrain pre-train initialize
    initialise concatenate feed pass converge subsume constrain localize localise formulate encode decode
    normalize normalise regularize regularise discover uncover treat store ask check embed aggregate share
    hinder attract dominate relieve translate play lend
"""
_VERB_FORMS_EXTRA = """
    is are was were be been being has have had having do does did done doing shown showed found made taken took
    given gave got gotten led built known seen saw became chosen chose written wrote began begun held kept put
    brought thought told said meant sent drawn drew grown grew arisen arose fell fallen understood based termed
    called named dubbed coined referred reported trained tested designed measured estimated labeled labelled
    annotated learned learnt resulting resulted encoded decoded computed mapped matched ranked filtered
    clustered embedded parsed processed modeled modelled tuned fine-tuned pretrained pre-trained treated
    expressed compared runs ran citing cited according owing regarding concerning involving corresponding
    results yields shows linked transformed stemmed claimed started starts leads leading contrasted
    complemented approximated attributed dealt fed ranging ranged built builds build marked triggered
    extracting retrieves computes annotates
"""
# "-ing" forms that are usually nouns in scientific text; never treated as verbs.
_NOMINAL_ING = word_set(
    """
    learning training processing parsing modeling modelling embedding clustering tagging labeling labelling
    reasoning understanding planning mapping matching ranking encoding decoding sampling pooling pretraining
    scheduling indexing mining computing programming forecasting screening signaling signalling binding folding
    sequencing splicing imaging testing prompting filtering smoothing scaling grounding rendering tracking
    setting meaning beginning building finding reading writing thinking teaching recording funding spelling
    coding hashing routing boosting bagging stacking ensembling answering engineering hearing being ordering
    chunking checking splitting captioning paraphrasing reranking pruning distilling morning evening spring
    string thing nothing something anything everything king ring wing swing bring sibling passing
    """
)


# "-ing" words that stay nouns at the start of a phrase ("learning rate"); "computing X" is a verb.
NOMINAL_ING_LEADING = _NOMINAL_ING - word_set("computing finding building setting reading writing thinking testing")


def _inflect(base: str) -> list[str]:
    forms = [base]
    if base.endswith("e"):
        forms += [base + "s", base + "d", base[:-1] + "ing"]
    elif base.endswith("y") and base[-2:-1] not in ("a", "e", "o", "u"):
        forms += [base[:-1] + "ies", base[:-1] + "ied", base + "ing"]
    elif base.endswith(("s", "sh", "ch", "x", "z")):
        forms += [base + "es", base + "ed", base + "ing"]
    else:
        forms += [base + "s", base + "ed", base + "ing"]
        if re.search(r"[^aeiou][aeiou][bdgmnprt]$", base) and len(base) <= 6:
            forms += [base + base[-1] + "ed", base + base[-1] + "ing"]
    return forms


VERBS: frozenset[str] = (
    frozenset({f for b in _VERB_BASES.split() for f in _inflect(b)} | set(_VERB_FORMS_EXTRA.split())) - _NOMINAL_ING
)

# "-ly" words that are not adverbs.
LY_NOUNS = word_set(
    """
    family anomaly assembly supply italy monopoly early daily weekly monthly yearly friendly costly timely
    elderly holy fly poly ply ally rally belly jelly bully lily reply multiply apply comply butterfly firefly
    dragonfly homily july bodily curly hourly nightly quarterly oily silly ugly lonely lovely likely only
    """
)

# A gerund right after these takes an object: "for computing optical flow", "by estimating X".
GERUND_PREPS = word_set("for by of in on to from with without when while after before via through into upon")
_EXTRA_VERB_STEMS = word_set("duplicate express move carry harbor harbour encode lack contain target bind cause")


_ADJ_SUFFIXES = ("able", "ible", "ive", "ous", "ful", "less", "ish")
_ADJ_NOT = word_set(
    """
    objective alternative derivative initiative representative detective adjective directive narrative
    perspective incentive collective native relative archive executive explosive additive sedative
    antioxidant vegetable table cable variable syllable timetable constable fable
    """
)
_COMMON_ADJECTIVES = word_set(
    """
    glad positive negative reverse good bad happy sad true false real able likely unlikely due clear
    available possible impossible necessary sufficient simple complex general specific
    """
)


_HYPHEN_ADJ_HEADS = word_set(
    "based level scale aware free specific oriented resource shot lingual like wise driven dependent independent "
    "invariant sensitive agnostic efficient intensive related end time"
)


def looks_adjective(word: str) -> bool:
    """Single words that are probably adjectives ("predictable", "positive", "cross-lingual")."""
    if word in _COMMON_ADJECTIVES:
        return True
    if " " in word:  # a hyphenated token, normalised to "cross lingual"
        last = word.rsplit(" ", 1)[1]
        return last in _HYPHEN_ADJ_HEADS or last.endswith(_ADJ_SUFFIXES + ("al", "ic", "ed"))
    return word.endswith(_ADJ_SUFFIXES) and word not in _ADJ_NOT and len(word) > 5


# A lower-case "-s" word right before one of these is a verb: "the DRD2 gene plays a role".
DETERMINERS = word_set("a an the this these those its their our his her")


def is_verb_s(word: str) -> bool:
    return len(word) > 3 and word.islower() and word.endswith("s") and not word.endswith(("ss", "us", "is", "'s"))


def is_possessive(word: str) -> bool:
    return word.endswith(("'s", "\u2019s"))


# Words ending in "-ed" that are not participles.
_ED_NOUNS = word_set("seed speed need bed feed red shed bleed breed embed hundred kindred sacred wicked naked")

AUXILIARIES = word_set("is are was were be been being has have had having")
ADVERB_STOPWORDS = word_set("further often still thus then always never usually generally also even greatly")

# A lower-case "-s"/"-ed" word right after these is a verb ("which subsumes", "it facilitates").
SUBJECT_WORDS = word_set("it which that who former latter he she also then we they")

# "glucose levels" also mentions "glucose"; "iodide uptake" also "iodide".
MODIFIER_HEADS = word_set(
    """
    level concentration uptake metabolism expression activity production release treatment therapy
    administration infusion injection exposure intake signaling signalling pathway gene mutation variant
    polymorphism deficiency supplementation content synthesis transport inhibition secretion homeostasis
    accumulation overexpression knockdown knockout protein mrna receptor antagonist agonist inhibitor
    """
)

# Generic heads after a technical symbol: "NIS gene" -> "NIS", "BERT model" -> "BERT".
TECH_GENERIC_HEADS = word_set("model method approach system framework algorithm technique architecture gene protein")

# All-caps section labels in structured abstracts ("RESULTS:").
SECTION_LABELS = word_set(
    """
    objective objectives background methods method results result conclusion conclusions purpose aims aim
    design setting settings patients patient participants interventions intervention measurements findings
    introduction discussion materials abstract summary context importance limitations significance case report
    main outcome outcomes measures evidence synthesis data sources study selection extraction rationale
    """
)

NUMBER_RE = re.compile(
    r"[+\-\u2212]?\d+(?:[.,]\d+)*(?:%|st|nd|rd|th|x|(?![dD]\b)[a-zA-Z\u00b5\u03bc]{1,3})?"
    r"(?:[-\u2013/]\d+(?:[.,]\d+)*%?)*"
    # "37-year-old", "5-fold", "24-h", "3-day": numbers with a unit, not terms
    r"(?:-(?:fold|times?|years?|months?|weeks?|days?|hours?|h|min|minutes?|seconds?|s|old|doses?|points?"
    r"|mg|kg|g|ml|mm|cm|km|nm|bp|kb|nt))*"
)
# "RoBERTa", "mRNA", "ELMo", "XLNet", "PyTorch", "BERT-base" (an all-caps part of a hyphenated word).
MIXED_RE = re.compile(r"[a-z][A-Z]|[A-Z]{2,}[a-z]|(?:^|[-/])[A-Z][A-Z0-9]+(?=[-/])|[-/][A-Z][A-Z0-9]+$")
PLACEHOLDER_RE = re.compile(r"[A-Z]{2,}REF\d+|.*_.*")  # "BIBREF3"/"FIGREF1" (parsed papers), "x_1"
ROMAN_RE = re.compile(r"[IVXLC]{1,4}")
HAS_DIGIT_RE = re.compile(r"\d")
HAS_ALPHA_RE = re.compile(r"[^\W\d_]")
IGNORED_RES = (
    re.compile(r"\$[^$\n]{0,200}\$"),  # inline LaTeX math
    re.compile(r"\\[A-Za-z]+"),  # LaTeX commands: \rightarrow, \textbf
    re.compile(r"\([^()]*\b(?:19|20)\d{2}[a-z]?\b[^()]*\)"),
    re.compile(r"\b[A-Z][\w'\-]+(?:\s+(?:and|&)\s+[A-Z][\w'\-]+)?\s+et\s+al\b\.?"),
    re.compile(r"\b[A-Z][\w'\-]+(?:\s+(?:and|&)\s+[A-Z][\w'\-]+)?\s*(?=\(\s*(?:19|20)\d{2})"),
)


# --------------------------------------------------------------------------------------------
# Word predicates
# --------------------------------------------------------------------------------------------


def is_participle(word: str) -> bool:
    lw = word.lower()
    return len(lw) > 4 and lw.endswith("ed") and lw not in _ED_NOUNS and word.islower() and "-" not in lw

def is_gerund(word: str) -> bool:
    lw = word.lower()
    return len(lw) > 5 and lw.endswith("ing") and word.islower() and "-" not in lw and lw not in _NOMINAL_ING

def verb_like_ing(tokens: list[Token], k: int) -> bool:
    """A phrase-final "-ing" word is a verb after a plural ("objects moving") or when its stem is a known verb."""
    lw = tokens[k].text.lower()
    stem = lw[:-3]
    prev = tokens[k - 1].text.lower()
    return (
        stem in VERBS
        or stem + "e" in VERBS
        or (prev.endswith("s") and not prev.endswith(("ss", "us", "is")))
        or stem in _EXTRA_VERB_STEMS
        or stem + "e" in _EXTRA_VERB_STEMS
    )
