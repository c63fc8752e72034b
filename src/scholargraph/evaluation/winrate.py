"""Pairwise LLM-judge win rates (thesis 000 §3.5.1, Appendix A.1).

Each question is answered by configuration A and B; each pair is judged twice, once in each
order, so position bias cancels. A verdict per criterion counts 1 for the winner per judgement;
win rate = wins / judgements. Unusable judge output is counted and reported, never guessed.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BeforeValidator, model_validator

from ..errors import ModelOutputError, ScholarGraphError
from ..llm.output import LenientModel, validate
from ..llm.repair import parse_json
from ..prompts import load_prompt

CRITERIA = ("comprehensiveness", "diversity", "empowerment", "overall")


@dataclass
class Verdicts:
    wins_a: Counter = field(default_factory=Counter)
    wins_b: Counter = field(default_factory=Counter)
    judgements: int = 0
    unusable: int = 0
    rows: list[dict] = field(default_factory=list)

    def to_json(self, name_a: str, name_b: str) -> dict:
        rates = {}
        for c in CRITERIA:
            total = self.wins_a[c] + self.wins_b[c]
            rates[c] = {f"{name_a}_wins": self.wins_a[c], f"{name_b}_wins": self.wins_b[c],
                        f"{name_a}_win_rate": round(self.wins_a[c] / total, 4) if total else None}
        return {"a": name_a, "b": name_b, "judgements": self.judgements, "unusable_judgements": self.unusable,
                "questions": len(self.rows), "criteria": rates, "per_question": self.rows}


def _winner(value: object) -> int | None:
    if isinstance(value, dict):
        value = {str(k).lower(): v for k, v in value.items()}.get("winner", "")
    text = str(value).strip().lower()
    if text.startswith(("1", "answer 1", "first")):
        return 1
    if text.startswith(("2", "answer 2", "second")):
        return 2
    return None


Winner = Annotated[int | None, BeforeValidator(_winner)]


class Verdict(LenientModel):
    """One judgement: the winning answer (1 or 2) per criterion, ``None`` where unnamed; a
    criterion is ``{"winner": "1", "reason": ...}`` or just "Answer 1", keys in any case."""

    comprehensiveness: Winner = None
    diversity: Winner = None
    empowerment: Winner = None
    overall: Winner = None

    @model_validator(mode="before")
    @classmethod
    def _criteria(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        return {str(k).lower().replace(" winner", "").strip(): v for k, v in data.items()}


def parse_verdict(raw: str) -> dict[str, int]:
    data = parse_json(raw)
    if not isinstance(data, dict):
        raise ModelOutputError("judge output is not a JSON object", raw)
    verdict = validate(data, Verdict)
    out = {c: w for c in CRITERIA if (w := getattr(verdict, c)) is not None}
    if "overall" not in out:
        raise ModelOutputError("judge output names no overall winner", raw)
    return out


async def judge_pair(llm, question: str, answer_a: str, answer_b: str) -> list[dict[str, str] | None]:
    """Two judgements (A first, then B first); each maps criterion -> 'a' | 'b', or None if unusable."""
    prompt = load_prompt("judge")
    results: list[dict[str, str] | None] = []
    for first, second, names in ((answer_a, answer_b, ("a", "b")), (answer_b, answer_a, ("b", "a"))):
        reply = await llm.chat(prompt.messages(question=question, first=first, second=second), purpose="judge",
                               parse=parse_verdict)  # an unusable verdict is not cached
        if reply.error is not None:
            results.append(None)
            continue
        results.append({c: names[w - 1] for c, w in reply.parsed.items()})
    return results


async def winrate(kb, questions: list[str], mode_a: str, mode_b: str, options_a: dict | None = None,
                  options_b: dict | None = None, concurrency: int = 4) -> Verdicts:
    if kb.llm is None:
        raise ScholarGraphError("win rates need an LLM for answers and judging: set llm.base_url and llm.model")
    verdicts = Verdicts()
    limit = asyncio.Semaphore(concurrency)

    async def one(question: str) -> None:
        async with limit:
            a = await kb.aquery(question, mode_a, **(options_a or {}))
            b = await kb.aquery(question, mode_b, **(options_b or {}))
            judged = await judge_pair(kb.llm, question, a.text, b.text)
        row = {"question": question, "judgements": judged}
        for j in judged:
            verdicts.judgements += 1
            if j is None:
                verdicts.unusable += 1
                continue
            for criterion, side in j.items():
                (verdicts.wins_a if side == "a" else verdicts.wins_b)[criterion] += 1
        verdicts.rows.append(row)

    await asyncio.gather(*(one(q) for q in questions))
    verdicts.rows.sort(key=lambda r: questions.index(r["question"]))
    return verdicts
