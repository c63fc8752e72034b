"""Hostile questions and names (cases that held and must keep holding): empty and huge
questions, SQL / FTS / LIKE metacharacters in questions and entity names, undecodable bytes."""

from __future__ import annotations

import pytest
from redteam import write_papers

HOSTILE = [
    "'; DROP TABLE documents; --",
    '"unbalanced quote',
    "100% of the_data\\ matches LIKE",
    "NEAR(graph neural) AND OR NOT * ^ : -",
    "graph* OR \"knowledge\" {col}: ()",
    "\u202e right-to-left \U0001f600 emoji",
]
QUESTIONS = [*HOSTILE, "\u0000 a NUL in a question"]  # a NUL in a text file makes it binary: questions only
MODES = ["naive", "local", "subgraph", "global", "hybrid"]


@pytest.fixture
def hostile_workspace(scholar, tmp_path):
    corpus = write_papers(tmp_path / "corpus", 2)
    names = "\n".join(f"The {n} Method is compared with Graph Neural Networks." for n in HOSTILE)
    (corpus / "hostile.txt").write_text(f"Hostile names\n\n{names}\n", encoding="utf-8")
    result = scholar("index", str(corpus), "--profile", "offline")
    assert result.code == 0, result.err
    return scholar


@pytest.mark.parametrize("mode", MODES)
def test_metacharacters_in_questions_are_just_text(hostile_workspace, mode):
    scholar = hostile_workspace
    before = scholar("stats").json
    for question in QUESTIONS:
        result = scholar("retrieve", question, "--mode", mode, llm=False)
        assert result.code == 0, (question, result.err)
        assert isinstance(result.json["results"], list)
    assert scholar("stats").json["documents"] == before["documents"]  # nothing was dropped


def test_metacharacters_in_entity_names_search_and_merge(hostile_workspace):
    scholar = hostile_workspace
    for needle in ["%", "_", "'", '"', "*", "DROP TABLE", "\\"]:
        result = scholar("entities", "--search", needle, llm=False)
        assert result.code == 0, (needle, result.err)
        for row in result.json["entities"]:  # literal matches only: % and _ are not wildcards
            assert any(needle.lower() in n.lower() for n in [row["name"], *row["aliases"]]), (needle, row["name"])
    names = [e["name"] for e in scholar("entities", "--search", "DROP", llm=False).json["entities"]]
    assert names and all("DROP" in n for n in names)
    merged = scholar("entities", "--merge", "Graph Neural Networks", names[0], llm=False)
    assert merged.code == 0, merged.err


@pytest.mark.parametrize("question", ["", " \n\t", "graph " * 20_000, "graphs \udcff\udcfe bytes"])
def test_empty_huge_and_undecodable_questions(hostile_workspace, question):
    result = hostile_workspace("ask", question, "--mode", "naive", llm=False)
    if question.strip():
        assert result.code == 0, result.err
        assert result.json["answer"] and result.json["sources"]
    else:
        assert result.code == 2 and "the question is empty" in result.err
