"""Synthetic evaluation questions: users x tasks x questions from a description of the corpus
(thesis 000 §3.5.1: 5 users x 5 tasks x 5 questions = 125 per domain)."""

from __future__ import annotations

from ..errors import ModelOutputError
from ..extract.json_repair import parse_json
from ..prompts import load_prompt


def corpus_description(kb, max_titles: int = 40) -> str:
    titles = [r["title"] for r in kb.status() if r["status"] == "PROCESSED"][:max_titles]
    top = [e["name"] for e in kb.entities(limit=30)]
    return f"{len(titles)} papers, e.g.: " + "; ".join(titles) + (". Frequent topics: " + ", ".join(top) if top else "")


async def generate_questions(kb, users: int = 5, tasks: int = 5, per_task: int = 5) -> list[dict]:
    prompt = load_prompt("questions")
    reply = await kb.llm.chat(prompt.messages(description=corpus_description(kb), users=users, tasks=tasks,
                                              questions=per_task), purpose="other")
    data = parse_json(reply.text)
    if not isinstance(data, dict) or not isinstance(data.get("users"), list):
        raise ModelOutputError("question generation: expected {\"users\": [...]}", reply.text)
    out = []
    for u in data["users"]:
        for t in (u.get("tasks") or []) if isinstance(u, dict) else []:
            for q in (t.get("questions") or []) if isinstance(t, dict) else []:
                if isinstance(q, str) and q.strip():
                    out.append({"user": u.get("user", ""), "task": t.get("task", ""), "question": q.strip()})
    if not out:
        raise ModelOutputError("question generation returned no questions", reply.text)
    return out
