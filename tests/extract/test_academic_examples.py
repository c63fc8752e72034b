"""Domain examples in the extraction prompt (thesis 000 §5.2): off by default (the
system prompt is exactly the prompt file's), built-in cs / bio examples in the reply format in use,
or a user's file; a file that cannot be read is one clear error before anything is indexed."""

from __future__ import annotations

import json

import pytest
from support.canned import default_rules

from scholargraph import KnowledgeBase
from scholargraph.errors import ConfigError
from scholargraph.extract.types import entity_types
from scholargraph.prompts import load_prompt

TEXT = ("Retrieval-Augmented Generation (RAG) grounds Large Language Models in retrieved evidence. "
        "GraphRAG builds a Knowledge Graph over the corpus.")


def _systems(server, workdir, **extraction) -> list[str]:
    llm = {"base_url": server.base_url, "model": "scripted-model", "backoff_base": 0.01, "timeout": 5}
    embeddings = {"provider": "openai", "base_url": server.base_url, "model": "emb", "dimension": 384}
    with KnowledgeBase(workdir, llm=llm, embeddings=embeddings, communities={"auto_update": False},
                       extraction={"profile": "academic", "gleaning": 0, **extraction}, progress=False) as kb:
        assert kb.insert([], texts=[{"id": "p", "title": "RAG", "text": TEXT}]).ok
    return [r["messages"][0]["content"] for r in server.stats.requests
            if "Build a knowledge graph" in json.dumps(r["messages"][0])]


@pytest.mark.parametrize("fmt, prompt", [("json", "extract_json"), ("records", "extract")])
def test_examples_are_off_by_default_and_added_in_the_reply_format(llm_server, tmp_path, fmt, prompt):
    default = load_prompt(prompt, "scholargraph.profiles.academic").system.format(types=", ".join(entity_types("paper")))
    [plain] = _systems(llm_server(rules=default_rules()), tmp_path / "a", format=fmt)
    assert plain == default  # unchanged when the option is off
    [cs] = _systems(llm_server(rules=default_rules()), tmp_path / "b", format=fmt, examples="cs")
    assert cs.startswith(default) and "SQuAD" in cs and ("entity|BERT|" in cs) == (fmt == "records")
    [bio] = _systems(llm_server(rules=default_rules()), tmp_path / "c", format=fmt, examples="bio")
    assert "BRCA1" in bio and "SQuAD" not in bio


def test_a_users_examples_file_is_appended_and_a_missing_one_is_a_clear_error(llm_server, tmp_path):
    own = tmp_path / "examples.txt"
    own.write_text("## my examples\nExample passage: a graph of proteins.\n", encoding="utf-8")
    [system] = _systems(llm_server(rules=default_rules()), tmp_path / "a", examples=str(own))
    assert system.endswith("Example passage: a graph of proteins.") and "## my examples" not in system
    with pytest.raises(ConfigError, match="extraction.examples.*nope.txt"):
        _systems(llm_server(rules=default_rules()), tmp_path / "b", examples=str(tmp_path / "nope.txt"))
