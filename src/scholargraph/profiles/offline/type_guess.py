"""Type guessing of the offline extractor: an entity name -> one of the configured types.

A documented heuristic (heads, suffixes, word lists, symbol shapes), not a classifier; see
:func:`guess_type`. Type names are matched through aliases, so "GeneOrGeneProduct" or
"OtherScientificTerm" work as well as "Gene/Protein" or "Concept".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...text.acronyms import is_acronym
from ...text.names import fold_plural
from .words import HAS_DIGIT_RE, MIXED_RE, word_set

DEFAULT_ENTITY_TYPES: tuple[str, ...] = ("Task", "Method", "Model", "Dataset", "Metric", "Concept")

_GENE_RE = re.compile(r"(?:[A-Z][A-Za-z]{0,5}|[a-z]{1,2})-?\d{1,4}[A-Za-z]{0,2}")
_VARIANT_RE = re.compile(
    r"(?:[cgpmnr]\.[A-Za-z0-9_>*+\-]+|rs\d{3,}|[ACDEFGHIKLMNPQRSTVWY]\d{2,5}[ACDEFGHIKLMNPQRSTVWY*]"
    r"|-?\d+[A-Za-z]*>[A-Za-z]+|[A-Z][a-z]{2}\d+(?:[A-Z][a-z]{2}|X|\*|fs\w*|del|dup))"
)

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

_DATASET_HEADS = word_set("dataset corpus treebank benchmark database databank")
_METRIC_HEADS = word_set(
    "accuracy precision recall f1 f-score f-measure f1-score bleu rouge meteor cider perplexity auc auroc "
    "mrr ndcg wer cer metric map@k"
)
_TASK_HEADS = word_set(
    """
    task classification recognition translation parsing extraction detection generation segmentation
    summarization summarisation answering tagging labeling labelling retrieval prediction identification
    resolution disambiguation understanding categorization categorisation linking captioning completion
    forecasting localization localisation tracking recommendation
    """
)
_METHOD_HEADS = word_set(
    """
    model network algorithm method approach technique framework architecture classifier encoder decoder
    transformer parser tagger learning optimization optimisation regularization regularisation embedding
    attention mechanism procedure strategy heuristic kernel regression machine tree forest perceptron
    autoencoder lstm cnn rnn gan modeling modelling
    """
)
_MODEL_HEADS = word_set("model network transformer encoder decoder classifier autoencoder perceptron machine")
_DISEASE_WORDS = word_set(
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
_DISEASE_NOT = word_set(
    "diploma stroma aroma genoma chroma coma soma hypothesis analysis basis diagnosis prognosis emphasis apoptosis "
    "mitosis meiosis osmosis symbiosis hypnosis synthesis biosynthesis homeostasis anastomosis"
)
_DRUG_SUFFIXES = tuple(
    """
    mab nib vir cillin mycin azole pril sartan olol statin prazole parin dipine caine amine oxacin cycline afil
    tidine profen olone asone azepam barbital dopa azine ine ide ol ate one acid
    """.split()
)
_DRUG_WORDS = word_set(
    "drug compound inhibitor agonist antagonist antibiotic chemotherapy steroid hormone toxin acid "
    "ethanol alcohol glucose iodide nicotine caffeine cocaine oxygen iron calcium sodium potassium zinc "
    "copper lipid cholesterol placebo"
)
_DRUG_NOT = word_set(
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
) - word_set("alcohol cholesterol acid amine")
ORGANISM_WORDS = word_set(
    """
    human mouse mice rat yeast zebrafish drosophila bacteria bacterium virus patient woman women man men
    murine rodent primate monkey macaque dog cat pig cattle chicken arabidopsis fly worm
    """
)
_PATHWAY_HEADS = word_set("pathway cascade")
_ANATOMY_WORDS = word_set(
    """
    liver kidney brain heart lung muscle blood serum plasma tissue cortex hippocampus thyroid gland mucosa bone
    skin retina artery vein intestine colon stomach pancreas spleen cerebellum striatum myocardium aorta
    breast prostate ovary testis uterus placenta cornea lens cochlea spinal cord tendon cartilage
    """
)
_CELL_WORDS = word_set(
    """
    macrophage neuron fibroblast hepatocyte lymphocyte monocyte keratinocyte astrocyte microglia cardiomyocyte
    adipocyte erythrocyte platelet neutrophil oocyte podocyte osteoblast osteoclast myoblast
    """
)
_ORG_WORDS = word_set(
    """
    university institute laboratory laboratories corporation inc ltd company consortium foundation ministry
    agency google microsoft openai facebook ibm amazon nvidia deepmind
    """
)
_GENE_HEADS = word_set(
    "gene protein receptor kinase enzyme transporter symporter channel antibody ligand mrna isoform subunit "
    "phosphatase polymerase synthase oxidase reductase ligase protease transferase peptidase lipase"
)
GENE_CUES = word_set("gene genes protein proteins expression mutation mutations receptor mrna promoter allele alleles")


def _norm_type(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name.casefold())


def resolve_type(category: str, entity_types: Sequence[str]) -> str | None:
    table = {_norm_type(t): t for t in entity_types}
    for alias in _TYPE_ALIASES.get(category, ()):
        if alias in table:
            return table[alias]
    return None


def fallback_type(entity_types: Sequence[str]) -> str:
    return resolve_type("concept", entity_types) or (entity_types[-1] if entity_types else "Concept")


def _ends_with_any(word: str, suffixes: tuple[str, ...], min_len: int = 5) -> bool:
    return len(word) >= min_len and word.endswith(suffixes)


@dataclass(frozen=True)
class _Name:
    """An entity name split the ways the category tests look at it."""

    text: str
    tokens: list[str]
    words: list[str]
    head: str
    gene_cue: bool

    @classmethod
    def of(cls, name: str, gene_cue: bool) -> _Name:
        tokens = name.split()
        words = [t.lower() for t in tokens]
        head = fold_plural(words[-1]).lower() if words else ""
        return cls(name, tokens, words, head, gene_cue)

    @property
    def single(self) -> bool:
        return len(self.tokens) == 1


def _is_variant(n: _Name) -> bool:
    return any(_VARIANT_RE.fullmatch(t) for t in n.tokens)


def _is_dataset(n: _Name) -> bool:
    return n.head in _DATASET_HEADS or (len(n.words) >= 2 and n.words[-2:] == ["data", "set"])


def _is_metric(n: _Name) -> bool:
    return n.head in _METRIC_HEADS or n.head == "score" or n.text.lower().endswith("error rate")


def _is_task(n: _Name) -> bool:
    return n.head in _TASK_HEADS


def _is_named_cell_line(n: _Name) -> bool:
    """"COS-7 cells", "HEK293 line": a symbol followed by cell/line."""
    return (n.head in ("cell", "line") and len(n.tokens) >= 2
            and bool(_GENE_RE.fullmatch(n.tokens[0]) or is_acronym(n.tokens[0])))


def _is_cell_type(n: _Name) -> bool:
    return n.head in _CELL_WORDS or n.head.endswith("cyte") or (n.head == "cell" and len(n.tokens) >= 2)


def _is_pathway(n: _Name) -> bool:
    return n.head in _PATHWAY_HEADS


def _is_organization(n: _Name) -> bool:
    return any(w in _ORG_WORDS for w in n.words) and len(n.tokens) >= 2


def _is_disease(n: _Name) -> bool:
    return (
        any(w in _DISEASE_WORDS for w in n.words)
        or (n.head not in _DISEASE_NOT and _ends_with_any(n.head, _DISEASE_SUFFIXES))
        or re.fullmatch(r"hyp(?:o|er)\w+ism", n.head) is not None
    )


def _is_organism(n: _Name) -> bool:
    return n.head in ORGANISM_WORDS or n.head.endswith("virus") or n.text.lower() in ("e. coli", "escherichia coli")


def _is_gene(n: _Name) -> bool:
    gene_symbol = n.single and _GENE_RE.fullmatch(n.tokens[0]) and HAS_DIGIT_RE.search(n.tokens[0])
    return n.head in _GENE_HEADS or n.gene_cue or bool(gene_symbol)


def _is_anatomy(n: _Name) -> bool:
    return n.head in _ANATOMY_WORDS


def _is_drug(n: _Name) -> bool:
    drug_like = n.head in _DRUG_WORDS or (n.head not in _DRUG_NOT and _ends_with_any(n.head, _DRUG_SUFFIXES, 6))
    lone_symbol = n.single and bool(is_acronym(n.tokens[0]) or HAS_DIGIT_RE.search(n.tokens[0]))
    return drug_like and not lone_symbol


def _is_symbolic_model(n: _Name) -> bool:
    """Symbolic names (acronyms, CamelCase, letters+digits) -- not merely capitalised words -- alone or
    before a method-like head ("BERT", "GPT-4", "BERT model")."""
    symbolic = any(is_acronym(t) or MIXED_RE.search(t) or (HAS_DIGIT_RE.search(t) and len(t) > 1) for t in n.tokens)
    return symbolic and (n.single or n.head in _METHOD_HEADS)


def _is_model(n: _Name) -> bool:
    return n.head in _MODEL_HEADS


def _is_method(n: _Name) -> bool:
    return n.head in _METHOD_HEADS


# (category, test) in the order guess_type tries them; a category may be reached by several tests.
_CATEGORY_TESTS: tuple[tuple[str, Callable[[_Name], bool]], ...] = (
    ("variant", _is_variant),
    ("dataset", _is_dataset),
    ("metric", _is_metric),
    ("task", _is_task),
    ("cellline", _is_named_cell_line),
    ("cellline", _is_cell_type),
    ("pathway", _is_pathway),
    ("organization", _is_organization),
    ("disease", _is_disease),
    ("organism", _is_organism),
    ("gene", _is_gene),
    ("anatomy", _is_anatomy),
    ("drug", _is_drug),
    ("model", _is_symbolic_model),
    ("model", _is_model),
    ("method", _is_method),
)


def name_categories(name: str, gene_cue: bool) -> list[str]:
    """Heuristic categories for ``name``, most specific first (see :func:`guess_type`)."""
    parsed = _Name.of(name, gene_cue)
    return [category for category, test in _CATEGORY_TESTS if test(parsed)]


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
    for category in name_categories(name, gene_cue):
        resolved = resolve_type(category, entity_types)
        if resolved:
            return resolved
    return fallback_type(entity_types)
