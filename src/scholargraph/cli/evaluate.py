"""`eval`: questions, LLM-judged win rates between configurations, and kg2text/kgqa for local KGs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..kb import KnowledgeBase
from . import output as show
from .flags import settings_flags
from .workspace import command_workspace, read_queries


def add_eval(sub: Any) -> None:
    p = sub.add_parser("eval", help="evaluation: generate questions, LLM-judge win rates between configurations; "
                                    "kg2text and kgqa for local KGs (seed 004 §5)")
    p.add_argument("task", choices=["questions", "winrate", "kg2text", "kgqa"])
    p.add_argument("--doc", nargs="+", metavar="DOC_ID", help="kg2text/kgqa: these papers (default: every indexed one)")
    p.add_argument("--count", type=int, default=10, help="kgqa: questions written per paper when no --questions")
    p.add_argument("--order", choices=["section", "paper"], default="section",
                   help="kg2text: per section (default), or the whole paper's triples by relevance (seed 004 §5.2)")
    p.add_argument("--a", default="hybrid", help="side A: a mode, optionally with :no-clues / :no-subgraph, or "
                   "another system's answers as JSONL ({question, answer} per line), e.g. LightRAG=answers.jsonl")
    p.add_argument("--b", default="naive", help="side B (same syntax)")
    p.add_argument("--questions", help="questions file (one per line or JSONL with 'question'); for winrate "
                   "(default: the questions of an imported answers file); kgqa: question/answer pairs (JSON array or JSONL "
                   "with 'question' and 'answer')")
    p.add_argument("--trials", type=int, default=3, help="judgements per question, order alternating (default 3)")
    p.add_argument("--judge-url", help="the judge's OpenAI-compatible base URL (default: --llm-url)")
    p.add_argument("--judge-model", help="the judge model (default: --llm-model)")
    p.add_argument("--out", help="write generated questions (JSONL) here; winrate, kg2text, kgqa: the full result (JSON)")
    p.add_argument("--users", type=int, default=5)
    p.add_argument("--tasks", type=int, default=5)
    p.add_argument("--per-task", type=int, default=5)
    settings_flags(p)
    p.set_defaults(handler=cmd_eval)


def cmd_eval(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    from ..evaluation.questions import generate_questions

    if args.task == "winrate":
        return _winrate(args, overrides)
    with command_workspace(args, overrides) as kb:
        if kb.llm is None:
            raise ConfigError("evaluation needs an LLM: set llm.base_url and llm.model")
        if args.task in ("kg2text", "kgqa"):
            result = kb.run(_local_kg_eval(kb, args))
            if args.out:
                Path(args.out).write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
            show.print_json(result) if args.json else show.print_local_kg_eval(args.task, result)
            return 0
        rows = kb.run(generate_questions(kb, args.users, args.tasks, args.per_task))
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    Path(args.out).write_text(text) if args.out else sys.stdout.write(text)
    return 0


def _winrate(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    from ..config import judge_settings
    from ..evaluation.answers import parse_side
    from ..evaluation.winrate import winrate
    from ..llm.client import LLMClient

    side_a, side_b = parse_side(args.a), parse_side(args.b)
    if side_a.name == side_b.name and (side_a.imported or side_b.imported):
        raise ConfigError(f"both sides are called {side_a.name!r}: name them, e.g. --b Other={args.b}")
    if args.questions:
        questions = read_queries(args.questions)
    else:
        imported = side_a.answers or side_b.answers
        if imported is None:
            raise ConfigError("eval winrate needs --questions FILE (make one with `scholargraph eval questions --out FILE`)")
        questions = list(imported)
    with command_workspace(args, overrides) as kb:
        judge_cfg = judge_settings(kb.settings)
        if not judge_cfg.configured:
            raise ConfigError("eval winrate needs a judge model: --judge-url/--judge-model (or judge.base_url/"
                              "judge.model), else the answering LLM's --llm-url/--llm-model")
        judge = LLMClient(judge_cfg, cache=None, count_tokens=kb.tokenizer.count)  # every trial is a new judgement

        async def run_all():
            try:
                if judge_cfg.health_check:
                    await judge.health_check()
                return await winrate(kb, judge, questions, side_a, side_b, trials=args.trials)
            finally:
                await judge.aclose()

        verdicts = kb.run(run_all())
    result = verdicts.to_json(side_a, side_b, {"base_url": judge_cfg.base_url, "model": judge_cfg.model})
    if args.out:
        Path(args.out).write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    show.print_json(result) if args.json else show.print_winrate(result)
    return 0


async def _local_kg_eval(kb: KnowledgeBase, args: argparse.Namespace) -> dict[str, Any]:
    """`eval kg2text` / `eval kgqa` (seed 004 §5.2-5.3)."""
    if args.task == "kg2text":
        from ..evaluation.kg2text import kg_to_text

        return await kg_to_text(kb, args.doc, order=getattr(args, "order", "section"))
    from ..evaluation.kgqa import kg_qa, read_qa_pairs

    docs = args.doc or [r.id for r in kb.status() if r.status == "PROCESSED"]
    if args.questions and len(docs) != 1:
        raise ConfigError("eval kgqa --questions FILE is about one paper: give it with --doc DOC_ID")
    pairs = read_qa_pairs(args.questions) if args.questions else None
    papers = [await kg_qa(kb, d, pairs, args.count) for d in docs]
    return {"papers": papers}
