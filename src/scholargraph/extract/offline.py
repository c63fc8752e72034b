"""Offline extraction profile: a draft knowledge graph without any language model.

Deterministic and pure Python (regexes + small word lists from :mod:`.text_utils`):

* **Candidate terms** -- noun-phrase chunks found without a POS tagger: maximal runs of content
  words between boundaries (punctuation, numbers, stopwords, a closed list of common verbs,
  ``-ly`` adverbs), with evaluative modifiers ("novel", "proposed") trimmed from the front and
  participles trimmed from the end. Internal hyphens, slashes and digits stay inside a word
  ("BERT-base", "GPT-4", "F1 score", "sodium/iodide symporter"). Technical tokens inside longer
  phrases (acronyms such as "LLMs", mixed case "RoBERTa", letters+digits "word2vec", gene-like
  symbols "TP53") are also emitted on their own. Citations ("Smith et al. (2020)") and
  all-caps section labels ("RESULTS:") are skipped.
* **Filter** -- 1-6 words, not only stopwords/generic academic words ("result", "table", "paper",
  "approach"...), not numbers. An ordinary single word needs at least two standalone mentions in
  the document unless the type heuristic recognises it ("accuracy", "glucose", "hepatitis");
  single adjectives ("positive", "cross-lingual") never qualify. Technical tokens and multi-word
  terms need no repetition. Verbs are recognised from a closed list plus context ("which
  subsumes", "has dominated", "significantly outperforms", "the gene plays a role").
* **Acronyms** -- "Retrieval-Augmented Generation (RAG)" gives one entity named by the long form
  with alias "RAG"; any later "RAG" in the same document is a mention of that entity.
* **Types** -- a documented heuristic into the configured type list (see :func:`guess_type`);
  "Concept" (or the last configured type) when nothing matches. This is a draft, not a classifier.
* **Description** -- the first sentence of the chunk that mentions the entity (<= 300 chars).
* **Relations** -- undirected co-occurrence of two entities in one sentence. Source/target in
  order of first appearance in the chunk, description = the sentence, strength = number of
  sentences of the chunk where they co-occur, keywords = up to three content words between
  them (verbs first). At most ``max_relations_per_chunk`` pairs, preferring frequent pairs,
  technical terms and short distances.
* **Content keywords** -- per chunk, a TF-IDF style keyphrase score over the candidate phrases
  (term frequency in the chunk x inverse chunk frequency in the document x word-frequency support
  x length/position/technicality boosts); top ``keywords_per_chunk`` (fewer for short chunks: one
  per 12 words, at least two), sub-phrases of a chosen phrase skipped.

Output order never depends on set iteration or hashing: everything is ordered by position in the
text, then by explicit sort keys.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..models import EntityRecord, Extraction, KeywordRecord, RelationRecord
from .text_utils import (
    STOPWORDS,
    Token,
    find_acronym_definition_spans,
    fold_plural,
    is_acronym,
    normalise_name,
    sentence_spans,
    tokenize_with_offsets,
)

__all__ = ["DEFAULT_ENTITY_TYPES", "OfflineExtractor", "guess_type"]

DEFAULT_ENTITY_TYPES: tuple[str, ...] = ("Task", "Method", "Model", "Dataset", "Metric", "Concept")

MAX_WORDS = 6
DESCRIPTION_CHARS = 300
RELATION_DESCRIPTION_CHARS = 600
PAIR_WINDOW = 15
WORDS_PER_KEYWORD = 12

# --------------------------------------------------------------------------------------------
# Word lists
# --------------------------------------------------------------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Generic academic nouns: never an entity on their own, and a phrase made only of these (plus
# generic adjectives) is dropped. Compared against normalised (singular, lower-case) words.
GENERIC_WORDS = _words(
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

GENERIC_ADJECTIVES = _words(
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
LEADING_MODIFIERS = _words(
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
_NOMINAL_ING = _words(
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
_NOMINAL_ING_LEADING = _NOMINAL_ING - _words("computing finding building setting reading writing thinking testing")


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
_LY_NOUNS = _words(
    """
    family anomaly assembly supply italy monopoly early daily weekly monthly yearly friendly costly timely
    elderly holy fly poly ply ally rally belly jelly bully lily reply multiply apply comply butterfly firefly
    dragonfly homily july bodily curly hourly nightly quarterly oily silly ugly lonely lovely likely only
    """
)

# A gerund right after these takes an object: "for computing optical flow", "by estimating X".
_GERUND_PREPS = _words("for by of in on to from with without when while after before via through into upon")
_EXTRA_VERB_STEMS = _words("duplicate express move carry harbor harbour encode lack contain target bind cause")


_ADJ_SUFFIXES = ("able", "ible", "ive", "ous", "ful", "less", "ish")
_ADJ_NOT = _words(
    """
    objective alternative derivative initiative representative detective adjective directive narrative
    perspective incentive collective native relative archive executive explosive additive sedative
    antioxidant vegetable table cable variable syllable timetable constable fable
    """
)
_COMMON_ADJECTIVES = _words(
    """
    glad positive negative reverse good bad happy sad true false real able likely unlikely due clear
    available possible impossible necessary sufficient simple complex general specific
    """
)


_HYPHEN_ADJ_HEADS = _words(
    "based level scale aware free specific oriented resource shot lingual like wise driven dependent independent "
    "invariant sensitive agnostic efficient intensive related end time"
)


def _looks_adjective(word: str) -> bool:
    """Single words that are probably adjectives ("predictable", "positive", "cross-lingual")."""
    if word in _COMMON_ADJECTIVES:
        return True
    if " " in word:  # a hyphenated token, normalised to "cross lingual"
        last = word.rsplit(" ", 1)[1]
        return last in _HYPHEN_ADJ_HEADS or last.endswith(_ADJ_SUFFIXES + ("al", "ic", "ed"))
    return word.endswith(_ADJ_SUFFIXES) and word not in _ADJ_NOT and len(word) > 5


# A lower-case "-s" word right before one of these is a verb: "the DRD2 gene plays a role".
_DETERMINERS = _words("a an the this these those its their our his her")


def _is_verb_s(word: str) -> bool:
    return len(word) > 3 and word.islower() and word.endswith("s") and not word.endswith(("ss", "us", "is", "'s"))


def _is_possessive(word: str) -> bool:
    return word.endswith(("'s", "\u2019s"))


# Words ending in "-ed" that are not participles.
_ED_NOUNS = _words("seed speed need bed feed red shed bleed breed embed hundred kindred sacred wicked naked")

_AUXILIARIES = _words("is are was were be been being has have had having")
_ADVERB_STOPWORDS = _words("further often still thus then always never usually generally also even greatly")

# A lower-case "-s"/"-ed" word right after these is a verb ("which subsumes", "it facilitates").
_SUBJECT_WORDS = _words("it which that who former latter he she also then we they")

# "glucose levels" also mentions "glucose"; "iodide uptake" also "iodide".
_MODIFIER_HEADS = _words(
    """
    level concentration uptake metabolism expression activity production release treatment therapy
    administration infusion injection exposure intake signaling signalling pathway gene mutation variant
    polymorphism deficiency supplementation content synthesis transport inhibition secretion homeostasis
    accumulation overexpression knockdown knockout protein mrna receptor antagonist agonist inhibitor
    """
)

# Generic heads after a technical symbol: "NIS gene" -> "NIS", "BERT model" -> "BERT".
_TECH_GENERIC_HEADS = _words("model method approach system framework algorithm technique architecture gene protein")

# All-caps section labels in structured abstracts ("RESULTS:").
_SECTION_LABELS = _words(
    """
    objective objectives background methods method results result conclusion conclusions purpose aims aim
    design setting settings patients patient participants interventions intervention measurements findings
    introduction discussion materials abstract summary context importance limitations significance case report
    main outcome outcomes measures evidence synthesis data sources study selection extraction rationale
    """
)

_NUMBER_RE = re.compile(
    r"[+\-\u2212]?\d+(?:[.,]\d+)*(?:%|st|nd|rd|th|x|(?![dD]\b)[a-zA-Z\u00b5\u03bc]{1,3})?"
    r"(?:[-\u2013/]\d+(?:[.,]\d+)*%?)*"
    # "37-year-old", "5-fold", "24-h", "3-day": numbers with a unit, not terms
    r"(?:-(?:fold|times?|years?|months?|weeks?|days?|hours?|h|min|minutes?|seconds?|s|old|doses?|points?"
    r"|mg|kg|g|ml|mm|cm|km|nm|bp|kb|nt))*"
)
# "RoBERTa", "mRNA", "ELMo", "XLNet", "PyTorch", "BERT-base" (an all-caps part of a hyphenated word).
_MIXED_RE = re.compile(r"[a-z][A-Z]|[A-Z]{2,}[a-z]|(?:^|[-/])[A-Z][A-Z0-9]+(?=[-/])|[-/][A-Z][A-Z0-9]+$")
_PLACEHOLDER_RE = re.compile(r"[A-Z]{2,}REF\d+|.*_.*")  # "BIBREF3"/"FIGREF1" (parsed papers), "x_1"
_ROMAN_RE = re.compile(r"[IVXLC]{1,4}")
_HAS_DIGIT_RE = re.compile(r"\d")
_HAS_ALPHA_RE = re.compile(r"[^\W\d_]")
_GENE_RE = re.compile(r"(?:[A-Z][A-Za-z]{0,5}|[a-z]{1,2})-?\d{1,4}[A-Za-z]{0,2}")
_VARIANT_RE = re.compile(
    r"(?:[cgpmnr]\.[A-Za-z0-9_>*+\-]+|rs\d{3,}|[ACDEFGHIKLMNPQRSTVWY]\d{2,5}[ACDEFGHIKLMNPQRSTVWY*]"
    r"|-?\d+[A-Za-z]*>[A-Za-z]+|[A-Z][a-z]{2}\d+(?:[A-Z][a-z]{2}|X|\*|fs\w*|del|dup))"
)
_IGNORED_RES = (
    re.compile(r"\$[^$\n]{0,200}\$"),  # inline LaTeX math
    re.compile(r"\\[A-Za-z]+"),  # LaTeX commands: \rightarrow, \textbf
    re.compile(r"\([^()]*\b(?:19|20)\d{2}[a-z]?\b[^()]*\)"),
    re.compile(r"\b[A-Z][\w'\-]+(?:\s+(?:and|&)\s+[A-Z][\w'\-]+)?\s+et\s+al\b\.?"),
    re.compile(r"\b[A-Z][\w'\-]+(?:\s+(?:and|&)\s+[A-Z][\w'\-]+)?\s*(?=\(\s*(?:19|20)\d{2})"),
)

# --------------------------------------------------------------------------------------------
# Typing
# --------------------------------------------------------------------------------------------

_TYPE_ALIASES: dict[str, tuple[str, ...]] = {
    "model": ("model", "method", "technique", "algorithm", "tool", "software", "system"),
    "method": ("method", "technique", "algorithm", "approach", "model"),
    "dataset": ("dataset", "data", "resource", "material", "corpus"),
    "metric": ("metric", "evaluationmetric", "measure"),
    "task": ("task", "problem"),
    "gene": ("gene/protein", "gene", "protein", "geneorgeneproduct", "geneorprotein"),
    "disease": ("disease", "diseaseorphenotypicfeature", "condition", "disorder", "phenotype"),
    "drug": ("drug/compound", "drug", "chemical", "compound", "chemicalentity"),
    "organism": ("organism", "species", "organismtaxon", "taxon"),
    "variant": ("variant", "sequencevariant", "geneticvariation", "geneticvariant", "mutation"),
    "cellline": ("cellline", "celltype", "cell"),
    "pathway": ("pathway", "biologicalprocess"),
    "anatomy": ("anatomy", "tissue", "organ", "anatomicalstructure"),
    "organization": ("organization", "organisation", "institution", "affiliation"),
    "concept": ("concept", "knowledgeconcept", "otherscientificterm", "term", "topic", "other", "entity"),
}

_DATASET_HEADS = _words("dataset corpus treebank benchmark database databank")
_METRIC_HEADS = _words(
    "accuracy precision recall f1 f-score f-measure f1-score bleu rouge meteor cider perplexity auc auroc "
    "mrr ndcg wer cer metric map@k"
)
_TASK_HEADS = _words(
    """
    task classification recognition translation parsing extraction detection generation segmentation
    summarization summarisation answering tagging labeling labelling retrieval prediction identification
    resolution disambiguation understanding categorization categorisation linking captioning completion
    forecasting localization localisation tracking recommendation
    """
)
_METHOD_HEADS = _words(
    """
    model network algorithm method approach technique framework architecture classifier encoder decoder
    transformer parser tagger learning optimization optimisation regularization regularisation embedding
    attention mechanism procedure strategy heuristic kernel regression machine tree forest perceptron
    autoencoder lstm cnn rnn gan modeling modelling
    """
)
_MODEL_HEADS = _words("model network transformer encoder decoder classifier autoencoder perceptron machine")
_DISEASE_WORDS = _words(
    """
    cancer disease syndrome disorder deficiency infection tumor tumour carcinoma diabetes hypertension obesity
    dementia epilepsy asthma autism schizophrenia depression injury failure defect dysfunction toxicity pain
    fever inflammation lesion stroke seizure seizures anemia anaemia leukemia leukaemia lymphoma melanoma
    sarcoma glioma fibrosis sclerosis cirrhosis hepatitis arthritis neuropathy cardiomyopathy atrophy dystrophy
    malformation deafness blindness retardation hypoplasia dysplasia hyperplasia insufficiency
    """
)
_DISEASE_SUFFIXES = tuple(
    """
    itis oma omas osis emia aemia pathy algia plasia plegia trophy esia esias uria oxia penia tonia phobia
    toxicity kinesia kinesias cardia ataxia epsy
    """.split()
)
_DISEASE_NOT = _words(
    "diploma stroma aroma genoma chroma coma soma hypothesis analysis basis diagnosis prognosis emphasis apoptosis "
    "mitosis meiosis osmosis symbiosis hypnosis synthesis biosynthesis homeostasis anastomosis"
)
_DRUG_SUFFIXES = tuple(
    """
    mab nib vir cillin mycin azole pril sartan olol statin prazole parin dipine caine amine oxacin cycline afil
    tidine profen olone asone azepam barbital dopa azine ine ide ol ate one acid
    """.split()
)
_DRUG_WORDS = _words(
    "drug compound inhibitor agonist antagonist antibiotic chemotherapy steroid hormone toxin acid "
    "ethanol alcohol glucose iodide nicotine caffeine cocaine oxygen iron calcium sodium potassium zinc "
    "copper lipid cholesterol placebo"
)
_DRUG_NOT = _words(
    """
    machine baseline pipeline online offline routine guideline engine line fine medicine discipline magazine
    vaccine doctrine decline outline deadline headline timeline spline cosine sine define combine determine
    examine imagine marine feline canine bovine equine porcine murine intestine uterine alkaline masculine
    feminine genuine mine nine shine spine pine vine cuisine quarantine turbine side wide guide provide decide
    divide slide ride hide tide bride pride stride override worldwide nationwide coincide reside subside
    control protocol symbol pool tool school patrol wool stool spool idol carol cool capitol vol state rate
    estimate update template candidateate date gate late plate validate aggregate separate accurate
    adequate appropriate approximate intermediate immediate moderate ultimate private climate create
    generate indicate demonstrate investigate evaluate activate regulate mediate modulate substrate
    one none done bone tone zone phone stone alone someone everyone anyone clone drone ozone milestone
    cornerstone backbone hormone genome-wide medium premium stadium podium consortium criterium equilibrium
    millennium tedium opium delirium symposium gymnasium auditorium moratorium genome-scale nucleotide peptide polypeptide oligonucleotide
    whole alcohol cholesterol nucleotides peptides acid amine
    """
) - _words("alcohol cholesterol acid amine")
_ORGANISM_WORDS = _words(
    """
    human mouse mice rat yeast zebrafish drosophila bacteria bacterium virus patient woman women man men
    murine rodent primate monkey macaque dog cat pig cattle chicken arabidopsis fly worm
    """
)
_PATHWAY_HEADS = _words("pathway cascade")
_ANATOMY_WORDS = _words(
    """
    liver kidney brain heart lung muscle blood serum plasma tissue cortex hippocampus thyroid gland mucosa bone
    skin retina artery vein intestine colon stomach pancreas spleen cerebellum striatum myocardium aorta
    breast prostate ovary testis uterus placenta cornea lens cochlea spinal cord tendon cartilage
    """
)
_CELL_WORDS = _words(
    """
    macrophage neuron fibroblast hepatocyte lymphocyte monocyte keratinocyte astrocyte microglia cardiomyocyte
    adipocyte erythrocyte platelet neutrophil oocyte podocyte osteoblast osteoclast myoblast
    """
)
_ORG_WORDS = _words(
    """
    university institute laboratory laboratories corporation inc ltd company consortium foundation ministry
    agency google microsoft openai facebook ibm amazon nvidia deepmind
    """
)
_GENE_HEADS = _words(
    "gene protein receptor kinase enzyme transporter symporter channel antibody ligand mrna isoform subunit "
    "phosphatase polymerase synthase oxidase reductase ligase protease transferase peptidase lipase"
)
_GENE_CUES = _words("gene genes protein proteins expression mutation mutations receptor mrna promoter allele alleles")


def _norm_type(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name.casefold())


def _resolve_type(category: str, entity_types: Sequence[str]) -> str | None:
    table = {_norm_type(t): t for t in entity_types}
    for alias in _TYPE_ALIASES.get(category, ()):
        if alias in table:
            return table[alias]
    return None


def _fallback_type(entity_types: Sequence[str]) -> str:
    return _resolve_type("concept", entity_types) or (entity_types[-1] if entity_types else "Concept")


def _ends_with_any(word: str, suffixes: tuple[str, ...], min_len: int = 5) -> bool:
    return len(word) >= min_len and word.endswith(suffixes)


def _categories(name: str, gene_cue: bool) -> list[str]:
    """Heuristic categories for ``name``, most specific first (see :func:`guess_type`)."""
    tokens = name.split()
    words = [t.lower() for t in tokens]
    head = fold_plural(words[-1]).lower() if words else ""
    out: list[str] = []
    if any(_VARIANT_RE.fullmatch(t) for t in tokens):
        out.append("variant")
    if head in _DATASET_HEADS or (len(words) >= 2 and words[-2:] == ["data", "set"]):
        out.append("dataset")
    if head in _METRIC_HEADS or head == "score" or name.lower().endswith("error rate"):
        out.append("metric")
    if head in _TASK_HEADS:
        out.append("task")
    if head in ("cell", "line") and len(tokens) >= 2 and (_GENE_RE.fullmatch(tokens[0]) or is_acronym(tokens[0])):
        out.append("cellline")
    if head in _CELL_WORDS or head.endswith("cyte") or (head == "cell" and len(tokens) >= 2):
        out.append("cellline")
    if head in _PATHWAY_HEADS:
        out.append("pathway")
    if any(w in _ORG_WORDS for w in words) and len(tokens) >= 2:
        out.append("organization")
    if (
        any(w in _DISEASE_WORDS for w in words)
        or (head not in _DISEASE_NOT and _ends_with_any(head, _DISEASE_SUFFIXES))
        or re.fullmatch(r"hyp(?:o|er)\w+ism", head)
    ):
        out.append("disease")
    if head in _ORGANISM_WORDS or head.endswith("virus") or name.lower() in ("e. coli", "escherichia coli"):
        out.append("organism")
    if (
        head in _GENE_HEADS
        or gene_cue
        or (len(tokens) == 1 and _GENE_RE.fullmatch(tokens[0]) and _HAS_DIGIT_RE.search(tokens[0]))
    ):
        out.append("gene")
    if head in _ANATOMY_WORDS:
        out.append("anatomy")
    if (head in _DRUG_WORDS or (head not in _DRUG_NOT and _ends_with_any(head, _DRUG_SUFFIXES, 6))) and not (
        len(tokens) == 1 and (is_acronym(tokens[0]) or _HAS_DIGIT_RE.search(tokens[0]))
    ):
        out.append("drug")
    # Symbolic names (acronyms, CamelCase, letters+digits) -- not merely capitalised words.
    symbolic = any(is_acronym(t) or _MIXED_RE.search(t) or (_HAS_DIGIT_RE.search(t) and len(t) > 1) for t in tokens)
    if symbolic and (len(tokens) == 1 or head in _METHOD_HEADS):
        out.append("model")
    if head in _MODEL_HEADS:
        out.append("model")
    if head in _METHOD_HEADS:
        out.append("method")
    return out


def guess_type(name: str, entity_types: Sequence[str] = DEFAULT_ENTITY_TYPES, *, gene_cue: bool = False) -> str:
    """Draft type of an entity ``name`` within ``entity_types`` (a heuristic, not a classifier).

    Categories are tried in this order and the first one the type list has wins: sequence
    variants ("p.R123H", "rs123", "643C>T") -> Variant; heads dataset/corpus/treebank/benchmark
    -> Dataset; accuracy/F1/BLEU/precision/recall/score/metric -> Metric; task-like heads
    (classification, recognition, translation, parsing, extraction, detection, generation...) ->
    Task; "COS-7 cells", "-cyte", "... cells" -> Cell line/type; pathway -> Pathway; university/
    institute/company names -> Organization; disease words and suffixes (-itis, -oma, -osis, -emia,
    cancer, syndrome, disorder) -> Disease; organisms (mice, rats, human) -> Organism; gene-like
    symbols ("TP53", "IL1B"), gene/protein heads (receptor, kinase...) or ``gene_cue`` (the name is
    followed by "gene"/"expression"/"mutation" in the text) -> Gene/Protein; organs and tissues ->
    Anatomy; drug suffixes (-mab, -nib, -vir, -ine, -ol...) -> Drug/Compound; acronyms, CamelCase
    and letters+digits ("BERT", "RoBERTa", "GPT-4", "BERT model") -> Model (or Method);
    model/network heads -> Model; method-like heads (algorithm, framework, learning...) -> Method;
    otherwise "Concept" -- or, when the list has no concept-like type, its last type. Type names
    match case-, space- and underscore-insensitively through aliases ("GeneOrGeneProduct",
    "Genetic Variation", "OtherScientificTerm"...).
    """
    for category in _categories(name, gene_cue):
        resolved = _resolve_type(category, entity_types)
        if resolved:
            return resolved
    return _fallback_type(entity_types)


# --------------------------------------------------------------------------------------------
# Analysis structures
# --------------------------------------------------------------------------------------------

# Token classes
_P, _N, _S, _V, _R, _W, _X = "P", "N", "S", "V", "R", "W", "X"
_TECH_KINDS = ("acr", "mixed", "alnum")


@dataclass
class _Mention:
    key: str
    surface: str
    sent: int
    tok_start: int
    tok_end: int
    technical: bool
    standalone: bool = True  # False for technical tokens nested in a longer phrase
    alias: bool = False  # an acronym mention (its surface never names the entity)
    initial_title: bool = False  # phrase starts the sentence with a Title-case word


@dataclass
class _Sentence:
    start: int
    end: int
    tokens: list[Token]
    classes: list[str]
    kinds: list[str]


@dataclass
class _ChunkAnalysis:
    chunk_id: str
    text: str
    sentences: list[_Sentence]
    mentions: list[_Mention] = field(default_factory=list)
    definitions: list[tuple[str, str, str]] = field(default_factory=list)  # (long key, long surface, acronym)
    mid_caps: list[str] = field(default_factory=list)
    word_tf: Counter = field(default_factory=Counter)


def _clean_ws(text: str) -> str:
    return " ".join(text.split())


def _trim(text: str, limit: int) -> str:
    text = _clean_ws(text)
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit - 1)
    return text[: cut if cut > limit // 2 else limit - 1].rstrip(" ,;:") + "\u2026"


SHORT_DOCUMENT_CHARS = 6000


class OfflineExtractor:
    """Rule-based entity/relation/keyword extraction (the ``offline`` profile).

    ``entity_types`` is the configured type list; types are guessed heuristically into it
    (:func:`guess_type`). ``min_single_word_freq`` is how many standalone mentions in the document
    an ordinary single word needs to become an entity.
    """

    name = "offline"

    def __init__(
        self,
        entity_types: Sequence[str] | None = None,
        *,
        max_relations_per_chunk: int = 30,
        keywords_per_chunk: int = 8,
        min_single_word_freq: int = 2,
        min_phrase_freq: int = 2,
        max_words: int = MAX_WORDS,
    ) -> None:
        self.entity_types = list(entity_types) if entity_types else list(DEFAULT_ENTITY_TYPES)
        self.max_relations_per_chunk = max_relations_per_chunk
        self.keywords_per_chunk = keywords_per_chunk
        self.min_single_word_freq = min_single_word_freq
        self.min_phrase_freq = min_phrase_freq
        self.max_words = max_words
        self._class_cache: dict[str, tuple[str, str]] = {}
        self._organisms = _resolve_type("organism", self.entity_types) is not None
        self._resolved: dict[str, str | None] = {}
        self._fallback = _fallback_type(self.entity_types)

    def _guess_type(self, name: str, gene_cue: bool) -> str:
        """:func:`guess_type` with the category -> type resolution cached."""
        for category in _categories(name, gene_cue):
            if category not in self._resolved:
                self._resolved[category] = _resolve_type(category, self.entity_types)
            if self._resolved[category]:
                return self._resolved[category]
        return self._fallback

    # ---------------------------------------------------------------- public API

    def extract_chunk(self, chunk_id: str, text: str) -> Extraction:
        """Entities, relations and keywords of one chunk, treated as a one-chunk document."""
        return self.extract_document([(chunk_id, text)])

    def extract_document(self, chunks: list[tuple[str, str]]) -> Extraction:
        """Extraction for all ``(chunk_id, text)`` chunks of one document.

        Acronym definitions, entity names, single-word frequencies and keyword IDF are computed
        over the whole document; every record is attributed to the chunk it was found in.
        """
        analyses = [self._analyse(cid, text) for cid, text in chunks]
        doc = self._document_stats(analyses)
        result = Extraction()
        for analysis in analyses:
            result.extend(self._emit(analysis, doc))
        return result

    # ---------------------------------------------------------------- token classes

    def _classify(self, word: str) -> tuple[str, str]:
        """(class, technical kind) of a token; kinds: acr, mixed, alnum, cap, '' (cached)."""
        cached = self._class_cache.get(word)
        if cached is not None:
            return cached
        lw = word.lower()
        kind = ""
        if not _HAS_ALPHA_RE.search(word) and not _HAS_DIGIT_RE.search(word):
            cls = _P
        elif _PLACEHOLDER_RE.fullmatch(word):
            cls = _X
        elif _NUMBER_RE.fullmatch(word) or not _HAS_ALPHA_RE.search(word):
            cls = _N
        elif lw in STOPWORDS or lw.strip("'\u2019") in STOPWORDS or (len(word) == 1 and word.islower()):
            cls = _S
        elif lw in VERBS and not (word.isupper() and len(word) > 1):
            cls = _V
        elif lw.endswith("ly") and len(lw) > 4 and lw not in _LY_NOUNS and "-" not in lw and not word.isupper():
            cls = _R
        else:
            cls = _W
            if len(word) == 1:
                kind = ""
            elif is_acronym(word) and not _ROMAN_RE.fullmatch(word):
                kind = "acr"
            elif _MIXED_RE.search(word):
                kind = "mixed"
            elif _HAS_DIGIT_RE.search(word) and not (len(word) <= 2 and word[0].islower()):
                kind = "alnum"  # "word2vec", "p53", "F1" (not the variable "i1")
            elif word[0].isupper():
                kind = "cap"
        if len(self._class_cache) < 200_000:
            self._class_cache[word] = (cls, kind)
        return cls, kind

    # ---------------------------------------------------------------- per-chunk analysis

    def _analyse(self, chunk_id: str, text: str) -> _ChunkAnalysis:
        ignore = bytearray(len(text))
        for rx in _IGNORED_RES:
            for m in rx.finditer(text):
                ignore[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
        sentences: list[_Sentence] = []
        analysis = _ChunkAnalysis(chunk_id, text, sentences)
        mid_caps: dict[str, None] = {}
        for s_start, s_end in sentence_spans(text):
            tokens = tokenize_with_offsets(text, s_start, s_end)
            classes: list[str] = []
            kinds: list[str] = []
            for i, tok in enumerate(tokens):
                cls, kind = self._classify(tok.text)
                if ignore[tok.start]:
                    cls, kind = _X, ""
                elif (
                    tok.text.isupper()
                    and tok.text.isalpha()
                    and len(tok.text) > 2
                    and (tok.text.lower() in _SECTION_LABELS or (i + 1 < len(tokens) and tokens[i + 1].text == ":"))
                ):
                    cls, kind = _X, ""  # "RESULTS:" in a structured abstract
                elif (
                    cls == _W
                    and i > 0
                    and tokens[i - 1].text.lower() in _SUBJECT_WORDS
                    and tok.text.islower()
                    and len(tok.text) > 3
                    and (
                        tok.text.endswith("ed")
                        or (tok.text.endswith("s") and not tok.text.endswith(("ss", "us", "is")))
                    )
                ):
                    cls = _V  # "which subsumes", "the former constrains", "it facilitates"
                elif (
                    cls == _W
                    and i > 0
                    and tok.text.islower()
                    and len(tok.text) > 4
                    and (
                        (tok.text.endswith("ed") and tokens[i - 1].text.lower() in _AUXILIARIES)
                        or (
                            tok.text.endswith("s")
                            and not tok.text.endswith(("ss", "us", "is"))
                            and (classes[i - 1] == _R or tokens[i - 1].text.lower() in _ADVERB_STOPWORDS)
                        )
                    )
                ):
                    cls = _V  # "has dominated", "significantly outperforms", "further hinders"
                classes.append(cls)
                kinds.append(kind)
            # Shouting (all-caps titles): capitals carry no information there.
            n_words = sum(1 for c in classes if c in (_W, _S, _V, _R))
            n_caps = sum(
                1
                for t, c in zip(tokens, classes, strict=True)
                if c in (_W, _S, _V) and t.text.isupper() and len(t.text) > 2
            )
            if n_words >= 4 and n_caps * 10 >= n_words * 6:
                kinds = ["cap" if k == "acr" else k for k in kinds]
            sentence = _Sentence(s_start, s_end, tokens, classes, kinds)
            sentences.append(sentence)
            first_word = next((i for i, c in enumerate(classes) if c not in (_P, _X)), 0)
            for i, (tok, cls, kind) in enumerate(zip(tokens, classes, kinds, strict=True)):
                if cls == _W:
                    analysis.word_tf[fold_plural(tok.text).lower()] += 1
                    if kind == "cap" and i > first_word and tok.text[1:].islower():
                        mid_caps.setdefault(tok.text, None)
            self._chunk_sentence(analysis, len(sentences) - 1, sentence, first_word)
        analysis.mid_caps = list(mid_caps)
        self._apply_definitions(analysis)
        return analysis

    def _chunk_sentence(self, analysis: _ChunkAnalysis, s_idx: int, sent: _Sentence, first_word: int) -> None:
        tokens, classes, kinds = sent.tokens, sent.classes, sent.kinds
        n = len(tokens)
        i = 0
        while i < n:
            if classes[i] != _W:
                i += 1
                continue
            j = i + 1
            while j < n:
                if classes[j] == _W:
                    j += 1
                elif (
                    classes[j] == _N
                    and tokens[j].text.isdigit()
                    and len(tokens[j].text) <= 2
                    and tokens[j - 1].text.isalpha()
                    and tokens[j - 1].text.lower() not in GENERIC_WORDS
                    and (j + 1 == n or classes[j + 1] != _N)
                ):
                    j += 1  # "caspase 3", "type 2 diabetes"
                elif (
                    tokens[j].text == "of"
                    and j + 1 < n
                    and classes[j + 1] == _W
                    and kinds[j - 1] == "cap"
                    and kinds[j + 1] == "cap"
                    and j - 1 != first_word
                ):
                    j += 2  # "Bag of Words", "Department of Energy"
                else:
                    break
            self._emit_run(analysis, s_idx, sent, i, j, first_word)
            i = j

    def _emit_run(self, analysis: _ChunkAnalysis, s_idx: int, sent: _Sentence, i: int, j: int, first_word: int) -> None:
        tokens, kinds = sent.tokens, sent.kinds
        start, end = i, j
        while start < end and (
            tokens[start].text.lower() in LEADING_MODIFIERS
            or (_is_possessive(tokens[start].text) and tokens[start].text.islower())
        ):
            start += 1
        # A gerund with an object: "computing optical flow" -> "optical flow".
        if (
            end - start > 1
            and self._is_gerund(tokens[start].text)
            and tokens[start].text.lower() not in _NOMINAL_ING_LEADING
            and (
                start == first_word or sent.classes[start - 1] == _R or tokens[start - 1].text.lower() in _GERUND_PREPS
            )
        ):
            start += 1
        while end > start and (
            self._is_participle(tokens[end - 1].text)
            or (end < len(tokens) and tokens[end].text.lower() in _DETERMINERS and _is_verb_s(tokens[end - 1].text))
            or (end - start > 1 and self._is_gerund(tokens[end - 1].text) and self._verb_like_ing(tokens, end - 1))
        ):
            end -= 1
        if end - start > 1 and all(kinds[k] in _TECH_KINDS for k in range(start, end - 1)):
            if fold_plural(tokens[end - 1].text).lower() in _TECH_GENERIC_HEADS:
                end -= 1
        main = start < end and end - start <= self.max_words
        # Technical tokens nested in a longer phrase ("BERT" in "BERT-based reranker") stand alone too,
        # and so do organism words when the type list has organisms ("human" in "human TSH").
        if j - i > 1:
            for k in range(i, j):
                if (
                    kinds[k] in _TECH_KINDS or (self._organisms and tokens[k].text.lower() in _ORGANISM_WORDS)
                ) and not (main and start == k and end == k + 1):
                    self._add(analysis, s_idx, sent, k, k + 1, standalone=False, first_word=first_word)
        # The modifier of a measurement-like head: "glucose levels" -> "glucose".
        if main and 1 < end - start and fold_plural(tokens[end - 1].text).lower() in _MODIFIER_HEADS:
            m_start = start
            while m_start < end - 1 and self._is_participle(tokens[m_start].text):
                m_start += 1
            if end - 1 - m_start <= 3 and not (end - 1 - m_start == 1 and kinds[m_start] in _TECH_KINDS):
                if m_start < end - 1:
                    self._add(analysis, s_idx, sent, m_start, end - 1, standalone=False, first_word=first_word)
        if main:
            self._add(analysis, s_idx, sent, start, end, standalone=True, first_word=first_word)

    @staticmethod
    def _is_participle(word: str) -> bool:
        lw = word.lower()
        return len(lw) > 4 and lw.endswith("ed") and lw not in _ED_NOUNS and word.islower() and "-" not in lw

    @staticmethod
    def _is_gerund(word: str) -> bool:
        lw = word.lower()
        return len(lw) > 5 and lw.endswith("ing") and word.islower() and "-" not in lw and lw not in _NOMINAL_ING

    @staticmethod
    def _verb_like_ing(tokens: list[Token], k: int) -> bool:
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

    def _add(
        self,
        analysis: _ChunkAnalysis,
        s_idx: int,
        sent: _Sentence,
        i: int,
        j: int,
        *,
        standalone: bool,
        first_word: int,
    ) -> None:
        tokens, kinds = sent.tokens, sent.kinds
        surface = _clean_ws(analysis.text[tokens[i].start : tokens[j - 1].end])
        key = normalise_name(surface)
        if not key or not _HAS_ALPHA_RE.search(key):
            return
        initial_title = i == first_word and kinds[i] == "cap" and tokens[i].text[1:].islower()
        # Capitalised words count as technical except the sentence-initial one.
        technical = any(kinds[k] in _TECH_KINDS or (kinds[k] == "cap" and k != first_word) for k in range(i, j))
        analysis.mentions.append(
            _Mention(key, surface, s_idx, i, j, technical, standalone=standalone, initial_title=initial_title)
        )

    def _apply_definitions(self, analysis: _ChunkAnalysis) -> None:
        """Turn "long form (ACR)" into one long-form mention; the acronym becomes an alias mention."""
        defs = find_acronym_definition_spans(analysis.text)
        if not defs:
            return
        for d in defs:
            long_key = normalise_name(d.long_form)
            short_key = normalise_name(d.acronym)
            if not long_key or not short_key or long_key == short_key:
                continue
            s_idx = next((k for k, s in enumerate(analysis.sentences) if s.start <= d.long_start < s.end), None)
            if s_idx is None:
                continue
            sent = analysis.sentences[s_idx]
            toks = [k for k, t in enumerate(sent.tokens) if t.start >= d.long_start and t.end <= d.long_end]
            if not toks:
                continue
            ti, tj = toks[0], toks[-1] + 1
            # Replace overlapping standalone phrases of that sentence by the long form.
            kept = []
            for m in analysis.mentions:
                if (
                    m.sent == s_idx
                    and not m.standalone
                    and ti <= m.tok_start
                    and m.tok_end <= tj
                    and not is_acronym(m.surface)
                ):
                    continue  # "BRidge" inside "BRidge Language Modeling (BRLM)"; "DNA" in "complementary DNA" stays
                if m.sent == s_idx and m.standalone and m.tok_start < tj and ti < m.tok_end and not m.alias:
                    if normalise_name(m.surface) == short_key:
                        kept.append(m)
                    continue
                kept.append(m)
            technical = any(sent.kinds[k] in ("acr", "mixed", "alnum") for k in range(ti, tj)) or any(
                sent.kinds[k] == "cap" for k in range(ti, tj)
            )
            initial_title = ti == 0 and sent.kinds[ti] == "cap"
            kept.append(
                _Mention(long_key, _clean_ws(d.long_form), s_idx, ti, tj, technical, initial_title=initial_title)
            )
            kept.sort(key=lambda m: (m.sent, m.tok_start, -m.tok_end))
            analysis.mentions = kept
            analysis.definitions.append((long_key, _clean_ws(d.long_form), d.acronym))

    # ---------------------------------------------------------------- document statistics

    def _document_stats(self, analyses: list[_ChunkAnalysis]) -> dict:
        acr_map: dict[str, str] = {}
        aliases: dict[str, list[str]] = {}
        for a in analyses:
            for long_key, _long, acronym in a.definitions:
                short_key = normalise_name(acronym)
                if short_key in acr_map or short_key == long_key:
                    continue
                acr_map[short_key] = long_key
                lst = aliases.setdefault(long_key, [])
                if acronym not in lst:
                    lst.append(acronym)
        mid_caps = {w for a in analyses for w in a.mid_caps}
        surfaces: dict[str, Counter] = {}
        first_seen: dict[tuple[str, str], int] = {}
        freq: Counter = Counter()
        df: Counter = Counter()
        technical: dict[str, bool] = {}
        next_words: dict[str, Counter] = {}
        order = 0
        for a in analyses:
            seen_here: dict[str, None] = {}
            for m in a.mentions:
                if m.key in acr_map:
                    m.key = acr_map[m.key]
                    m.alias = True
                # Sentence-initial capital: lower-case it unless the word is capitalised
                # mid-sentence somewhere in the document or the phrase is title-cased.
                if (
                    m.initial_title
                    and m.surface.split(" ", 1)[0] not in mid_caps
                    and m.surface[1:].lower() == m.surface[1:]
                ):
                    m.surface = m.surface[0].lower() + m.surface[1:]
                if not m.alias:
                    counter = surfaces.setdefault(m.key, Counter())
                    counter[m.surface] += 1
                    first_seen.setdefault((m.key, m.surface), order)
                    order += 1
                if m.standalone:
                    freq[m.key] += 1
                technical[m.key] = technical.get(m.key, False) or m.technical or m.alias
                sent = a.sentences[m.sent]
                if m.tok_end < len(sent.tokens):
                    next_words.setdefault(m.key, Counter())[sent.tokens[m.tok_end].text.lower()] += 1
                seen_here.setdefault(m.key, None)
            for key in seen_here:
                df[key] += 1
        names: dict[str, str] = {}
        for key, counter in surfaces.items():
            names[key] = min(counter, key=lambda s: (-counter[s], first_seen[(key, s)]))
        types: dict[str, str] = {}
        for key, name in names.items():
            cue = any(w in _GENE_CUES for w in next_words.get(key, ()))
            types[key] = self._guess_type(name, cue)
        return {
            "acr_map": acr_map,
            "aliases": aliases,
            "names": names,
            "freq": freq,
            "df": df,
            "n_chunks": max(1, len(analyses)),
            "technical": technical,
            "types": types,
            "fallback_type": _fallback_type(self.entity_types),
            # in a short text (an abstract) every phrase counts; in a paper one-off phrases are noise
            "phrase_freq": 1 if sum(len(a.text) for a in analyses) < SHORT_DOCUMENT_CHARS else self.min_phrase_freq,
        }

    def _keep(self, key: str, doc: dict) -> bool:
        if key not in doc["names"]:
            return False
        words = key.split()
        if not words or len(words) > self.max_words:
            return False
        if all(
            w in STOPWORDS
            or w in GENERIC_WORDS
            or w in GENERIC_ADJECTIVES
            or w in LEADING_MODIFIERS
            or not _HAS_ALPHA_RE.search(w)
            for w in words
        ):
            return False
        if " " not in doc["names"][key]:  # one token ("task-oriented" is one word here)
            if doc["technical"].get(key) or key in doc["aliases"]:
                return len(key) >= 2
            if len(key) < 3 or not key.replace("'", "").replace(" ", "").isalpha():
                return False
            if _looks_adjective(key):
                return False
            # Ordinary single words need repeated mentions unless their type is recognised
            # ("accuracy" -> Metric, "classification" -> Task, "glucose" -> Drug/Compound).
            return doc["freq"][key] >= self.min_single_word_freq or doc["types"][key] != doc["fallback_type"]
        # Plain phrases seen once ("time spent", "direct effects") make a graph noisy and slow to
        # embed; technical, typed or repeated phrases are kept.
        return (doc["freq"][key] >= doc["phrase_freq"] or doc["technical"].get(key) or key in doc["aliases"]
                or doc["types"][key] != doc["fallback_type"])

    # ---------------------------------------------------------------- records

    def _emit(self, a: _ChunkAnalysis, doc: dict) -> Extraction:
        out = Extraction()
        kept_mentions = [m for m in a.mentions if self._keep(m.key, doc)]
        sentence_text = [_clean_ws(a.text[s.start : s.end]) for s in a.sentences]
        # Entities, in order of first appearance.
        first_sentence: dict[str, int] = {}
        for m in kept_mentions:
            first_sentence.setdefault(m.key, m.sent)
        for key, s_idx in first_sentence.items():
            out.entities.append(
                EntityRecord(
                    name=doc["names"][key],
                    type=doc["types"][key],
                    description=_trim(sentence_text[s_idx], DESCRIPTION_CHARS),
                    chunk_id=a.chunk_id,
                    aliases=list(doc["aliases"].get(key, [])),
                )
            )
        out.relations = self._relations(a, kept_mentions, doc, sentence_text)
        out.keywords = self._keywords(a, kept_mentions, doc)
        return out

    def _relations(
        self, a: _ChunkAnalysis, mentions: list[_Mention], doc: dict, sentence_text: list[str]
    ) -> list[RelationRecord]:
        first_pos: dict[str, tuple[int, int]] = {}
        by_sentence: dict[int, list[_Mention]] = {}
        for m in mentions:
            first_pos.setdefault(m.key, (m.sent, m.tok_start))
            by_sentence.setdefault(m.sent, []).append(m)
        pairs: dict[tuple[str, str], dict] = {}
        for s_idx, ms in by_sentence.items():
            keys: dict[str, list[_Mention]] = {}
            for m in ms:
                keys.setdefault(m.key, []).append(m)
            key_list = list(keys)
            for x in range(len(key_list)):
                # Each entity pairs with at most the next PAIR_WINDOW entities of the sentence, so a
                # run-on "sentence" (a table, a list) stays linear instead of quadratic.
                for y in range(x + 1, min(len(key_list), x + 1 + PAIR_WINDOW)):
                    ka, kb = key_list[x], key_list[y]
                    if first_pos[kb] < first_pos[ka]:
                        ka, kb = kb, ka
                    best = None
                    for ma in keys[ka]:
                        for mb in keys[kb]:
                            if ma.tok_start < mb.tok_end and mb.tok_start < ma.tok_end:
                                continue  # nested/overlapping: same phrase
                            left, right = (ma, mb) if ma.tok_start < mb.tok_start else (mb, ma)
                            dist = right.tok_start - left.tok_end
                            if best is None or dist < best[0]:
                                best = (dist, left, right)
                    if best is None:
                        continue
                    stat = pairs.get((ka, kb))
                    if stat is None:
                        pairs[(ka, kb)] = {
                            "count": 1,
                            "dist": best[0],
                            "sent": s_idx,
                            "between": (best[1].tok_end, best[2].tok_start),
                            "pos": (first_pos[ka], first_pos[kb]),
                        }
                    else:
                        stat["count"] += 1
                        stat["dist"] = min(stat["dist"], best[0])
        if not pairs:
            return []

        def score(item: tuple[tuple[str, str], dict]) -> tuple:
            (ka, kb), st = item
            tech = int(bool(doc["technical"].get(ka))) + int(bool(doc["technical"].get(kb)))
            multi = int(" " in ka) + int(" " in kb)
            value = st["count"] + 0.5 * tech + 0.25 * multi + 1.0 / (1.0 + st["dist"] / 3.0)
            return (-value, st["sent"], st["pos"])

        ranked = sorted(pairs.items(), key=score)[: self.max_relations_per_chunk]
        ranked.sort(key=lambda item: (item[1]["sent"], item[1]["pos"]))
        out = []
        mention_tokens: dict[int, set[int]] = {}
        for m in mentions:
            mention_tokens.setdefault(m.sent, set()).update(range(m.tok_start, m.tok_end))
        for (ka, kb), st in ranked:
            sent = a.sentences[st["sent"]]
            lo, hi = st["between"]
            verbs: list[str] = []
            others: list[str] = []
            inside = mention_tokens.get(st["sent"], set())
            for k in range(lo, hi):
                cls = sent.classes[k]
                word = sent.tokens[k].text.lower()
                if len(word) < 3 or not word.isalpha():
                    continue
                if cls == _V and word not in verbs:
                    verbs.append(word)
                elif (
                    cls == _W
                    and k not in inside
                    and word not in others
                    and word not in LEADING_MODIFIERS
                    and word not in GENERIC_ADJECTIVES
                ):
                    others.append(word)
            out.append(
                RelationRecord(
                    source=doc["names"][ka],
                    target=doc["names"][kb],
                    description=_trim(sentence_text[st["sent"]], RELATION_DESCRIPTION_CHARS),
                    chunk_id=a.chunk_id,
                    keywords=(verbs + others)[:3],
                    strength=float(st["count"]),
                    directed=False,
                )
            )
        return out

    def _keywords(self, a: _ChunkAnalysis, mentions: list[_Mention], doc: dict) -> list[KeywordRecord]:
        if self.keywords_per_chunk <= 0 or not mentions:
            return []
        # Short chunks get fewer keyphrases: one per WORDS_PER_KEYWORD words, at least two.
        n_words = sum(1 for s in a.sentences for c in s.classes if c not in (_P, _X))
        limit = min(self.keywords_per_chunk, max(2, n_words // WORDS_PER_KEYWORD))
        tf: Counter = Counter()
        first: dict[str, int] = {}
        for m in mentions:
            tf[m.key] += 1
            first.setdefault(m.key, m.sent)
        n = doc["n_chunks"]
        n_sent = max(1, len(a.sentences))
        scored = []
        for key, count in tf.items():
            words = key.split()
            content = [w for w in words if w not in STOPWORDS]
            support = sum(math.log1p(a.word_tf.get(w, 0)) for w in content) / max(1, len(content))
            idf = math.log(1.0 + n / doc["df"][key])
            length = 1.0 + 0.5 * min(len(words) - 1, 3)
            position = 1.0 + 0.3 * (1.0 - first[key] / n_sent)
            tech = 1.2 if doc["technical"].get(key) else 1.0
            generic_penalty = 0.5 if any(w in GENERIC_WORDS for w in words[-1:]) else 1.0
            value = (1.0 + math.log(count)) * (0.5 + support) * idf * length * position * tech * generic_penalty
            scored.append((-value, first[key], key))
        scored.sort()
        chosen: list[tuple[str, set[str]]] = []
        for _neg, _first, key in scored:
            words = set(key.split())
            if any(words <= c for _k, c in chosen):
                continue
            chosen.append((key, words))
            if len(chosen) >= limit:
                break
        return [KeywordRecord(text=doc["names"][k], chunk_id=a.chunk_id) for k, _w in chosen]
