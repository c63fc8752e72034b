"""Acknowledgement, funding and author-list sentences (text/boilerplate.py)."""

import pytest

from scholargraph.text.boilerplate import is_boilerplate, non_thematic_type


@pytest.mark.parametrize("sentence", [
    "We thank Nina Mishra, Piotr Indyk and Moni Naor for helpful discussions.",
    "This work was supported by the Starting Independent Research Grant and ERC under grant agreement 123456.",
    "Nina Mishra and Moni Naor also thank the Simons Foundation.",
    "The authors are grateful to the anonymous reviewers.",
    "Alice Smith, Bob Jones University of Nowhere, Department of Computer Science",
    "Alice Smith1, Bob Jones2 and Carol White3",
    "Correspondence: alice.smith@nowhere.edu",
])
def test_people_and_money_sentences(sentence):
    assert is_boilerplate(sentence)


@pytest.mark.parametrize("sentence", [
    "Graph Neural Networks learn node embeddings by message passing.",
    "Thanks to its sparsity, the model trains in minutes on one GPU.",
    "Researchers at the University of Oxford proposed a new attention mechanism for long documents.",
    "We fund the retrieval budget by pruning edges with low weight.",
])
def test_research_sentences(sentence):
    assert not is_boilerplate(sentence)


def test_types_of_people_places_and_money():
    assert non_thematic_type("Person") and non_thematic_type("Co-author") and non_thematic_type("Funding")
    assert not non_thematic_type("Method") and not non_thematic_type("Concept")
