from __future__ import annotations

from dataclasses import asdict

import pytest

from scholargraph.models import Extraction
from scholargraph.profiles.offline.extractor import DEFAULT_ENTITY_TYPES, OfflineExtractor, guess_type
from scholargraph.text.names import normalise_name

PARAGRAPH = (
    "Retrieval-Augmented Generation (RAG) combines a dense retriever with large language models (LLMs). "
    "We evaluate RAG on the Natural Questions dataset and report exact match accuracy. "
    "Compared with BERT-base and GPT-4, our novel graph neural network improves the F1 score by 3.5 points "
    "(Smith et al., 2020). "
    "Graph neural networks capture relational structure, e.g. citation links, better than RoBERTa. "
    "Lewis et al. showed that RAG reduces hallucination in LLMs."
)


def names(ex: Extraction) -> list[str]:
    return [e.name for e in ex.entities]


def keys(ex: Extraction) -> list[str]:
    return [normalise_name(e.name) for e in ex.entities]


@pytest.fixture(scope="module")
def extraction() -> Extraction:
    return OfflineExtractor().extract_chunk("c1", PARAGRAPH)


def test_name_and_pure_records(extraction):
    assert OfflineExtractor.name == "offline"
    assert all(e.chunk_id == "c1" for e in extraction.entities)
    assert all(r.chunk_id == "c1" for r in extraction.relations)
    assert all(k.chunk_id == "c1" for k in extraction.keywords)
    assert extraction.failures == []


def test_acronym_definition_gives_one_entity_with_alias(extraction):
    rag = [e for e in extraction.entities if normalise_name(e.name) == "retrieval augmented generation"]
    assert len(rag) == 1
    assert rag[0].name == "Retrieval-Augmented Generation"
    assert rag[0].aliases == ["RAG"]
    # Later "RAG" mentions do not create a second entity.
    assert "rag" not in keys(extraction)
    llm = [e for e in extraction.entities if e.aliases == ["LLMs"]]
    assert [e.name for e in llm] == ["large language models"]
    assert "llm" not in keys(extraction)


def test_acronym_defined_in_an_earlier_chunk_maps_later_mentions():
    chunks = [
        ("c1", "We study Retrieval-Augmented Generation (RAG) for question answering."),
        ("c2", "In our experiments RAG outperforms a closed-book T5 model on TriviaQA."),
    ]
    ex = OfflineExtractor().extract_document(chunks)
    c2 = [e for e in ex.entities if e.chunk_id == "c2"]
    assert "Retrieval-Augmented Generation" in [e.name for e in c2]
    assert "rag" not in [normalise_name(e.name) for e in ex.entities]
    rel = [r for r in ex.relations if r.chunk_id == "c2" and "Retrieval-Augmented Generation" in (r.source, r.target)]
    assert rel, "the acronym mention takes part in relations under the long-form name"


def test_candidate_terms(extraction):
    found = set(names(extraction))
    for expected in (
        "Natural Questions dataset",
        "exact match accuracy",
        "BERT-base",
        "GPT-4",
        "graph neural network",
        "F1 score",
        "RoBERTa",
        "relational structure",
        "citation links",
    ):
        assert expected in found, expected
    # Modifiers trimmed, citations and generic words are not entities.
    assert "novel graph neural network" not in found
    assert not {"Smith", "points", "et al", "we"} & {n.split()[0] for n in found}


def test_graph_neural_network_plural_merges_with_singular(extraction):
    assert keys(extraction).count("graph neural network") == 1


def test_types(extraction):
    by_name = {e.name: e.type for e in extraction.entities}
    assert by_name["Natural Questions dataset"] == "Dataset"
    assert by_name["F1 score"] == "Metric"
    assert by_name["RoBERTa"] == "Model"
    assert by_name["graph neural network"] == "Model"
    assert by_name["relational structure"] == "Concept"
    assert set(by_name.values()) <= set(DEFAULT_ENTITY_TYPES)


def test_guess_type_uses_configured_list():
    bio = ["Gene/Protein", "Disease", "Drug/Compound", "Concept"]
    assert guess_type("TP53", bio) == "Gene/Protein"
    assert guess_type("breast cancer", bio) == "Disease"
    assert guess_type("hepatitis", bio) == "Disease"
    assert guess_type("imatinib", bio) == "Drug/Compound"
    assert guess_type("semantic parsing", bio) == "Concept"  # no Task type configured
    assert guess_type("semantic parsing", ["Task", "Method"]) == "Task"
    assert guess_type("something vague", ["Person", "Place"]) == "Place"  # last type without Concept
    assert guess_type("IL1B", ["GeneOrGeneProduct", "Other"]) == "GeneOrGeneProduct"


def test_description_is_first_sentence(extraction):
    gnn = next(e for e in extraction.entities if e.name == "graph neural network")
    assert gnn.description.startswith("Compared with BERT-base and GPT-4")
    assert len(gnn.description) <= 300


def test_cooccurrence_relation_has_sentence_description(extraction):
    rel = next(
        r for r in extraction.relations if {r.source, r.target} == {"graph neural network", "relational structure"}
    )
    assert rel.description == (
        "Graph neural networks capture relational structure, e.g. citation links, better than RoBERTa."
    )
    assert rel.source == "graph neural network"  # first appearance in the chunk comes first
    assert rel.directed is False
    assert rel.strength == 1.0
    assert rel.keywords == ["capture"]


def test_relation_strength_counts_sentences(extraction):
    rel = next(
        r
        for r in extraction.relations
        if {r.source, r.target} == {"Retrieval-Augmented Generation", "large language models"}
    )
    assert rel.strength == 2.0  # sentence 1 and the last sentence (via the aliases)
    assert rel.source == "Retrieval-Augmented Generation"


def test_relations_are_capped():
    sentence = " ".join(f"Term{i}X and" for i in range(30)) + " done."
    ex = OfflineExtractor(max_relations_per_chunk=30).extract_chunk("c", sentence)
    assert len(ex.entities) >= 25
    assert len(ex.relations) == 30


def test_keywords_non_empty_and_relevant():
    text = (
        "Graph neural networks learn node representations by message passing over the citation graph. "
        "We train graph neural networks for node classification on citation graphs such as Cora. "
        "Message passing aggregates neighbour features; deeper graph neural networks suffer from over-smoothing. "
        "Our results show that residual message passing reduces over-smoothing in graph neural networks."
    )
    ex = OfflineExtractor(keywords_per_chunk=5).extract_chunk("k1", text)
    kws = [normalise_name(k.text) for k in ex.keywords]
    assert 0 < len(kws) <= 5
    assert kws[0] == "graph neural network"
    assert "message passing" in kws
    assert len(set(kws)) == len(kws)


def test_keywords_use_document_statistics():
    chunks = [
        ("a", "Graph neural networks process citation graphs. Graph neural networks use message passing."),
        ("b", "Graph neural networks are evaluated on protein interaction networks and molecule property prediction."),
    ]
    ex = OfflineExtractor(keywords_per_chunk=3).extract_document(chunks)
    kb = [normalise_name(k.text) for k in ex.keywords if k.chunk_id == "b"]
    # The term shared by every chunk is outranked by what is specific to chunk b.
    assert kb and kb[0] != "graph neural network"


def test_deterministic():
    a = OfflineExtractor().extract_document([("c1", PARAGRAPH), ("c2", PARAGRAPH[::-1]), ("c3", PARAGRAPH)])
    b = OfflineExtractor().extract_document([("c1", PARAGRAPH), ("c2", PARAGRAPH[::-1]), ("c3", PARAGRAPH)])
    assert asdict(a) == asdict(b)
    assert asdict(OfflineExtractor().extract_chunk("c1", PARAGRAPH)) == asdict(
        OfflineExtractor().extract_chunk("c1", PARAGRAPH)
    )


def test_empty_and_junk_input():
    ex = OfflineExtractor()
    assert asdict(ex.extract_chunk("e", "")) == asdict(Extraction())
    junk = ex.extract_chunk("j", "1 2 3 ... ( ) [12] 0.05 %")
    assert junk.entities == [] and junk.relations == [] and junk.keywords == []
    assert ex.extract_document([]).entities == []


def test_structured_abstract_labels_and_biomedical_terms():
    text = (
        "OBJECTIVE: Iodide transport defect (ITD) is a rare disorder. "
        "RESULTS: Analysis of the NIS gene revealed a c.1314del deletion; TP53 and BRCA1 were normal. "
        "Treatment with imatinib reduced glucose levels in mice."
    )
    types = ["Gene/Protein", "Disease", "Drug/Compound", "Organism", "Variant", "Concept"]
    ex = OfflineExtractor(types).extract_chunk("b", text)
    by_name = {e.name: e for e in ex.entities}
    assert "OBJECTIVE" not in by_name and "RESULTS" not in by_name
    assert by_name["Iodide transport defect"].aliases == ["ITD"]
    assert by_name["Iodide transport defect"].type == "Disease"
    assert by_name["TP53"].type == "Gene/Protein"
    assert by_name["imatinib"].type == "Drug/Compound"
    assert by_name["glucose"].type == "Drug/Compound"
    assert by_name["mice"].type == "Organism"
    assert by_name["c.1314del"].type == "Variant"
    assert "NIS" in by_name
