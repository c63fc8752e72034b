"""One judgement of a pair of answers by the LLM judge (thesis 000 Appendix A.1).

The prompt is the appendix's (A.1.1 system instruction, A.1.2 template: ``prompts/judge.txt``);
the two answers are shown as "Answer Petter" and "Answer Bob" (A.1.3: placeholders for the two
systems, never "first"/"second"), in the order asked for. The reply is asked for under a JSON
schema (``JUDGE_SCHEMA``: "Comprehensiveness", "Diversity", "Empowerment", "Overall Winner",
each ``{"Reasoning", "Winner"}``) when the server supports structured output; the parser also
reads looser shapes. Unusable output raises ModelOutputError with the raw text: the caller counts
it, nothing is guessed.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, model_validator

from ..errors import ModelOutputError
from ..llm.output import Invalid, LenientModel, validate
from ..llm.repair import parse_json
from ..prompts import load_prompt

CRITERIA = ("comprehensiveness", "diversity", "empowerment", "overall")
NAMES = ("Petter", "Bob")  # Appendix A.1.3: the names of the answer shown first and second
CRITERION_KEYS = ("Comprehensiveness", "Diversity", "Empowerment", "Overall Winner")  # Appendix A.1.2


# a reasoning is a few sentences; the bound stops a looping model (Qwen2.5-Coder 0.5B repeated one
# sentence until its budget ended, and the verdict was lost)
REASONING_CHARS = 800


def _judge_schema() -> dict[str, Any]:
    part = {"type": "object", "required": ["Reasoning", "Winner"],
            "properties": {"Reasoning": {"type": "string", "maxLength": REASONING_CHARS},
                           "Winner": {"type": "string", "enum": [f"Answer {n}" for n in NAMES]}}}
    return {"type": "object", "required": list(CRITERION_KEYS), "properties": {k: part for k in CRITERION_KEYS}}


JUDGE_SCHEMA = _judge_schema()


def _named(value: object) -> str | None:
    """The text naming a criterion's winner: ``{"Winner": "Answer Petter", "Reasoning": ...}`` or just "Petter"."""
    if isinstance(value, dict):
        value = {str(k).lower(): v for k, v in value.items()}.get("winner")
    return None if value is None else str(value)


Named = Annotated[str | None, BeforeValidator(_named)]


class Verdict(LenientModel):
    """One judgement: the text naming the winning answer per criterion, ``None`` where unnamed;
    keys in any case, "Overall Winner" as "overall"."""

    comprehensiveness: Named = None
    diversity: Named = None
    empowerment: Named = None
    overall: Named = None

    @model_validator(mode="before")
    @classmethod
    def _criteria(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        return {str(k).lower().replace(" winner", "").strip(): v for k, v in data.items()}


def _side(text: str, order: tuple[str, str]) -> str | None:
    """'a' | 'b' for a verdict naming an answer (by name, or by "1"/"first" as models sometimes do)."""
    text = text.strip().lower().strip(" :*\"'[]").removeprefix("answer").strip(" :*\"'[]")
    for name, side in zip(NAMES, order, strict=True):
        if text.startswith(name.lower()):
            return side
    if text.startswith(("1", "first")):
        return order[0]
    if text.startswith(("2", "second")):
        return order[1]
    return None


def parse_verdict(raw: str, order: tuple[str, str] = ("a", "b")) -> dict[str, str]:
    """criterion -> 'a' | 'b' (``order`` = which side was shown under NAMES[0], NAMES[1])."""
    data = parse_json(raw)
    if not isinstance(data, dict):
        raise ModelOutputError("judge output is not a JSON object", raw)
    try:
        verdict = validate(data, Verdict)
    except Invalid as err:
        raise ModelOutputError(f"judge output does not fit: {err}", raw) from None
    out = {c: w for c in CRITERIA if (w := _side(getattr(verdict, c) or "", order)) is not None}
    if "overall" not in out:
        raise ModelOutputError("judge output names no overall winner", raw)
    return out


async def judge_once(llm, question: str, answers: dict[str, str], order: tuple[str, str]) -> dict[str, str]:
    """The judge's verdict with ``answers[order[0]]`` shown first; criterion -> 'a' | 'b'."""
    prompt = load_prompt("judge")
    messages = prompt.messages(question=question, name1=NAMES[0], answer1=answers[order[0]],
                               name2=NAMES[1], answer2=answers[order[1]])
    reply = await llm.chat(messages, purpose="judge", schema=JUDGE_SCHEMA, schema_name="judgement",
                           parse=lambda raw: parse_verdict(raw, order))  # an unusable verdict is not cached
    if reply.error is not None:
        if isinstance(reply.error, ModelOutputError):
            raise reply.error
        raise ModelOutputError(str(reply.error), reply.text)
    return reply.parsed
