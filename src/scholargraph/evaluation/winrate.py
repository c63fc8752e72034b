"""Pairwise LLM-judge win rates as the thesis runs them (thesis 000 §3.5.1, Appendix A.1).

Each question is answered by side A and side B: a configuration of this workspace, or answers
imported from a JSONL file (another system's). The judge (its own model and server when
``judge.base_url``/``judge.model`` are set, else the answering LLM) compares the pair
``trials`` times (3, as in the thesis), the order of presentation alternating: A first, B first,
A first ... Per trial and criterion, a side's win rate = its wins / usable verdicts; the final
win rate is the mean over the trials. Unusable judge output is counted and reported, never
guessed. Judge calls bypass the LLM cache, so a repeated order is a new judgement.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field

from ..errors import ModelOutputError, ScholarGraphError
from .answers import Side
from .judge import CRITERIA, judge_once

DEFAULT_TRIALS = 3
TABLE_NAMES = {"comprehensiveness": "Comprehensiveness", "diversity": "Diversity", "empowerment": "Empowerment",
               "overall": "Overall"}


@dataclass
class Verdicts:
    trials: int
    wins: list[dict[str, Counter]] = field(default_factory=list)  # per trial: side -> criterion -> wins
    judgements: int = 0
    unusable: int = 0
    missing: dict[str, list[str]] = field(default_factory=dict)  # side -> questions it has no answer to
    rows: list[dict] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.wins = [{"a": Counter(), "b": Counter()} for _ in range(self.trials)]

    def add(self, trial: int, verdict: dict[str, str] | None) -> None:
        self.judgements += 1
        if verdict is None:
            self.unusable += 1
            return
        for criterion, side in verdict.items():
            self.wins[trial][side][criterion] += 1

    def rate(self, criterion: str) -> tuple[float | None, list[float | None]]:
        """(A's win rate averaged over the trials, A's win rate per trial)."""
        per_trial = []
        for trial in self.wins:
            total = trial["a"][criterion] + trial["b"][criterion]
            per_trial.append(round(trial["a"][criterion] / total, 4) if total else None)
        usable = [r for r in per_trial if r is not None]
        return (round(sum(usable) / len(usable), 4) if usable else None), per_trial

    def table(self, a: str, b: str) -> list[dict]:
        """Thesis 000 Table 3.1's rows: per criterion, A's win rate vs. B (mean over the trials) and
        an arrow (↑ above 50%, ↓ below)."""
        rows = []
        for c in CRITERIA:
            rate, _ = self.rate(c)
            arrow = "" if rate is None or rate == 0.5 else ("↑" if rate > 0.5 else "↓")
            rows.append({"metric": TABLE_NAMES[c], "framework": f"{a} vs. {b}", "win_rate": rate, "arrow": arrow})
        return rows

    def to_json(self, side_a: Side, side_b: Side, judge: dict | None = None) -> dict:
        a, b = side_a.name, side_b.name
        criteria = {}
        for c in CRITERIA:
            mean, per_trial = self.rate(c)
            criteria[c] = {f"{a}_wins": sum(t["a"][c] for t in self.wins), f"{b}_wins": sum(t["b"][c] for t in self.wins),
                           f"{a}_win_rate": mean, f"{a}_win_rate_per_trial": per_trial}
        return {"a": a, "b": b, "sides": {"a": side_a.describe(), "b": side_b.describe()}, "judge": judge or {},
                "table": self.table(a, b),
                "trials": self.trials, "order": ["a first" if t % 2 == 0 else "b first" for t in range(self.trials)],
                "questions": len(self.rows), "judgements": self.judgements, "unusable_judgements": self.unusable,
                "missing_answers": self.missing, "criteria": criteria, "per_question": self.rows}


async def _answer(kb, side: Side, question: str) -> str | None:
    if side.imported:
        return (side.answers or {}).get(question)
    answer = await kb.aquery(question, side.mode, **side.options)
    return answer.text


async def _judge(judge, question: str, answers: dict[str, str], trial: int) -> dict[str, str] | None:
    order = ("a", "b") if trial % 2 == 0 else ("b", "a")
    try:
        return await judge_once(judge, question, answers, order)
    except ModelOutputError:
        return None


async def winrate(kb, judge, questions: list[str], side_a: Side, side_b: Side, trials: int = DEFAULT_TRIALS,
                  concurrency: int = 4) -> Verdicts:
    """Answer every question with both sides and judge each pair ``trials`` times."""
    if judge is None:
        raise ScholarGraphError("win rates need an LLM judge: set judge.base_url/judge.model (or llm.base_url/llm.model)")
    if trials < 1:
        raise ScholarGraphError("eval winrate needs at least one trial")
    verdicts = Verdicts(trials)
    limit = asyncio.Semaphore(concurrency)

    async def one(question: str) -> dict | None:
        async with limit:
            found = {"a": await _answer(kb, side_a, question), "b": await _answer(kb, side_b, question)}
            answers = {s: text for s, text in found.items() if text}
            if len(answers) < 2:
                for s in found.keys() - answers.keys():
                    verdicts.missing.setdefault((side_a if s == "a" else side_b).name, []).append(question)
                return None
            judged = [await _judge(judge, question, answers, t) for t in range(trials)]
        for t, verdict in enumerate(judged):
            verdicts.add(t, verdict)
        return {"question": question, "judgements": judged}

    rows = await asyncio.gather(*(one(q) for q in questions))
    verdicts.rows = [r for r in rows if r is not None]
    return verdicts
