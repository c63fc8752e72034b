"""`scholargraph fastbm`: fastbmRAG's command line (--job update | query) over the scripted server."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from fixtures.fastbio_papers import PAPERS, write_csv
from support import canned_bio

from scholargraph import KnowledgeBase
from scholargraph.cli import build_parser
from scholargraph.errors import ConfigError, LLMUnavailableError
from scholargraph.profiles.fastbio.cli import fastbm_overrides, workspace_of
from scholargraph.testing.llm_server import Rule

canned_query = canned_bio


def parse(argv: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(["fastbm", *argv])


def cmd_fastbm(args: argparse.Namespace) -> int:
    """The command as the CLI runs it, without the generic settings flags."""
    return args.handler(args, None)


def test_fastbmrag_command_lines_parse_and_map_to_settings(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = parse(["--job", "update", "--document", "examples/demo1.csv", "--collection_name", "endo",
                  "--working_dir", "dbs", "--llm_update_model_name", "phi4:latest", "--llm_query_model_name", "gemma3",
                  "--embed_model_name", "mxbai-embed-large:latest", "--embedding_similarity", "0.8", "--top_match", "20",
                  "--backend", "vllm"])
    assert workspace_of(args) == Path("dbs") / "endo"
    notes: list[str] = []
    o = fastbm_overrides(args, notes)
    assert o["llm"]["base_url"] == "http://localhost:8000/v1" and o["llm"]["model"] == "phi4:latest"
    assert o["embeddings"] == {"provider": "openai", "model": "mxbai-embed-large:latest", "dimension": 1024,
                               "base_url": "http://localhost:8000/v1"}
    assert o["extraction"]["profile"] == "fastbio" and o["extraction"]["entity_types"] == "biomedical"
    assert o["query"]["mode"] == "bio" and o["query"]["top_k"] == 20
    assert any("--llm_query_model_name is not used" in n for n in notes)
    # hyphenated spellings work too; the generic CLI overrides can be computed from these args
    args = parse(["--job", "query", "--working-dir", "w", "--collection-name", "c", "--question", "Why?"])
    from scholargraph.cli import settings_overrides

    assert settings_overrides(args)["llm"]["base_url"] is None
    notes = []
    o = fastbm_overrides(args, notes)
    assert o["llm"]["base_url"] == "http://localhost:11434/v1" and o["llm"]["model"] == "gemma3:27b-it-qat"
    with pytest.raises(ConfigError, match="--embedding_dim"):
        fastbm_overrides(parse(["--job", "query", "--embed_model_name", "my-embedder"]), [])


def test_update_then_query_through_the_scripted_server(llm_server, tmp_path, capsys):
    parse_reply = json.dumps({"genes": ["BETAPROTEIN"], "diseases": ["Endometriosis"], "other": [],
                              "entity_types": [], "relation_types": []})
    rules = canned_bio.fastbio_rules() + [
        Rule("parse", canned_query.PARSE_MARK, parse_reply),
        Rule("answer", canned_query.ANSWER_MARK, canned_query.batch_answer),
        Rule("merge", canned_query.MERGE_MARK, canned_query.merge_answer)]
    server = llm_server(rules=rules)
    csv_path = write_csv(tmp_path / "input.csv", PAPERS)
    common = ["--working_dir", str(tmp_path / "dbs"), "--collection_name", "endo", "--llm_url", server.base_url,
              "--embed_model_name", "emb", "--embedding_dim", "384", "--json"]

    assert cmd_fastbm(parse(["--job", "update", "--document", str(csv_path), *common,
                             "--llm_update_model_name", "scripted-model"])) == 0
    report = json.loads(capsys.readouterr().out)
    assert sorted(report["processed"]) == ["PA", "PB", "PC", "PD"] and report["profile"] == "fastbio"
    assert report["workspace"] == str(tmp_path / "dbs" / "endo")
    assert set(report["per_paper"]) == {"PA", "PB", "PC", "PD"}
    assert report["per_paper"]["PC"]["by_purpose"].keys() == {"extract"}  # no main text: no refine calls
    assert report["per_paper"]["PA"]["by_purpose"]["refine"]["calls"] >= 1

    # already-indexed paper ids are skipped
    assert cmd_fastbm(parse(["--job", "update", "--document", str(csv_path), *common,
                             "--llm_update_model_name", "scripted-model"])) == 0
    again = json.loads(capsys.readouterr().out)
    assert not again["processed"] and len(again["skipped"]) == 4 and again["usage"]["llm_calls"] == 0

    assert cmd_fastbm(parse(["--job", "query", "--question", "What does BETAPROTEIN do in Endometriosis?", *common,
                             "--llm_query_model_name", "scripted-model", "--similarity", "-1"])) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["mode"] == "bio" and answer["cited"] == [1] and answer["sources"][0]["document_id"] == "PA"
    assert answer["references"] == ["[1] PA · Paper PA title · Journal PA · 2020"]
    assert answer["usage"]["by_purpose"]["parse"]["calls"] == 1

    # the human-readable form prints the answer and the references
    assert cmd_fastbm(parse(["--job", "query", "--question", "What does BETAPROTEIN do in Endometriosis?",
                             *[a for a in common if a != "--json"], "--llm_query_model_name", "scripted-model",
                             "--similarity", "-1", "--quiet"])) == 0
    out = capsys.readouterr().out
    assert "Finding from paper [1]." in out and "References:" in out and "[1] PA · Paper PA title" in out


def test_missing_arguments_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="--document"):
        cmd_fastbm(parse(["--job", "update", "--working_dir", str(tmp_path), "--llm_url", "http://127.0.0.1:9/v1",
                          "--llm_update_model_name", "m"]))
    with pytest.raises(ConfigError, match="--question"):
        cmd_fastbm(parse(["--job", "query", "--question", " ", "--working_dir", str(tmp_path), "--llm_url",
                          "http://127.0.0.1:9/v1", "--llm_query_model_name", "m"]))


def test_fastbmrags_defaults_apply_to_omitted_flags(llm_server, tmp_path, capsys):
    # `--job query` without --question exited 2; fastbmRAG asks its default question
    o = fastbm_overrides(parse(["--job", "query"]), [])
    assert o["query"]["top_k"] == 20 and o["plugins"]["fastbio"]["refine_threshold"] is None  # the local model's own cutoff
    o = fastbm_overrides(parse(["--job", "update", "--embed_model_name", "mxbai-embed-large:latest"]), [])
    assert o["plugins"]["fastbio"]["refine_threshold"] == 0.8
    parse_reply = json.dumps({"genes": [], "diseases": ["Endometriosis"], "other": [], "entity_types": ["genes"],
                              "relation_types": []})
    server = llm_server(rules=canned_bio.fastbio_rules() + [
        Rule("parse", canned_query.PARSE_MARK, parse_reply), Rule("answer", canned_query.ANSWER_MARK, canned_query.batch_answer),
        Rule("merge", canned_query.MERGE_MARK, canned_query.merge_answer)])
    common = ["--working_dir", str(tmp_path / "dbs"), "--llm_url", server.base_url, "--json"]
    assert cmd_fastbm(parse(["--job", "update", "--document", str(write_csv(tmp_path / "in.csv", PAPERS)), *common,
                             "--llm_update_model_name", "scripted-model"])) == 0
    capsys.readouterr()
    assert cmd_fastbm(parse(["--job", "query", *common, "--llm_query_model_name", "scripted-model"])) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["question"] == "Which genes are associated with endometriosis?" and answer["sources"]
    assert any("fastbmRAG's default question" in n for n in answer["notes"])
    assert any("Which genes are associated with endometriosis?" in json.dumps(r) for r in server.stats.requests)


def test_update_checks_the_embedding_model_before_any_call(llm_server, tmp_path):
    # an embedding model the server lacks cost the draft calls, then every paper failed on a 404
    server = llm_server(rules=canned_bio.fastbio_rules(), models=["scripted-model", "nomic-embed-text"],
                        strict_models=True)
    args = parse(["--job", "update", "--document", str(write_csv(tmp_path / "in.csv", PAPERS)), "--working_dir",
                  str(tmp_path / "dbs"), "--llm_url", server.base_url, "--llm_update_model_name", "scripted-model",
                  "--embed_model_name", "mxbai-embed-large:latest", "--json"])
    with pytest.raises(LLMUnavailableError, match=r"embedding model 'mxbai-embed-large:latest'.*available: "
                                                  r"scripted-model, nomic-embed-text.*Nothing was started"):
        cmd_fastbm(args)
    assert server.stats.calls == 0 and server.stats.embedding_calls == 0
    with KnowledgeBase(tmp_path / "dbs" / "paper") as kb:
        assert kb.status() == []  # no paper recorded, none failed
