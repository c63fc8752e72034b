"""Synthetic evaluation questions as thesis 000 §3.5.1 makes them (after GraphRAG): first the
users of the collection, then each user's tasks (exploratory, comparative, problem-solving), then
questions for each user-task pair: 5 users x 5 tasks x 5 questions = 125 per domain.

Each step is its own call with a JSON schema (structured output where the server supports it;
prompts ``eval_users``, ``eval_tasks``, ``eval_questions``): 1 + users + users x tasks calls, the
tasks of all users and the questions of all pairs asked concurrently. A step whose reply is
unusable fails with ModelOutputError naming the step.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from pydantic import BeforeValidator

from ..errors import ModelOutputError
from ..llm.output import Invalid, LenientModel, validate
from ..llm.repair import parse_json
from ..prompts import load_prompt

INTENTS = ("exploratory", "comparative", "problem-solving")


def _text(value: Any) -> str:
    return str(value).strip() if isinstance(value, str | int | float) else ""


def _texts(value: Any) -> list[str]:
    return [q.strip() for q in value if isinstance(q, str) and q.strip()] if isinstance(value, list) else []


def _objects(value: Any) -> list[dict]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


Text = Annotated[str, BeforeValidator(_text)]


class User(LenientModel):
    user: Text = ""
    description: Text = ""


class Users(LenientModel):
    users: Annotated[list[User], BeforeValidator(_objects)] = []


class Task(LenientModel):
    task: Text = ""
    intent: Text = ""


class Tasks(LenientModel):
    tasks: Annotated[list[Task], BeforeValidator(_objects)] = []


class Questions(LenientModel):
    questions: Annotated[list[str], BeforeValidator(_texts)] = []


def _array_of(items: dict, key: str) -> dict:
    return {"type": "object", "required": [key], "properties": {key: {"type": "array", "items": items}}}


def _object(*fields: str, enum: dict[str, list[str]] | None = None) -> dict:
    props = {f: {"type": "string", **({"enum": enum[f]} if enum and f in enum else {})} for f in fields}
    return {"type": "object", "required": list(fields), "properties": props}


USERS_SCHEMA = _array_of(_object("user", "description"), "users")
TASKS_SCHEMA = _array_of(_object("task", "intent", enum={"intent": list(INTENTS)}), "tasks")
QUESTIONS_SCHEMA = _array_of({"type": "string"}, "questions")


def corpus_description(kb, max_titles: int = 40) -> str:
    titles = [r.title for r in kb.status() if r.status == "PROCESSED"][:max_titles]
    top = [e.name for e in kb.entities(limit=30)]
    return f"{len(titles)} papers, e.g.: " + "; ".join(titles) + (". Frequent topics: " + ", ".join(top) if top else "")


async def _ask(llm, prompt: str, schema: dict, model: type[LenientModel], step: str, **values: Any) -> Any:
    reply = await llm.chat(load_prompt(prompt).messages(**values), purpose="questions", schema=schema,
                           schema_name=prompt)
    try:
        return validate(parse_json(reply.text), model)
    except Invalid:
        raise ModelOutputError(f"question synthesis ({step}): the reply does not fit its schema", reply.text) from None


async def generate_questions(kb, users: int = 5, tasks: int = 5, per_task: int = 5) -> list[dict]:
    """Rows ``{"user", "task", "intent", "question"}``: ``users`` x ``tasks`` x ``per_task`` of them
    when the model gives as many as asked (extra ones are dropped)."""
    llm, description = kb.llm, corpus_description(kb)
    found = [u for u in (await _ask(llm, "eval_users", USERS_SCHEMA, Users, "users", description=description,
                                    users=users)).users if u.user][:users]
    if not found:
        raise ModelOutputError("question synthesis (users): no user", "")

    async def tasks_of(user: User) -> list[Task]:
        got = await _ask(llm, "eval_tasks", TASKS_SCHEMA, Tasks, f"tasks of {user.user}", description=description,
                         user=user.user, user_description=user.description, tasks=tasks)
        return [t for t in got.tasks if t.task][:tasks]

    async def questions_of(user: User, task: Task) -> list[dict]:
        got = await _ask(llm, "eval_questions", QUESTIONS_SCHEMA, Questions, f"questions of {user.user}: {task.task}",
                         description=description, user=user.user, user_description=user.description, task=task.task,
                         intent=task.intent or "exploratory", questions=per_task)
        return [{"user": user.user, "task": task.task, "intent": task.intent, "question": q}
                for q in got.questions[:per_task]]

    all_tasks = await asyncio.gather(*(tasks_of(u) for u in found))
    pairs = [(u, t) for u, ts in zip(found, all_tasks, strict=True) for t in ts]
    rows = [r for batch in await asyncio.gather(*(questions_of(u, t) for u, t in pairs)) for r in batch]
    if not rows:
        raise ModelOutputError("question synthesis returned no questions", "")
    return rows
