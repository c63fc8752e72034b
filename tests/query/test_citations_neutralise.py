from scholargraph.models import Source
from scholargraph.query.citations import neutralise_source_citations, verify_citations
from scholargraph.query.extractive import extractive_answer


def test_papers_own_reference_markers_cannot_pass_as_sources():
    text = "Shan et al. [173] reported it [2, 5]; see also [7-9]."
    assert neutralise_source_citations(text) == "Shan et al. (ref. 173) reported it (ref. 2, 5); see also (ref. 7-9)."
    assert verify_citations("A claim [1].", {1}).cited == [1]


def test_extractive_answer_shows_only_our_citations():
    src = Source(1, "chunk", "c1", "d1", "T", None, None, None,
                 "Graphene sensors were improved by annealing as reported in [206]. Another sentence here.")
    text, cited = extractive_answer("How were graphene sensors improved?", [src])
    assert "(ref. 206)" in text and "[206]" not in text and cited == [1]
