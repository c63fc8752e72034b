"""Synthetic evaluation questions: users x tasks x questions from a description of the corpus
(thesis 000 §3.5.1: 5 users x 5 tasks x 5 questions = 125 per domain)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator

from ..errors import ModelOutputError
from ..llm.output import Invalid, Items, LenientModel, validate
from ..llm.repair import parse_json
from ..prompts import load_prompt


def _questions(value: Any) -> list[str]:
    return [q.strip() for q in value if isinstance(q, str) and q.strip()] if isinstance(value, list) else []


class AskedTask(LenientModel):
    """One task of a user and its questions (blank or non-text questions dropped)."""

    task: Any = ""
    questions: Annotated[list[str], BeforeValidator(_questions)] = []


class AskingUser(LenientModel):
    user: Any = ""
    tasks: Items[AskedTask] | None = None


class QuestionSet(LenientModel):
    """The question generator's reply: ``{"users": [{"user", "tasks": [{"task", "questions"}]}]}``."""

    users: list[Annotated[AskingUser | None, BeforeValidator(lambda u: u if isinstance(u, dict) else None)]]


def corpus_description(kb, max_titles: int = 40) -> str:
    titles = [r["title"] for r in kb.status() if r["status"] == "PROCESSED"][:max_titles]
    top = [e["name"] for e in kb.entities(limit=30)]
    return f"{len(titles)} papers, e.g.: " + "; ".join(titles) + (". Frequent topics: " + ", ".join(top) if top else "")


async def generate_questions(kb, users: int = 5, tasks: int = 5, per_task: int = 5) -> list[dict]:
    prompt = load_prompt("questions")
    reply = await kb.llm.chat(prompt.messages(description=corpus_description(kb), users=users, tasks=tasks,
                                              questions=per_task), purpose="other")
    data = parse_json(reply.text)
    try:
        asked = validate(data, QuestionSet)
    except Invalid:
        raise ModelOutputError("question generation: expected {\"users\": [...]}", reply.text) from None
    out = [{"user": u.user, "task": t.task, "question": q} for u in asked.users if u for t in u.tasks or []
           for q in t.questions or []]
    if not out:
        raise ModelOutputError("question generation returned no questions", reply.text)
    return out
