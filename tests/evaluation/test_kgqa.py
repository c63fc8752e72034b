"""`eval kgqa` input: the questions file (a JSON array or JSON lines, one bad pair dropped, a broken
file named with its line), and malformed model replies (the Teacher's, the question entities)."""

from __future__ import annotations

import json

import pytest
from fixtures.localkg_papers import localkg_kb, write_paper
from support.canned_localkg import QA_ENTITIES_MARK, QA_QUESTIONS_MARK, localkg_rules

from scholargraph.errors import ConfigError, ModelOutputError
from scholargraph.evaluation.kgqa import kg_qa, read_qa_pairs
from scholargraph.testing.llm_server import Rule

GOOD = {"question": "What does MEL use?", "answer": "Apache Tika."}


def test_questions_file_as_array_or_json_lines(tmp_path):
    array = tmp_path / "qa.json"
    array.write_text(json.dumps([GOOD, {"question": "No answer?"}, "stray", {"question": " ", "answer": "x"},
                                 {"question": 7, "answer": "Seven."}]))
    assert read_qa_pairs(array) == [GOOD, {"question": "7", "answer": "Seven."}]
    lines = tmp_path / "qa.jsonl"
    lines.write_text(json.dumps(GOOD) + "\n\n" + json.dumps({"question": "Who?", "answer": "ASKG."}) + "\n")
    assert read_qa_pairs(lines) == [GOOD, {"question": "Who?", "answer": "ASKG."}]
    single = tmp_path / "one.json"
    single.write_text(json.dumps(GOOD))
    assert read_qa_pairs(single) == [GOOD]


def test_a_broken_questions_file_is_a_clear_error(tmp_path):
    broken = tmp_path / "qa.jsonl"
    broken.write_text(json.dumps(GOOD) + '\n{"question": "cut off\n')
    with pytest.raises(ConfigError, match=r"qa.jsonl:2: not JSON"):
        read_qa_pairs(broken)
    empty = tmp_path / "none.json"
    empty.write_text(json.dumps([{"q": 1}]))
    with pytest.raises(ConfigError, match="no question/answer pairs"):
        read_qa_pairs(empty)


def test_malformed_replies(llm_server, tmp_path):
    """Unusable question entities leave the question to the facts of no entity; a Teacher reply
    without pairs fails the evaluation with the raw reply (no made-up questions)."""
    bad_entities = Rule("bad", QA_ENTITIES_MARK, "I think the entities are MEL and Tika.")
    bad_teacher = Rule("bad", QA_QUESTIONS_MARK, '{"pairs": [{"question": "only a question"}]}')
    server = llm_server(rules=[bad_entities, bad_teacher, *localkg_rules()])
    with localkg_kb(server, tmp_path / "ws") as kb:
        kb.insert([write_paper(tmp_path / "papers")])
        doc = kb.store.list_documents()[0].id
        scored = kb.run(kg_qa(kb, doc, [GOOD]))
        assert scored["per_question"][0]["entities"] == [] and scored["per_question"][0]["facts"] == 0
        with pytest.raises(ModelOutputError, match="no question/answer pairs") as bad:
            kb.run(kg_qa(kb, doc, None, count=2))
        assert bad.value.raw == '{"pairs": [{"question": "only a question"}]}'
    # both replies the evaluation parses are asked under a JSON schema (a small local model needs it)
    names = {r["response_format"]["json_schema"]["name"] for r in server.stats.requests if "response_format" in r}
    assert {"qa_pairs", "question_entities"} <= names
    teacher = next(r for r in server.stats.requests if r.get("response_format", {}).get("json_schema", {}).get("name")
                   == "qa_pairs")["response_format"]["json_schema"]["schema"]["properties"]["pairs"]
    assert teacher["minItems"] == teacher["maxItems"] == 2  # exactly the pairs asked for (count=2)
