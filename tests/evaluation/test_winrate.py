"""eval winrate as the thesis runs it (Appendix A.1): three judgements per question with the order
alternating, a judge that can be another model on another server, other systems' answers
imported from JSONL; and question generation."""

import asyncio
import json

import pytest
from support.canned import default_rules

from scholargraph import KnowledgeBase
from scholargraph.cli import main
from scholargraph.errors import ConfigError, ModelOutputError
from scholargraph.evaluation.answers import parse_side, read_answers
from scholargraph.evaluation.judge import NAMES, parse_verdict
from scholargraph.evaluation.winrate import winrate
from scholargraph.testing.llm_server import Rule

TEXTS = ["Retrieval-Augmented Generation (RAG) grounds Large Language Models. GraphRAG builds community reports.",
         "LightRAG retrieves one-hop neighbours of matched entities. AcademicRAG retrieves subgraphs."]
QUESTIONS = ["What does GraphRAG build?", "How does LightRAG retrieve?"]
JUDGE_MARK = r"evaluating two answers to the same question"


def _verdict(winner: str) -> str:  # Appendix A.1.2's output format
    return json.dumps({c: {"Reasoning": "r", "Winner": f"Answer {winner}"}
                       for c in ("Comprehensiveness", "Diversity", "Empowerment", "Overall Winner")})


def _kb(server, workdir):
    return KnowledgeBase(workdir, llm={"base_url": server.base_url, "model": "scripted-model", "backoff_base": 0.01},
                         extraction={"profile": "offline"})


def _indexed(server, workdir):
    with _kb(server, workdir) as kb:
        kb.insert(texts=TEXTS)


def test_parse_verdict_reads_names_and_the_usual_shapes():
    raw = ('```json\n{"Comprehensiveness": {"Winner": "Answer Bob"}, '
           '"Overall Winner": {"Winner": "[Answer Petter]", "Reasoning": "x"}}\n```')
    assert parse_verdict(raw, ("a", "b")) == {"comprehensiveness": "b", "overall": "a"}
    assert parse_verdict(raw, ("b", "a")) == {"comprehensiveness": "a", "overall": "b"}  # b was shown first
    assert parse_verdict('{"overall": {"winner": "2"}}', ("a", "b")) == {"overall": "b"}
    with pytest.raises(ModelOutputError):
        parse_verdict('{"comprehensiveness": {"winner": "Petter"}}')


def test_three_trials_alternate_the_order_and_a_positional_judge_favours_nobody(llm_server, workdir, tmp_path, capsys):
    server = llm_server(rules=[Rule("judge", JUDGE_MARK, _verdict(NAMES[0]))] + default_rules())
    _indexed(server, workdir)
    questions = tmp_path / "q.txt"
    questions.write_text("\n".join(QUESTIONS) + "\n")
    code = main(["eval", "winrate", "--a", "hybrid", "--b", "naive", "--questions", str(questions), "-w", str(workdir),
                 "--llm-url", server.base_url, "--llm-model", "scripted-model", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["trials"] == 3 and result["judgements"] == 6
    assert result["order"] == ["a first", "b first", "a first"]
    overall = result["criteria"]["overall"]
    assert overall["hybrid_win_rate_per_trial"] == [1.0, 0.0, 1.0]  # always the answer shown first
    assert overall["hybrid_win_rate"] == pytest.approx(2 / 3, abs=1e-4)  # the mean over the three trials
    judge_prompts = [r for r in server.stats.requests if JUDGE_MARK in json.dumps(r)]
    assert len(judge_prompts) == 6  # no judgement is served from the cache


def test_a_separate_judge_and_imported_answers(llm_server, workdir, tmp_path, capsys):
    answering = llm_server(rules=default_rules())
    judge = llm_server(rules=default_rules(), models=["judge-model"])  # the longer answer wins
    _indexed(answering, workdir)
    imported = tmp_path / "lightrag.jsonl"
    imported.write_text("".join(json.dumps({"question": q, "answer": f"LightRAG says: {q} " + "detail " * 200}) + "\n"
                                for q in QUESTIONS))
    code = main(["eval", "winrate", "--a", "hybrid", "--b", f"LightRAG={imported}", "-w", str(workdir),
                 "--llm-url", answering.base_url, "--llm-model", "scripted-model",
                 "--judge-url", judge.base_url, "--judge-model", "judge-model", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["b"] == "LightRAG" and result["questions"] == 2  # the questions of the imported file
    assert result["judge"] == {"base_url": judge.base_url, "model": "judge-model"}
    assert result["criteria"]["overall"]["LightRAG_wins"] == 6 and result["criteria"]["overall"]["hybrid_win_rate"] == 0.0
    assert all(r["model"] == "judge-model" for r in judge.stats.requests)
    assert judge.stats.calls == 6 and not any(JUDGE_MARK in json.dumps(r) for r in answering.stats.requests)


def test_unusable_judgements_are_counted(llm_server, workdir):
    server = llm_server(rules=[Rule("judge", JUDGE_MARK, "no idea")] + default_rules())
    _indexed(server, workdir)
    with _kb(server, workdir) as kb:
        verdicts = kb.run(winrate(kb, kb.llm, ["What is RAG?"], parse_side("naive"), parse_side("hybrid")))
    assert verdicts.judgements == 3 and verdicts.unusable == 3
    assert verdicts.rate("overall") == (None, [None, None, None])


def test_an_unusable_verdict_is_not_cached(llm_server, workdir):
    """Trials 1 and 3 show the answers in the same order (the same prompt): the unusable first
    verdict is not replayed from the cache for the third, the judge is asked again."""
    server = llm_server(rules=[Rule("judge", JUDGE_MARK, "no idea")] + default_rules())
    _indexed(server, workdir)
    with _kb(server, workdir) as kb:
        kb.run(winrate(kb, kb.llm, ["What is RAG?"], parse_side("naive"), parse_side("hybrid")))
    assert server.stats.by_kind["judge"]["calls"] == 3


def test_questions_missing_from_an_imported_file_are_reported_not_judged(llm_server, workdir, tmp_path):
    server = llm_server(rules=default_rules())
    _indexed(server, workdir)
    path = tmp_path / "other.jsonl"
    path.write_text(json.dumps({"question": QUESTIONS[0], "answer": "An answer."}) + "\n")
    with _kb(server, workdir) as kb:
        verdicts = kb.run(winrate(kb, kb.llm, QUESTIONS, parse_side("naive"), parse_side(str(path))))
    assert verdicts.missing == {"other": [QUESTIONS[1]]} and verdicts.judgements == 3


def test_answers_files_and_side_specs(tmp_path):
    good = tmp_path / "graphrag.jsonl"
    good.write_text('{"query": "Q1", "response": "A1"}\n\n{"question": "Q2", "answer": "A2"}\n')
    assert read_answers(good) == {"Q1": "A1", "Q2": "A2"}
    side = parse_side(f"GraphRAG={good}")
    assert side.name == "GraphRAG" and side.imported and side.describe()["answers"] == 2
    assert parse_side("hybrid:no-clues").options == {"clues": False}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "Q1"}\n')
    with pytest.raises(ConfigError, match="entry 1 needs a 'question' and an 'answer'"):
        read_answers(bad)
    with pytest.raises(ConfigError, match="not found"):
        parse_side(str(tmp_path / "missing.jsonl"))
    with pytest.raises(ConfigError, match="unknown configuration flag"):
        parse_side("hybrid:no-graph")


def test_without_any_judge_model_it_is_a_clear_error(llm_server, workdir, tmp_path, capsys):
    _indexed(llm_server(rules=default_rules()), workdir)  # a missing workspace would be reported first
    questions = tmp_path / "q.txt"
    questions.write_text("What is RAG?\n")
    code = main(["eval", "winrate", "--questions", str(questions), "-w", str(workdir)])
    assert code == 2 and "needs a judge model" in capsys.readouterr().err


def test_question_generation(llm_server, workdir, tmp_path):
    # thesis 000 §3.5.1: users, then each user's tasks, then questions per user-task pair, each step
    # one structured call (JSON schema)
    server = llm_server(rules=default_rules())
    _indexed(server, workdir)
    out = tmp_path / "questions.jsonl"
    code = main(["eval", "questions", "--out", str(out), "-w", str(workdir), "--llm-url", server.base_url,
                 "--llm-model", "scripted-model", "--users", "3", "--tasks", "2", "--per-task", "4"])
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert code == 0 and len(rows) == 3 * 2 * 4 and all(r["question"] and r["user"] and r["task"] for r in rows)
    assert len({(r["user"], r["task"]) for r in rows}) == 6 and {r["intent"] for r in rows} <= {
        "exploratory", "comparative", "problem-solving"}
    calls = {k: server.stats.by_kind[k]["calls"] for k in ("users", "tasks", "questions")}
    assert calls == {"users": 1, "tasks": 3, "questions": 6}
    steps = [r for r in server.stats.requests if "distinct users of this collection" in json.dumps(r)
             or "would ask the collection" in json.dumps(r) or "distinct tasks" in json.dumps(r)]
    assert len(steps) == 10 and all(r["response_format"]["type"] == "json_schema" for r in steps)


def test_judge_is_structured_and_faithful_to_the_appendix(llm_server, workdir, tmp_path, capsys):
    # Appendix A.1: the three criteria with their definitions, "Answer Petter"/"Answer Bob", the JSON
    # format with Reasoning and Winner per criterion and an Overall Winner, asked under a JSON schema
    server = llm_server(rules=default_rules())
    _indexed(server, workdir)
    questions = tmp_path / "q.txt"
    questions.write_text("\n".join(QUESTIONS) + "\n")
    out = tmp_path / "winrate.json"
    code = main(["eval", "winrate", "--a", "hybrid", "--b", "naive", "--questions", str(questions), "-w", str(workdir),
                 "--llm-url", server.base_url, "--llm-model", "scripted-model", "--out", str(out)])
    shown = capsys.readouterr().out
    assert code == 0
    judged = [r for r in server.stats.requests if JUDGE_MARK in json.dumps(r)]
    assert len(judged) == 6
    text = json.dumps(judged[0])
    for phrase in ("Comprehensiveness: How much detail does the answer provide to cover all aspects and details",
                   "Diversity: How varied and rich is the answer", "Empowerment: How well does the answer help the reader",
                   "**Answer Petter:**", "**Answer Bob:**", "Overall Winner"):
        assert phrase.replace('"', '\\"') in text, phrase
    schema = judged[0]["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["Comprehensiveness", "Diversity", "Empowerment", "Overall Winner"]
    # bounded: Qwen2.5-Coder 0.5B looped on one reasoning sentence until its budget and lost the verdict
    assert all(schema["properties"][k]["properties"]["Reasoning"]["maxLength"] for k in schema["required"])
    result = json.loads(out.read_text())  # --out: the whole result
    assert result["unusable_judgements"] == 0 and result["judgements"] == 6
    assert [row["metric"] for row in result["table"]] == ["Comprehensiveness", "Diversity", "Empowerment", "Overall"]
    assert all(row["framework"] == "hybrid vs. naive" and 0 <= row["win_rate"] <= 1 for row in result["table"])
    assert "Table 3.1" in shown and "Comprehensiveness" in shown and "vs. naive" in shown


def test_a_missing_questions_file_is_a_clear_error(llm_server, workdir, tmp_path, capsys):
    server = llm_server(rules=default_rules())
    _indexed(server, workdir)
    code = main(["eval", "winrate", "--questions", str(tmp_path / "nope.txt"), "-w", str(workdir),
                 "--llm-url", server.base_url, "--llm-model", "scripted-model"])
    err = capsys.readouterr().err
    assert code == 2 and "questions file not found" in err and "Traceback" not in err


def test_trials_must_be_positive(llm_server, workdir):
    server = llm_server(rules=default_rules())
    with _kb(server, workdir) as kb, pytest.raises(Exception, match="at least one trial"):
        asyncio.run(winrate(kb, kb.llm, ["Q"], parse_side("naive"), parse_side("hybrid"), trials=0))
