"""Scripted answers to LightRAG's indexing prompts, for the side-by-side token comparison.

These are :class:`~scholargraph.testing.llm_server.Rule` objects for the same
``ScriptedLLMServer`` that answers our own prompts with ``tests.support.canned``. The
answers are written here (nothing is copied from LightRAG); the regexes recognise LightRAG
1.5.x's default prompts by their fixed wording, and the replies follow the output format those
prompts ask for:

* extraction — one ``entity<|#|>name<|#|>type<|#|>description`` row per entity, then one
  ``relation<|#|>source<|#|>target<|#|>keywords<|#|>description`` row per relation, then
  ``<|COMPLETE|>``;
* gleaning ("identify and extract any missed ... entities") — nothing missed: ``<|COMPLETE|>``;
* description summary — plain text;
* query keywords — ``{"high_level_keywords": [...], "low_level_keywords": [...]}``.

To keep both systems' completions equivalent, an extraction reply carries exactly what the
canned answer to our own extraction prompt carries for the same passage: the entities are
``canned.terms(passage)`` (type Concept, "X is discussed in the passage."), consecutive ones are
related ("related", "X is related to Y in the passage."), and gleaning finds nothing new (as our
canned glean answer). Summaries mirror ``canned.summary_reply`` (the first two descriptions,
at most 400 characters).
"""

from __future__ import annotations

import json
import re
from typing import Any

from scholargraph.testing.llm_server import Rule
from tests.support.canned import terms

TUPLE = "<|#|>"
COMPLETE = "<|COMPLETE|>"

# Patterns: fixed sentences of LightRAG's default prompts (checked against 1.5.7's prompt.py).
GLEAN_PATTERN = r"Based on the last extraction task, identify and extract any missed"
EXTRACT_PATTERN = r"Extract entities and relationships from the `---Input Text---` section"
SUMMARY_PATTERN = r"synthesize a list of descriptions of a given entity or relation"
KEYWORDS_PATTERN = r"expert keyword extractor"

_INPUT = re.compile(r"---Input Text---\s*```\n?(.*?)\n?```\s*---Output---", re.DOTALL)
_DESC_LIST = re.compile(r"Description List:\s*```\n?(.*?)\n?```", re.DOTALL)
_QUERY = re.compile(r"User Query:\s*(.*?)\n\s*---Output---", re.DOTALL)


def _user_messages(request: dict[str, Any]) -> list[str]:
    return [m.get("content") or "" for m in request.get("messages", []) if m.get("role") == "user"]


def input_text(request: dict[str, Any]) -> str:
    """The fenced ``---Input Text---`` of the (first) extraction user prompt in the request."""
    for text in _user_messages(request):
        match = _INPUT.search(text)
        if match:
            return match.group(1)
    return "\n".join(_user_messages(request))


def _clean(value: str) -> str:
    return " ".join(value.replace(TUPLE, " ").split())


def extraction_reply(request: dict[str, Any]) -> str:
    names = terms(input_text(request))
    rows = [f"entity{TUPLE}{_clean(n)}{TUPLE}Concept{TUPLE}{_clean(n)} is discussed in the passage." for n in names]
    rows += [
        f"relation{TUPLE}{_clean(a)}{TUPLE}{_clean(b)}{TUPLE}related{TUPLE}{_clean(a)} is related to {_clean(b)} in the passage."
        for a, b in zip(names, names[1:], strict=False)
    ]
    rows.append(COMPLETE)
    return "\n".join(rows)


def glean_reply(request: dict[str, Any]) -> str:
    return COMPLETE


def summary_reply(request: dict[str, Any]) -> str:
    text = "\n".join(_user_messages(request))
    match = _DESC_LIST.search(text)
    descriptions = []
    for line in (match.group(1) if match else "").splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            descriptions.append(line)
            continue
        if isinstance(item, dict):
            descriptions.extend(str(v) for v in item.values())
        else:
            descriptions.append(str(item))
    return " ".join(descriptions[:2])[:400] or "Summary."


def keywords_reply(request: dict[str, Any]) -> str:
    text = "\n".join(_user_messages(request))
    match = _QUERY.search(text)
    names = terms(match.group(1) if match else text, 6)
    return json.dumps({"high_level_keywords": [n.lower() for n in names[:3]] or ["research"],
                       "low_level_keywords": names[:6] or ["method"]})


def lightrag_rules(prefix: str = "lightrag.") -> list[Rule]:
    """Rules for LightRAG's prompts, kinds prefixed (``lightrag.extract``...). Gleaning comes first:
    its request replays the extraction prompt in the history."""
    return [
        Rule(f"{prefix}glean", GLEAN_PATTERN, glean_reply),
        Rule(f"{prefix}extract", EXTRACT_PATTERN, extraction_reply),
        Rule(f"{prefix}summarise", SUMMARY_PATTERN, summary_reply),
        Rule(f"{prefix}keywords", KEYWORDS_PATTERN, keywords_reply),
    ]


# --- fallback for our fastbio profile -------------------------------------------------------
# Used only when ``canned.default_rules`` has no answer for the fastbio prompts (they come after
# it): the same entities as the canned extraction answer, from the abstract; one sentence per
# refined relation.

FASTBIO_DRAFT_PATTERN = r"Extract the findings of a biomedical abstract"
FASTBIO_REFINE_PATTERN = r"state what the text reports about how the source relates to the target"
_ONE_OF = re.compile(r"\btype is one of:\s*([^.;\n]+)")
_ABSTRACT = re.compile(r"Abstract:\s*(.*)", re.DOTALL)
_PAIR = re.compile(r"Source:\s*(.*?)\n\s*Target:\s*(.*?)\n")


def _first_type(system: str, which: int) -> str:
    found = _ONE_OF.findall(system)
    if len(found) > which:
        return found[which].split(",")[0].strip() or "Other"
    return "Other"


def fastbio_draft_reply(request: dict[str, Any]) -> str:
    system = "\n".join(m.get("content") or "" for m in request.get("messages", []) if m.get("role") == "system")
    user = "\n".join(_user_messages(request))
    match = _ABSTRACT.search(user)
    names = terms(match.group(1) if match else user)
    etype, rtype = _first_type(system, 0), _first_type(system, 1)
    return json.dumps({
        "entities": [{"name": n, "type": etype, "alias": ""} for n in names],
        "relations": [{"source": a, "target": b, "type": rtype, "description": f"{a} is related to {b} in the abstract.",
                       "confidence": 0.9} for a, b in zip(names, names[1:], strict=False)],
    })


def fastbio_refine_reply(request: dict[str, Any]) -> str:
    match = _PAIR.search("\n".join(_user_messages(request)))
    source, target = (match.group(1).strip(), match.group(2).strip()) if match else ("The source", "the target")
    return f"{source} is related to {target} according to the main text."


def fastbio_fallback_rules(prefix: str = "fastbio-fallback.") -> list[Rule]:
    return [
        Rule(f"{prefix}draft", FASTBIO_DRAFT_PATTERN, fastbio_draft_reply),
        Rule(f"{prefix}refine", FASTBIO_REFINE_PATTERN, fastbio_refine_reply),
    ]


def combined_rules() -> list[Rule]:
    """LightRAG's rules, then ours (``canned.default_rules``), then the fastbio fallback: one server
    answers both systems. LightRAG's go first because our keyword rule (``high_level``) would also
    match its prompt; the fallback goes last so canned answers, once they exist, win."""
    from tests.support.canned import default_rules

    return lightrag_rules() + default_rules() + fastbio_fallback_rules()


__all__ = ["combined_rules", "extraction_reply", "fastbio_fallback_rules", "glean_reply", "input_text", "keywords_reply", "lightrag_rules",
           "summary_reply"]
