"""Summary quality without an LLM: acknowledgements, author lists and funding
statements never name a research theme in `ask --mode summary` or in community names, and an
extractive report shows no rating (only an LLM rates a report)."""

from __future__ import annotations

from support.canned import default_rules

from scholargraph import KnowledgeBase

THEMES = [
    "Graph Neural Networks learn node embeddings by message passing. Message passing aggregates neighbour "
    "features in Graph Neural Networks. Node classification benchmarks such as Cora evaluate Graph Neural Networks.",
    "Retrieval-Augmented Generation grounds Large Language Models in retrieved passages. Dense Passage Retrieval "
    "encodes passages for Retrieval-Augmented Generation. Knowledge Graphs improve Retrieval-Augmented Generation.",
    "Differential Privacy bounds the influence of one record. The Laplace Mechanism adds noise for Differential "
    "Privacy. Private Stochastic Gradient Descent trains models under Differential Privacy.",
]
ACK = ("Acknowledgements\n\nWe thank Nina Mishra, Piotr Indyk and Moni Naor for helpful discussions. "
       "This work was supported by the Starting Independent Research Grant and ERC under grant agreement 123456. "
       "Nina Mishra and Moni Naor also thank the Simons Foundation.")
OFF_THEME = ("Nina Mishra", "Piotr Indyk", "Moni Naor", "ERC", "Research Grant", "Simons", "Alice Smith",
             "University of Nowhere")


def _papers():
    return [{"id": f"p{i}", "title": f"Paper {i}",
             "text": f"Alice Smith, Bob Jones\nUniversity of Nowhere, Department of Computer Science\n\n"
                     f"1 Introduction\n\n{body}\n\n2 Method\n\n{body}\n\n{ACK}"}
            for i, body in enumerate(THEMES * 2)]


def _themes_named(text: str) -> list[str]:
    return [name for name in OFF_THEME if name in text]


def test_acknowledged_people_and_funders_are_not_themes_offline(workdir):
    with KnowledgeBase(workdir, extraction={"profile": "offline"}) as kb:
        kb.insert(texts=_papers())
        view = kb.communities()
        answer = kb.query("What are the main research themes across these papers?", mode="summary")
    titles = [c.title for c in view.communities]
    assert not [t for t in titles if _themes_named(t)], titles
    assert any("Graph Neural Networks" in t for t in titles) and any("Differential Privacy" in t for t in titles)
    assert not _themes_named(answer.text), answer.text
    assert all(c.rating is None for c in view.communities if c.method == "extractive")
    off = [c for c in view.communities if not c.thematic]
    assert off and all(c.title.startswith("Not a research theme") for c in off)


def test_no_llm_report_is_paid_for_acknowledgements(llm_server, workdir):
    server = llm_server(rules=default_rules())
    with KnowledgeBase(workdir, extraction={"profile": "offline"},
                       llm={"base_url": server.base_url, "model": "scripted-model", "timeout": 5}) as kb:
        kb.insert(texts=_papers())
        view = kb.communities()
    by_method = {c.method for c in view.communities if c.thematic}
    off = [c for c in view.communities if not c.thematic]
    assert by_method == {"llm"} and off and all(c.method == "extractive" for c in off)
    assert server.stats.by_kind["report"]["calls"] == sum(1 for c in view.communities if c.thematic)
    assert all(isinstance(c.rating, float | int) for c in view.communities if c.method == "llm")
