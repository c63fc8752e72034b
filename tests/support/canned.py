"""Deterministic canned answers per prompt kind, for the scripted server in tests and benchmarks.

They answer in the format each prompt asks for, derived from the prompt text itself (the
passage's capitalised terms become entities, consecutive ones are related), so runs are
reproducible and output sizes scale with the input like a real model's would. This is a test
double for the protocol, never used by the product.
"""

from __future__ import annotations

import json
import re
from typing import Any

from scholargraph.testing.llm_server import Reply, Rule

from .canned_bio import bio_query_rules, fastbio_rules
from .canned_localkg import localkg_rules
from .canned_terms import terms, user_text


def _passage(text: str) -> str:
    _, _, after = text.partition("Passage:\n")
    passage, _, _ = after.partition("\n\nAlready extracted:")
    return passage or text


def extraction_reply(request: dict[str, Any]) -> str:
    """The records the extraction prompt asks for, one per line: the passage's terms as entities,
    consecutive ones related, the first five as content keywords."""
    passage = _passage(user_text(request))
    names = [n.replace("|", " ") for n in terms(passage)]
    rows = [f"entity|{n}|Concept|{n} is discussed in the passage." for n in names]
    rows += [f"relation|{a}|{b}|related|{a} is related to {b} in the passage.|5" for a, b in zip(names, names[1:], strict=False)]
    if names:
        rows.append("keywords|" + ", ".join(n.lower() for n in names[:5]))
    return "\n".join(rows) or "none"


def glean_reply(request: dict[str, Any]) -> str:
    return "none"


def keywords_reply(request: dict[str, Any]) -> str:
    text = user_text(request)
    names = terms(text, 6)
    return json.dumps({"high_level": [n.lower() for n in names[:3]] or ["research"], "low_level": names[:6] or ["method"]})


def answer_reply(request: dict[str, Any]) -> str:
    text = user_text(request)
    numbers = re.findall(r"^\[(\d+)\]", text, flags=re.MULTILINE)[:2] or ["1"]
    cites = "".join(f"[{n}]" for n in numbers)
    return f"According to the sources, the answer is supported by the retrieved passages {cites}."


def summary_reply(request: dict[str, Any]) -> str:
    text = user_text(request)
    lines = [line[2:] for line in text.splitlines() if line.startswith("- ")]
    return " ".join(lines[:2])[:400] or "Summary."


def community_report_reply(request: dict[str, Any]) -> str:
    """A report naming the first listed entities (the prompt lists them most central first)."""
    text = user_text(request)
    names = re.findall(r"^- (.+?) \(", text.partition("Relations:")[0], flags=re.MULTILINE)[:3] or ["the community"]
    children = len(re.findall(r"^- .+\(rating ", text, flags=re.MULTILINE))
    summary = f"This community is about {', '.join(names)}." + (f" It joins {children} sub-communities." if children else "")
    return json.dumps({"title": "Topic: " + " and ".join(names[:2]), "summary": summary, "rating": 6,
                       "keywords": [n.lower() for n in names]})


def summary_map_reply(request: dict[str, Any]) -> str:
    text = user_text(request)
    number = re.search(r"Report \[(\d+)\]", text)
    title = text.partition("): ")[2].partition("\n")[0] or "this topic"
    n = number.group(1) if number else "1"
    return json.dumps({"points": [{"text": f"The papers discuss {title} [{n}].", "score": 100 - int(n)}]})


def summary_reduce_reply(request: dict[str, Any]) -> str:
    text = user_text(request)
    cites = "".join(dict.fromkeys(re.findall(r"\[\d+\]", text.partition("Question:")[0])))
    return f"The collection covers several connected topics {cites}."


def judge_reply(request: dict[str, Any]) -> str:
    """Prefers the longer answer (a deterministic stand-in for a judge), naming it as the prompt
    (thesis 000 Appendix A.1.2) does, in the appendix's JSON format."""
    text = user_text(request)
    names = re.findall(r"^\*\*Answer (\w+):\*\*$", text, flags=re.MULTILINE)[:2]
    if len(names) < 2:
        return "{}"
    first = text.partition(f"**Answer {names[0]}:**\n")[2].partition(f"\n\n**Answer {names[1]}:**")[0]
    second = text.partition(f"**Answer {names[1]}:**\n")[2].partition("\n\nEvaluate both answers")[0]
    winner = names[0] if len(first) >= len(second) else names[1]
    return json.dumps({c: {"Reasoning": "more detail", "Winner": f"Answer {winner}"} for c in
                       ("Comprehensiveness", "Diversity", "Empowerment", "Overall Winner")})


def _asked(pattern: str, request: dict[str, Any], default: int = 2) -> int:
    found = re.search(pattern, user_text(request))
    return int(found.group(1)) if found else default


def users_reply(request: dict[str, Any]) -> str:
    return json.dumps({"users": [{"user": f"researcher {u}", "description": f"reads the collection for topic {u}"}
                                 for u in range(_asked(r"Describe (\d+) distinct users", request))]})


def tasks_reply(request: dict[str, Any]) -> str:
    intents = ("exploratory", "comparative", "problem-solving")
    return json.dumps({"tasks": [{"task": f"task {t}", "intent": intents[t % 3]}
                                 for t in range(_asked(r"Give this user (\d+) distinct tasks", request))]})


def questions_reply(request: dict[str, Any]) -> str:
    text = user_text(request)
    names = terms(text.partition("User:")[0], 8) or ["the collection"]
    who = re.search(r"User: researcher (\d+)", text)
    task = re.search(r"\): task (\d+)", text)
    shift = (int(who.group(1)) if who else 0) + (int(task.group(1)) if task else 0)
    return json.dumps({"questions": [f"How does {names[(shift + q) % len(names)]} relate to the other topics?"
                                     for q in range(_asked(r"Write (\d+) questions", request))]})


def default_rules() -> list[Rule]:
    """Rules matched in order against the whole request text (system + user)."""
    return [*fastbio_rules(), *bio_query_rules(), *localkg_rules(),
        Rule("glean", r"Already extracted:", glean_reply),
        Rule("extract", r"Build a knowledge graph from a passage", extraction_reply),
        Rule("summarise", r"merge descriptions of one", summary_reply),
        Rule("report", r"You write the report of one community", community_report_reply),
        Rule("map", r"extract what it says that helps answer a question", summary_map_reply),
        Rule("reduce", r"from analysts' points", summary_reduce_reply),
        Rule("keywords", r"high_level", keywords_reply),
        Rule("judge", r"evaluating two answers to the same question", judge_reply),
        Rule("users", r"distinct users of this collection", users_reply),
        Rule("tasks", r"Give this user \d+ distinct tasks", tasks_reply),
        Rule("questions", r"questions this user would ask the collection", questions_reply),
        Rule("answer", r"numbered sources", answer_reply),
    ]


__all__ = ["Reply", "default_rules", "extraction_reply", "terms"]
