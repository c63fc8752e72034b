from __future__ import annotations

import pytest

from scholargraph.text.acronyms import find_acronym_definition_spans, find_acronym_definitions, is_acronym
from scholargraph.text.names import fold_plural, normalise_name
from scholargraph.text.sentences import sentence_spans, split_sentences
from scholargraph.text.stopwords import STOPWORDS
from scholargraph.text.tokens import tokenize, tokenize_with_offsets

# --- sentences ---------------------------------------------------------------------------------


def test_sentences_respect_et_al_and_eg():
    text = (
        "As shown by Smith et al. (2020), graph models help. "
        "Several tasks, e.g. NER and RE, benefit; i.e. most do. "
        "Accuracy rose from 3.5 to 4.2 vs. the baseline in Fig. 3 and Eq. 2. "
        "J. R. Smith agreed. The end!"
    )
    assert split_sentences(text) == [
        "As shown by Smith et al. (2020), graph models help.",
        "Several tasks, e.g. NER and RE, benefit; i.e. most do.",
        "Accuracy rose from 3.5 to 4.2 vs. the baseline in Fig. 3 and Eq. 2.",
        "J. R. Smith agreed.",
        "The end!",
    ]


def test_sentences_split_on_blank_lines_and_questions():
    text = "Introduction\n\nWhat is RAG? It retrieves passages. (It also generates.) Then it stops."
    assert split_sentences(text) == [
        "Introduction",
        "What is RAG?",
        "It retrieves passages.",
        "(It also generates.)",
        "Then it stops.",
    ]


def test_sentence_spans_are_offsets_into_the_text():
    text = "  First one here.  Second one there.  "
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans] == ["First one here.", "Second one there."]


def test_etc_ends_a_sentence_only_before_a_capital():
    assert split_sentences("We use words, phrases, etc. The model works.") == [
        "We use words, phrases, etc.",
        "The model works.",
    ]
    assert len(split_sentences("Words, phrases, etc. are used.")) == 1


# --- tokens ------------------------------------------------------------------------------------


def test_tokens_keep_internal_hyphens_digits_and_offsets():
    text = "BERT-base and GPT-4 reach 0.05 F1 on sodium/iodide symporter (c.201C>A)."
    toks = tokenize_with_offsets(text)
    assert [t.text for t in toks] == [
        "BERT-base", "and", "GPT-4", "reach", "0.05", "F1", "on", "sodium/iodide", "symporter",
        "(", "c.201C>A", ")", ".",
    ]  # fmt: skip
    assert all(text[t.start : t.end] == t.text for t in toks)
    assert tokenize("Alzheimer's disease") == ["Alzheimer's", "disease"]


def test_stopwords_are_function_words_not_content_nouns():
    for word in ("the", "however", "et", "al", "which", "respectively"):
        assert word in STOPWORDS
    for word in ("method", "approach", "model", "paper", "data"):
        assert word not in STOPWORDS


# --- acronyms ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("We study Retrieval-Augmented Generation (RAG) here.", ("Retrieval-Augmented Generation", "RAG")),
        ("Recently, large language models (LLMs) improved.", ("large language models", "LLMs")),
        ("A support vector machine (SVM) was trained.", ("support vector machine", "SVM")),
        ("We use named entity recognition (NER; Lample et al., 2016).", ("named entity recognition", "NER")),
        (
            "The formalism of Category Cooccurrence Restrictions (CCRs) is",
            ("Category Cooccurrence Restrictions", "CCRs"),
        ),
        ("a bag of words (BoW) model", ("bag of words", "BoW")),
        ("We fine-tune RAG (retrieval augmented generation) models.", ("retrieval augmented generation", "RAG")),
    ],
)
def test_acronym_definitions(text, expected):
    assert find_acronym_definitions(text) == [expected]


def test_acronym_spans_point_into_the_text():
    text = "Our Retrieval-Augmented Generation (RAG) system."
    (d,) = find_acronym_definition_spans(text)
    assert text[d.long_start : d.long_end] == "Retrieval-Augmented Generation"
    assert text[d.short_start : d.short_end] == "RAG"


@pytest.mark.parametrize(
    "text",
    [
        "as reported by Smith et al. (2020) before",
        "we consider three cases (i) small, (ii) large",
        "the results (see Fig. 2) are good",
        "accuracy improved (p < 0.05) overall",
        "a model (here) is fine",
    ],
)
def test_no_acronym_in_ordinary_parentheses(text):
    assert find_acronym_definitions(text) == []


def test_acronym_definitions_are_unique_in_order():
    text = "Graph neural networks (GNNs) work. Large language models (LLMs) too. Graph neural networks (GNNs) again."
    assert find_acronym_definitions(text) == [("Graph neural networks", "GNNs"), ("Large language models", "LLMs")]


def test_is_acronym():
    for token in ("RAG", "LLMs", "GPT-4", "IL-6", "TP53", "BRCA1"):
        assert is_acronym(token), token
    for token in ("Retrieval-Augmented", "RoBERTa", "A", "word2vec", "The"):
        assert not is_acronym(token), token


# --- normalisation -----------------------------------------------------------------------------

PLURALS = [
    ("models", "model"),
    ("LLMs", "LLM"),
    ("strategies", "strategy"),
    ("analyses", "analysis"),
    ("processes", "process"),
    ("approaches", "approach"),
    ("metrics", "metric"),
    ("diseases", "disease"),
    ("indices", "index"),
    ("criteria", "criterion"),
    ("bias", "bias"),
    ("class", "class"),
    ("corpus", "corpus"),
    ("series", "series"),
    ("species", "species"),
    ("this", "this"),
    ("gas", "gas"),
    ("lens", "lens"),
    ("physics", "physics"),
    ("mathematics", "mathematics"),
    ("statistics", "statistics"),
    ("news", "news"),
    ("analysis", "analysis"),
    ("diabetes", "diabetes"),
    ("SARS", "SARS"),
    ("its", "its"),
    ("Alzheimer's", "Alzheimer's"),
]


@pytest.mark.parametrize("word, singular", PLURALS)
def test_fold_plural(word, singular):
    assert fold_plural(word) == singular


def test_normalise_name():
    assert normalise_name("Large Language Models") == "large language model"
    assert normalise_name("large-language model") == "large language model"
    assert normalise_name("LLMs") == normalise_name("LLM") == "llm"
    assert normalise_name("  \u201cRetrieval\u2013Augmented   Generation\u201d. ") == "retrieval augmented generation"
    assert normalise_name("Alzheimer\u2019s disease") == "alzheimer's disease"
    assert normalise_name("(BERT)") == "bert"
    assert normalise_name("models of languages") == "models of language"  # only the last word folds
    assert normalise_name("...") == ""
