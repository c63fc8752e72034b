"""What the answer says about itself when a real small model misbehaves: it cites nothing, or it
stops at its completion budget (both seen with Qwen2.5-Coder 0.5B on llama.cpp)."""

from __future__ import annotations

from scholargraph import KnowledgeBase
from scholargraph.testing.llm_server import Reply, Rule

TEXT = ("GraphRAG builds a knowledge graph over the corpus and summarises its communities. "
        "LightRAG retrieves one-hop neighbours of the entities a question names.")


def _kb(server, workdir):
    llm = {"base_url": server.base_url, "model": "scripted-model", "timeout": 5}
    return KnowledgeBase(workdir, llm=llm, extraction={"profile": "offline"})


def test_an_answer_that_cites_nothing_says_so(llm_server, workdir):
    server = llm_server(rules=[Rule("answer", "numbered sources", "GraphRAG builds a vast index of everything.")])
    with _kb(server, workdir) as kb:
        kb.insert(texts=[TEXT])
        answer = kb.query("What does GraphRAG build?", mode="naive")
    assert answer.cited == [] and any("cites none of the sources: check it" in n for n in answer.notes)


def test_an_uncited_sentence_a_source_holds_is_cited_to_it_and_the_notes_say_who_matched_it(llm_server, workdir):
    reply = "GraphRAG builds a knowledge graph and summarises its communities. It is a vast index of everything."
    server = llm_server(rules=[Rule("answer", "numbered sources", reply)])
    with _kb(server, workdir) as kb:
        kb.insert(texts=[TEXT])
        answer = kb.query("What does GraphRAG build?", mode="naive")
    assert answer.text == ("GraphRAG builds a knowledge graph and summarises its communities [1]. "
                           "It is a vast index of everything.")
    assert answer.cited == [1]
    assert any("1 of its sentences is cited to the source(s) that hold its words" in n and "not cited by the model" in n
               for n in answer.notes)


def test_an_answer_cut_at_its_budget_says_so(llm_server, workdir):
    cut = Reply("GraphRAG builds a knowledge graph [1] and then", finish_reason="length")
    server = llm_server(rules=[Rule("answer", "numbered sources", cut)])
    with _kb(server, workdir) as kb:
        kb.insert(texts=[TEXT])
        answer = kb.query("What does GraphRAG build?", mode="naive")
    assert any("completion budget" in n for n in answer.notes) and answer.cited == [1]
