import json

import pytest

from scholargraph import KnowledgeBase
from scholargraph.cli import main
from scholargraph.errors import ModelOutputError
from scholargraph.evaluation.winrate import parse_verdict
from scholargraph.testing.canned import default_rules
from scholargraph.testing.llm_server import Rule

TEXTS = ["Retrieval-Augmented Generation (RAG) grounds Large Language Models. GraphRAG builds community reports.",
         "LightRAG retrieves one-hop neighbours of matched entities. AcademicRAG retrieves subgraphs."]


def test_parse_verdict_accepts_common_shapes():
    raw = '```json\n{"Comprehensiveness": {"Winner": "Answer 2"}, "Overall Winner": {"Winner": "Answer 1", "Reasoning": "x"}}\n```'
    assert parse_verdict(raw) == {"comprehensiveness": 2, "overall": 1}
    with pytest.raises(ModelOutputError):
        parse_verdict('{"comprehensiveness": {"winner": "1"}}')


def _kb(server, workdir):
    return KnowledgeBase(workdir, llm={"base_url": server.base_url, "model": "scripted-model", "backoff_base": 0.01},
                         extraction={"profile": "offline"})


def test_both_orders_cancel_position_bias(llm_server, workdir, tmp_path, capsys):
    always_first = json.dumps({c: {"winner": "1"} for c in ("comprehensiveness", "diversity", "empowerment", "overall")})
    server = llm_server(rules=[Rule("judge", r"You compare two answers", always_first)] + default_rules())
    with _kb(server, workdir) as kb:
        kb.insert(texts=TEXTS)
    questions = tmp_path / "q.txt"
    questions.write_text("What does GraphRAG build?\nHow does LightRAG retrieve?\n")
    code = main(["eval", "winrate", "--a", "naive", "--b", "naive", "--questions", str(questions), "-w", str(workdir),
                 "--llm-url", server.base_url, "--llm-model", "scripted-model", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["judgements"] == 4
    assert result["criteria"]["overall"]["naive_win_rate"] == 0.5  # a judge that always picks "1" favours nobody


def test_unusable_judgements_are_counted(llm_server, workdir):
    import asyncio

    from scholargraph.evaluation.winrate import winrate

    server = llm_server(rules=[Rule("judge", r"You compare two answers", "no idea")] + default_rules())
    with _kb(server, workdir) as kb:
        kb.insert(texts=TEXTS)
        verdicts = asyncio.run(kb._closing(winrate(kb, ["What is RAG?"], "naive", "naive")))
    assert verdicts.judgements == 2 and verdicts.unusable == 2 and not verdicts.wins_a


def test_question_generation(llm_server, workdir, tmp_path):
    server = llm_server(rules=default_rules())
    with _kb(server, workdir) as kb:
        kb.insert(texts=TEXTS)
    out = tmp_path / "questions.jsonl"
    code = main(["eval", "questions", "--out", str(out), "-w", str(workdir), "--llm-url", server.base_url,
                 "--llm-model", "scripted-model"])
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert code == 0 and len(rows) == 8 and all(r["question"] and r["user"] and r["task"] for r in rows)
