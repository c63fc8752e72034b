"""Entity resolution (scholargraph.graph.resolve): name rules, clique partition, blocking.

Behaviour tests use real vectors from the local embedding model over "name: description",
loaded once per module.
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from scholargraph.graph.resolve import (
    Candidate,
    ResolutionSettings,
    acronym_matches,
    clique_partition,
    explain,
    link_pairs,
    name_similarity,
    resolve,
    types_compatible,
)


@pytest.fixture(scope="module")
def embed():
    from scholargraph.config import EmbeddingSettings
    from scholargraph.llm.embeddings import LocalEmbedder

    embedder = LocalEmbedder(EmbeddingSettings())
    cache: dict[str, np.ndarray] = {}

    def make(cid: str, name: str, type_: str, description: str, aliases: list[str] | None = None) -> Candidate:
        text = f"{name}: {description}"
        if text not in cache:
            cache[text] = asyncio.run(embedder.embed([text]))[0]
        return Candidate(cid, name, type_, description, list(aliases or []), cache[text])

    return make


def together(groups: list[list[str]], *ids: str) -> bool:
    return any(set(ids) <= set(g) for g in groups)


def apart(groups: list[list[str]], a: str, b: str) -> bool:
    return not together(groups, a, b)


# --------------------------------------------------------------------------------------------
# Merges (real embeddings)
# --------------------------------------------------------------------------------------------


def test_rag_merges_with_its_definition(embed):
    cands = [
        embed("e1", "Retrieval-Augmented Generation", "Method",
              "A method that grounds the answers of a language model in documents retrieved for the question."),
        embed("e2", "RAG", "Method", "RAG retrieves passages from an external corpus and feeds them to the "
                                     "language model that generates the answer."),
    ]
    groups = resolve(cands)
    assert groups == [["e1", "e2"]]  # the full form is kept first


def test_llm_llms_and_large_language_models_are_one_entity(embed):
    cands = [
        embed("a", "LLMs", "Model", "LLMs such as GPT-4 generate fluent answers but may hallucinate."),
        embed("b", "large language models", "Model",
              "Large language models are trained on web-scale text to generate answers."),
        embed("c", "LLM", "Model", "The retrieved passages are given to an LLM that writes the final answer."),
    ]
    groups = resolve(cands)
    assert len(groups) == 1 and set(groups[0]) == {"a", "b", "c"}
    assert groups[0][0] == "b"  # not an acronym: kept


def test_course_code_merges_with_code_and_title(embed):
    cands = [
        embed("c1", "SF1625", "Course", "SF1625 is a prerequisite for the multivariable calculus course."),
        embed("c2", "SF1625 Calculus in One Variable", "Course",
              "SF1625 Calculus in One Variable covers limits, derivatives and integrals."),
    ]
    assert resolve(cands) == [["c2", "c1"]]


def test_aliases_are_matched(embed):
    cands = [
        embed("x", "Retrieval-Augmented Generation", "Method", "Retrieval-augmented generation for question answering.",
              aliases=["RAG"]),
        embed("y", "RAG", "Concept", "RAG pipelines retrieve passages before generating an answer."),
    ]
    assert resolve(cands) == [["x", "y"]]


def test_typo_and_spelling_variants_merge(embed):
    cands = [
        embed("v1", "von Willebrand factor", "Gene/Protein", "Plasma von Willebrand factor multimers were analysed."),
        embed("v2", "von Willerand factor", "Gene/Protein", "The von Willerand factor antigen level was 42%."),
        embed("h1", "hash-tag recommendation", "Task", "We study hash-tag recommendation for microblogs."),
        embed("h2", "hashtag recommendation", "Task", "Hashtag recommendation suggests tags for a post."),
    ]
    groups = resolve(cands)
    assert together(groups, "v1", "v2") and together(groups, "h1", "h2")


# --------------------------------------------------------------------------------------------
# Near-misses (real embeddings, similar descriptions)
# --------------------------------------------------------------------------------------------

NEAR_MISSES = [
    ("BERT", "RoBERTa", "Model", "a transformer language model pretrained with masked language modelling on English text"),
    ("GPT-3", "GPT-4", "Model", "a large autoregressive language model released by OpenAI"),
    ("IL1A", "IL1B", "Gene/Protein", "an interleukin-1 family cytokine gene that drives inflammation"),
    ("ResNet-50", "ResNet-101", "Model", "a deep residual convolutional network used as an image backbone"),
    ("Transformer", "Transformer-XL", "Model", "a self-attention sequence model for language modelling"),
    ("SF1625", "SF1626", "Course", "a first-year mathematics course at KTH"),
    ("BCI", "BCI-O", "Concept", "brain-computer interfaces that read neurophysiological signals"),
    ("MHC class I", "MHC class II", "Gene/Protein", "major histocompatibility complex molecules presenting antigens"),
]


@pytest.mark.parametrize(("a", "b", "type_", "description"), NEAR_MISSES, ids=[f"{a}-{b}" for a, b, *_ in NEAR_MISSES])
def test_near_misses_stay_apart(embed, a, b, type_, description):
    ca = embed("a", a, type_, f"{a} is {description}.")
    cb = embed("b", b, type_, f"{b} is {description}.")
    assert explain(ca, cb)["cosine"] > 0.6  # the vectors alone would merge them
    assert resolve([ca, cb]) == []


def test_narrower_names_do_not_merge(embed):
    pairs = [
        ("hypothyroidism", "congenital hypothyroidism", "Disease"),
        ("language models", "large language models", "Model"),
        ("Hodgkin lymphoma", "non-Hodgkin lymphoma", "Disease"),
        ("IL-6", "IL-6 receptor", "Gene/Protein"),
    ]
    for a, b, t in pairs:
        ca = embed("a", a, t, f"{a} was studied in this cohort.")
        cb = embed("b", b, t, f"{b} was studied in this cohort.")
        assert resolve([ca, cb]) == [], (a, b)


def test_type_incompatibility_blocks_merging(embed):
    gene = embed("g", "BMD", "Gene/Protein", "BMD is the Becker muscular dystrophy gene on the X chromosome.")
    disease = embed("d", "BMD", "Disease", "BMD is the Becker muscular dystrophy gene on the X chromosome.")
    variant = embed("v", "BRCA1", "Genetic Variation", "BRCA1 carriers have a high risk of breast cancer.")
    gene2 = embed("g2", "BRCA1", "Gene/Protein", "BRCA1 carriers have a high risk of breast cancer.")
    assert resolve([gene, disease]) == []
    assert resolve([variant, gene2]) == []
    # Method ~ Model ~ Tool, and the catch-all Concept, are compatible.
    m = embed("m", "BERT", "Method", "BERT is a pretrained transformer encoder.")
    t = embed("t", "BERT", "Tool", "BERT is a pretrained transformer encoder.")
    c = embed("c", "bert", "Concept", "BERT is a pretrained transformer encoder.")
    assert resolve([m, t, c]) == [["c", "m", "t"]]  # "bert" is not written as an acronym: kept first


def test_same_acronym_in_unrelated_contexts_stays_apart(embed):
    # Sentences of BioRED dev PMIDs 15096016 (Parkinson's disease) and 17445520 (panic disorder).
    pd1 = embed("p1", "PD", "Disease", "A resurgence of interest in the surgical treatment of Parkinson's disease (PD) "
                                       "came with the rediscovery of posteroventral pallidotomy by Laitinen in 1985.")
    pd2 = embed("p2", "PD", "Disease", "Our aim was to observe if patients with panic disorder (PD) and patients with "
                                       "major depression with panic attacks respond in a similar way to the induction "
                                       "of panic attacks by an oral caffeine challenge test.")
    assert explain(pd1, pd2)["cosine"] < ResolutionSettings().alias_threshold
    assert resolve([pd1, pd2]) == []


# --------------------------------------------------------------------------------------------
# Transitivity: cliques, not connected components
# --------------------------------------------------------------------------------------------


def test_clique_partition_keeps_links_transitive():
    # a-b and b-c but not a-c: never all three in one group.
    groups = clique_partition(["a", "b", "c"], [("a", "b"), ("b", "c")])
    assert groups == [["a", "b"]]
    # a 4-clique plus a pendant node: the clique wins, the pendant stays alone.
    links = [(x, y) for x in "wxyz" for y in "wxyz" if x < y] + [("z", "p")]
    assert clique_partition(list("pwxyz"), links) == [["w", "x", "y", "z"]]


def test_clique_partition_is_deterministic_and_capped():
    nodes = [f"n{i}" for i in range(7)]
    links = [(a, b) for a in nodes for b in nodes if a < b]
    groups = clique_partition(nodes, list(reversed(links)), max_group=3)
    assert groups == [["n0", "n1", "n2"], ["n3", "n4", "n5"]]  # n6 alone: not returned
    assert clique_partition(nodes, links, max_group=3) == groups
    assert clique_partition(["a", "b"], [("a", "zz")]) == []  # unknown node ignored


def test_resolve_ambiguous_acronym_joins_one_reading_only():
    # "IR" spells both long forms; the long forms are not the same thing.
    cands = [
        Candidate("ir", "IR", "Concept"),
        Candidate("r1", "information retrieval", "Task"),
        Candidate("r2", "individual rationality", "Concept"),
    ]
    links = link_pairs(cands)
    assert set(links) == {("ir", "r1"), ("ir", "r2")}
    groups = resolve(cands)
    assert len(groups) == 1 and len(groups[0]) == 2 and groups[0][1] == "ir"


# --------------------------------------------------------------------------------------------
# Name rules (no model)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("short", "long"), [
    ("RAG", "Retrieval-Augmented Generation"),
    ("LLMs", "large language models"),
    ("IoT", "Internet of Things"),
    ("nDCG", "Normalized Discounted Cumulative Gain"),
    ("HDAC", "histone deacetylase"),
    ("PDB", "Paget's disease of bone"),
    ("NSAIDs", "non-steroidal anti-inflammatory drugs"),
    ("STAT3", "signal transducer and activator of transcription 3"),
    ("5-FU", "5-fluorouracil"),
    ("SMV thrombosis", "superior mesenteric vein thrombosis"),
    ("type 2B VWD", "type 2B von Willebrand disease"),
    ("TNNT", "The NLP-NER Toolkit"),
    # letters at word, hyphen-part, capital or morpheme starts (and the letter after one)
    ("mRNA", "messenger RNA"),
    ("DNA", "deoxyribonucleic acid"),
    ("IL-6", "interleukin 6"),
    ("AIDS", "acquired immunodeficiency syndrome"),
    ("PKU", "phenylketonuria"),
    ("MDR TB", "multidrug-resistant tuberculosis"),
    ("MORPA", "MORphological PArser"),
    ("TRAF2", "TNFR-associated factor 2"),
    ("MeSH", "Medical Subject Headings"),
    ("apoE", "apolipoprotein E"),
    ("OWL", "Web Ontology Language"),  # letters in another order: a known exception
])
def test_acronyms_match(short, long):
    assert acronym_matches(short, long)


@pytest.mark.parametrize(("short", "long"), [
    ("LLM", "language models"),
    ("SAN", "Semantic Sensor Network"),
    ("STAT3", "signal transducer and activator of transcription 5"),
    ("GPT", "Retrieval-Augmented Generation"),
    # letters from inside words that no piece of the word starts (issue 27 item 11: wrong merges on ASKG)
    ("ISA", "Israel"),
    ("RDF", "Random Forest"),
    ("SSN", "Session"),
    ("CISC", "ChannelingSpec"),
    ("IoT", "interfaces"),
])
def test_acronyms_do_not_match(short, long):
    assert not acronym_matches(short, long)


def test_an_acronym_spelt_from_inside_words_needs_vectors_that_agree():
    """Rule d asks only that the vectors do not disagree (cosine >= 0.3) when the spelling is the
    evidence: letters at the starts of words or of pieces of words. "Random Forest" holds R, D, F
    and "Israel" I, S, A only inside words: on ASKG they merged with "RDF" and "ISA" at cosines of
    0.31 (issue 27 item 11). Such letters now need the vectors to agree (cosine >= 0.5), as they do
    for "DOX" / "doxorubicin" in one abstract; a compound of capitalised words ("ChannelingSpec")
    gives its inner letters to no acronym."""

    def at(cos: float) -> np.ndarray:
        return np.array([cos, np.sqrt(1 - cos * cos)], dtype=np.float32)

    base = np.array([1.0, 0.0], dtype=np.float32)
    cands = [Candidate("a", "RDF", "Concept", vector=base), Candidate("b", "Random Forest", "Method", vector=at(0.31)),
             Candidate("c", "ISA", "Concept", vector=base), Candidate("d", "Israel", "Location", vector=at(0.31)),
             Candidate("e", "Resource Description Framework", "Concept", vector=at(0.4)),
             Candidate("f", "DOX", "Chemical", vector=base), Candidate("g", "doxorubicin", "Chemical", vector=at(0.8)),
             Candidate("h", "CISC", "Concept", vector=base), Candidate("i", "ChannelingSpec", "Concept", vector=at(0.9))]
    assert resolve(cands) == [["e", "a"], ["g", "f"]]
    # an acronym defined by its candidate's other name stands for that name: it spells no other from inside
    # words ("actuation effect" took "Actuation-Actuator-Effect (AAE)" at 0.54 on ASKG, issue 27 item 11)
    assert resolve([Candidate("l", "Actuation-Actuator-Effect (AAE)", "Concept", vector=base),
                    Candidate("m", "actuation effect", "Concept", vector=at(0.54)),
                    Candidate("n", "AAE", "Concept", vector=at(0.54))]) == [["l", "n"]]
    # two names of one sentence: their vectors are no evidence, the definition is ("carbamazepine (CBZ)")
    sentence = "Patients received carbamazepine (CBZ) twice daily."
    assert resolve([Candidate("j", "CBZ", "Chemical", sentence, vector=base),
                    Candidate("k", "carbamazepine", "Chemical", sentence, vector=at(0.35))]) == [["k", "j"]]


def test_a_namespace_prefix_is_not_spelt_by_an_acronym():
    """An ontology term written with its namespace prefix ("bci:Aspect", "sosa:Actuation") is its
    local part in that namespace: "bci:Aspect" is an "Aspect" of the BCI ontology, not an expansion
    of "BCI". On the six ASKG papers "Brain-Computer Interfaces (BCI)" took "bci:Aspect" (the
    letters b, c, i inside "bciAspect", cosine above 0.5: issue 27 item 11). The local parts are
    compared within one namespace; two namespaces, or a namespace and none, never name one thing by
    their names alone."""

    def at(cos: float) -> np.ndarray:
        return np.array([cos, np.sqrt(1 - cos * cos)], dtype=np.float32)

    base = np.array([1.0, 0.0], dtype=np.float32)
    assert not acronym_matches("BCI", "bci:Aspect") and not acronym_matches("BCI", "bci:Modality types")
    cands = [Candidate("a", "Brain-Computer Interfaces (BCI)", "Concept", vector=base),
             Candidate("b", "bci:Aspect", "Concept", vector=at(0.6)),
             Candidate("c", "bci:Aspects", "Concept", vector=at(0.6)),
             Candidate("d", "sosa:Aspect", "Concept", vector=at(0.6)),
             Candidate("e", "Aspect", "Concept", vector=at(0.6))]
    assert resolve(cands) == [["b", "c"]]
    # within a namespace the local parts follow the rules: an acronym there spells its long form there
    assert resolve([Candidate("f", "ex:RAG", "Method", vector=base),
                    Candidate("g", "ex:Retrieval-Augmented Generation", "Method", vector=at(0.6)),
                    Candidate("h", "Retrieval-Augmented Generation", "Method", vector=at(0.6))]) == [["g", "f"]]


def test_types_compatibility_table():
    assert types_compatible("Method", "Model") and types_compatible("Model", "Tool")
    assert types_compatible("Task", "Concept") and types_compatible("", "Disease")
    assert types_compatible("Gene/Protein", "GeneOrGeneProduct")
    assert types_compatible("Disease", "DiseaseOrPhenotypicFeature") and types_compatible("Disease", "Phenotype")
    assert not types_compatible("Gene/Protein", "Genetic Variation")
    assert not types_compatible("Disease", "Gene/Protein")
    assert not types_compatible("Method", "Task")
    assert types_compatible("Course", "course") and not types_compatible("Course", "Skill")


def test_name_similarity_is_low_for_derived_model_names():
    assert name_similarity("BERT", "RoBERTa") < ResolutionSettings().name_threshold
    assert name_similarity("hash-tag recommendation task", "hashtag recommendation problem") >= 0.5


def test_vectors_missing_fall_back_to_names():
    cands = [Candidate("a", "ADAM-10", "Gene/Protein"), Candidate("b", "ADAM10", "Gene/Protein"),
             Candidate("c", "ADAM17", "Gene/Protein"), Candidate("d", "spironolactone", "Drug"),
             Candidate("e", "spiranolactone", "Drug"), Candidate("f", "quinine", "Drug"),
             Candidate("g", "quinidine", "Drug")]
    groups = resolve(cands)
    assert groups == [["a", "b"], ["d", "e"]]


def test_same_sentence_descriptions_are_not_vector_evidence():
    # Two names from one sentence: identical vectors up to the names. Rule f's trigram test must
    # not read that as agreement.
    sentence = "Urinary tetrahydrocortisol and tetrahydrocortisone were measured by GC-MS."
    v = np.ones(8, dtype=np.float32) / np.sqrt(8)
    a = Candidate("a", "tetrahydrocortisol", "Chemical", sentence, [], v)
    b = Candidate("b", "tetrahydrocortisone", "Chemical", sentence, [], v)
    assert explain(a, b)["same_description"] and resolve([a, b]) == []
    # ... while an acronym defined in that sentence still links.
    c = Candidate("c", "NBS", "Disease", "Nijmegen breakage syndrome (NBS) is a rare disease.", [], v)
    d = Candidate("d", "Nijmegen breakage syndrome", "Disease", "Nijmegen breakage syndrome (NBS) is a rare disease.",
                  [], v)
    assert resolve([c, d]) == [["d", "c"]]


def test_parentheses_in_names():
    cands = [Candidate("a", "alpha(1)", "Gene"), Candidate("b", "alpha(2)", "Gene"),
             Candidate("c", "SF1625 (5 credits)", "Course"), Candidate("d", "SF1624 (5 credits)", "Course"),
             Candidate("e", "Retrieval-Augmented Generation (RAG)", "Method"), Candidate("f", "RAG", "Method"),
             Candidate("g", "uroplakin (UP) III", "Gene"), Candidate("h", "uroplakin", "Gene")]
    assert resolve(cands) == [["e", "f"]]


def test_word_order_variants_merge():
    cands = [Candidate("a", "intelligibility prediction", "Task"),
             Candidate("b", "predictions of intelligibility", "Task")]
    assert resolve(cands) == [["a", "b"]]


# --------------------------------------------------------------------------------------------
# Blocking: the inverted-file neighbour search finds what the exact one finds
# --------------------------------------------------------------------------------------------


def test_inverted_file_neighbours_match_exact_search():
    rng = np.random.default_rng(1)
    centres = rng.standard_normal((60, 64)).astype(np.float32)
    cands = []
    for i in range(1200):
        v = centres[i % 60] + 0.5 * rng.standard_normal(64).astype(np.float32)
        v /= np.linalg.norm(v)
        cands.append(Candidate(f"c{i:04d}", f"item{i} representation learning", "Concept", "", [], v))
    # Similar names (trigram Jaccard ~0.8, no name-only rule) with near-identical vectors: only
    # the vector neighbours can propose these pairs (rule f).
    for i in range(0, 1200, 100):
        v = cands[i].vector + 0.01 * rng.standard_normal(64).astype(np.float32)
        cands.append(Candidate(f"d{i:04d}", f"item{i} representation learner", "Concept", "", [],
                               v / np.linalg.norm(v)))
    expected = {(f"c{i:04d}", f"d{i:04d}") for i in range(0, 1200, 100)}
    assert set(link_pairs(cands, ResolutionSettings())) == expected
    assert set(link_pairs(cands, ResolutionSettings(exact_limit=100))) == expected  # inverted-file path
