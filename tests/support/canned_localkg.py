"""Canned answers for the localkg prompts (seed 004 Prompts 1-5.2) and its evaluation prompts: a
test double for the protocol, used by tests and benchmarks, never by the product.

Answers are derived from the prompt text so they scale with the input like a model's would:
capitalised terms and acronyms are Named Entities, "the/a <noun phrase>" are General Concepts,
pronouns are Other Entities; a term is described by its name (an acronym by the long form its
context defines, a pronoun by the section's first named term), so mentions of one thing get the
same description and link; types and predicates come from small fixed maps, so that taxonomy and
predicate resolution have something to find ("uses", "employs" and "makes use of" mean the same).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from scholargraph.testing.llm_server import Rule
from scholargraph.text.acronyms import find_acronym_definitions
from scholargraph.text.stopwords import STOPWORDS

from .canned_terms import terms, user_text

MENTIONS_MARK = r"of an academic paper, extract all"
MENTIONS_SENTENCES_MARK = r"Given numbered sentences of an academic paper, extract, separately for EACH sentence, all"
FAMILIARITY_MARK = r"say whether you can tell what it refers to"
DESCRIBE_CONTEXT_MARK = r"describes clearly what the mention refers to in this paper"
DESCRIBE_TERM_MARK = r"describes what the term means in general"
RELATIONS_MARK = r"of an academic paper and the numbered list of entities"
RELATIONS_SENTENCES_MARK = r"each followed by the entities it mentions"
SHRINK_MARK = r"Summarise the given section of an academic paper"
PAIRS_MARK = r"numbered pairs of entities from it"
TYPE_MARK = r"describes what this type of thing is"
PREDICATE_MARK = r"describes what the predicate means"
KG2TEXT_MARK = r"Write the passage of the paper these facts come from"
QA_ENTITIES_MARK = r"List the entities a question asks about"
QA_ANSWER_MARK = r"You answer a question about one paper"
QA_QUESTIONS_MARK = r"Write question-answer pairs that test"

_PHRASE = re.compile(r"\b(?:the|a|an)\s+([a-z][a-z-]{2,}(?:\s+[a-z][a-z-]{2,})?)\b")
_PRONOUNS = re.compile(r"\b(it|they|this tool|this approach)\b", re.IGNORECASE)
_SYNONYMS = ("uses", "employs", "makes use of")
_PREDICATES = ("uses", "is part of", "employs", "supports", "makes use of", "extracts")


def _h(text: str) -> int:
    return int(hashlib.md5(text.encode()).hexdigest()[:8], 16)


def _system(request: dict[str, Any]) -> str:
    return "\n".join(m.get("content") or "" for m in request.get("messages", []) if m.get("role") == "system")


def _input(request: dict[str, Any]) -> str:
    return user_text(request).split("## Input", 1)[-1]


def parent_types(term: str) -> list[str]:
    if re.search(r"graph", term, re.I):
        return ["knowledge graph", "data structure"]
    if re.search(r"universit|institute|ANU\b", term):
        return ["university"]
    if term.isupper() or re.search(r"[a-z][A-Z]", term):
        return ["software tool"]
    return ["system"] if term[:1].isupper() else ["concept"]


def describe(name: str) -> str:
    """The one description of a thing (the same text embeds the same way: they link)."""
    return f"{' '.join(name.casefold().split())} is a notion used in the paper's domain."


def _general(text: str) -> list[str]:
    found = []
    for m in _PHRASE.finditer(text):
        phrase = m.group(1)
        if phrase.split()[0] in STOPWORDS or phrase.split()[-1] in STOPWORDS:
            continue
        if phrase not in found:
            found.append(phrase)
    return found[:10]


_NAMED = re.compile(r"\b[A-Z][\w-]*(?:\s+(?:(?:and|of|for)\s+)?[A-Z][\w-]*)*")
_LEADING = {"The", "A", "An", "This", "These", "It", "In", "We", "Our", "Its", "For", "To", "On", "As", "By", "With"}


def named_terms(text: str, limit: int = 15) -> list[str]:
    """Capitalised names ("Metadata Extractor and Loader", "MEL", "Apache Tika"), without a leading
    "The", in order of appearance."""
    found: list[str] = []
    for m in _NAMED.finditer(text):
        words = m.group(0).split()
        while words and words[0] in _LEADING:
            words = words[1:]
        name = " ".join(words)
        if len(name) >= 3 and name not in found:
            found.append(name)
    return found[:limit]


def mentions_of(text: str, target: str) -> list[dict[str, Any]]:
    named = [{"text": t, "types": parent_types(t)} for t in named_terms(text)]
    if target.startswith("Named Entities and"):
        return named + [{"text": g, "types": parent_types(g)} for g in _general(text)]
    if target.startswith("Named"):
        return named
    others = [{"text": m.group(0), "types": []} for m in _PRONOUNS.finditer(text)]
    return named + [{"text": g, "types": parent_types(g)} for g in _general(text)] + others[:2]


def _target(request: dict[str, Any]) -> str:
    found = re.search(r"all (Named Entities and General Concepts|Named Entities|Entities)", _system(request))
    return found.group(1) if found else "Entities"


def mentions_reply(request: dict[str, Any]) -> str:
    text = _input(request).split(":\n", 1)[-1]
    return json.dumps({"mentions": mentions_of(text, _target(request))})


def _numbered(text: str) -> dict[int, str]:
    return {int(n): line for n, line in re.findall(r"^\[(\d+)\] (.*)$", text, re.M)}


def mentions_sentences_reply(request: dict[str, Any]) -> str:
    sentences = _numbered(_input(request))
    target = _target(request)
    return json.dumps({"sentences": [{"sentence": n, "mentions": mentions_of(s, target)} for n, s in sentences.items()]})


def familiarity_reply(request: dict[str, Any]) -> str:
    items = _numbered(_input(request))
    return json.dumps({"terms": [{"id": n, "familiar": line.split(" (types")[0].islower()} for n, line in items.items()]})


def _long_forms(text: str) -> dict[str, str]:
    out = {}
    for long, short in find_acronym_definitions(text):
        out[short.casefold()] = long
        out[long.casefold()] = long
    return out


def describe_context_reply(request: dict[str, Any]) -> str:
    text = _input(request)
    forms = _long_forms(text)
    first_named = next(iter(named_terms(text.split("Section:", 1)[-1].split("\n", 2)[-1], 1)), "the paper")
    out = []
    for n, line in _numbered(text).items():
        name = line.split(" (types")[0].split(" | ")[0]
        if _PRONOUNS.fullmatch(name):
            name = forms.get(first_named.casefold(), first_named)
        out.append({"id": n, "description": describe(forms.get(name.casefold(), name))})
    return json.dumps({"descriptions": out})


def describe_term_reply(request: dict[str, Any]) -> str:
    items = _numbered(_input(request))
    return json.dumps({"descriptions": [{"id": n, "description": describe(line.split(" (types")[0].split(" | ")[0])}
                                        for n, line in items.items()]})


def _chain(names: list[str]) -> list[dict[str, str]]:
    return [{"subject": a, "predicate": _PREDICATES[_h(a + b) % len(_PREDICATES)], "object": b}
            for a, b in zip(names, names[1:], strict=False)]


def relations_reply(request: dict[str, Any]) -> str:
    text = _input(request)
    listed = text.split("Entities:\n", 1)[-1].split("\n\n", 1)[0]
    return json.dumps({"triples": _chain(list(_numbered(listed).values()))[:6]})


def relations_sentences_reply(request: dict[str, Any]) -> str:
    text = _input(request)
    out = []
    for n, names in re.findall(r"^\[(\d+)\] .*\n\s+entities: (.*)$", text, re.M):
        out.append({"sentence": int(n), "triples": _chain([x.strip() for x in names.split(";") if x.strip()])[:4]})
    return json.dumps({"sentences": out})


def shrink_reply(request: dict[str, Any]) -> str:
    body = _input(request).split("Section:", 1)[-1].split("\n", 2)[-1]
    words = body.split()
    return " ".join(words[: max(1, len(words) // 2)])


def pairs_reply(request: dict[str, Any]) -> str:
    text = _input(request).split("Pairs:\n", 1)[-1]
    out = []
    for n, a, b in re.findall(r"^\[(\d+)\] A: (.*?)(?: \(|:|$).*\n\s+B: (.*?)(?: \(|:|$)", text, re.M):
        related = _h(a + b) % 3 != 0
        out.append({"pair": int(n), "subject": a, "predicate": "is associated with" if related else None, "object": b})
    return json.dumps({"pairs": out})


def type_reply(request: dict[str, Any]) -> str:
    items = _numbered(_input(request))
    return json.dumps({"descriptions": [{"id": n, "description": describe(t)} for n, t in items.items()]})


def predicate_reply(request: dict[str, Any]) -> str:
    out = []
    for n, line in _numbered(_input(request)).items():
        parts = [p.strip() for p in line.split(";")]
        predicate = parts[1] if len(parts) == 3 else line
        meaning = "relates an agent to a means it applies" if predicate in _SYNONYMS else f"says that one {predicate} another"
        out.append({"id": n, "description": f"The predicate {meaning}."})
    return json.dumps({"descriptions": out})


def kg2text_reply(request: dict[str, Any]) -> str:
    facts = re.findall(r"^- (.*)$", user_text(request), re.M)
    return " ".join(f"{f.rstrip('.')}." for f in facts)


def qa_entities_reply(request: dict[str, Any]) -> str:
    question = user_text(request).split("Question:", 1)[-1]
    return json.dumps({"entities": terms(question, 5) or _general(question)[:3]})


def qa_answer_reply(request: dict[str, Any]) -> str:
    text = user_text(request)
    facts = re.findall(r"^- (.*)$", text, re.M) or [p for p in text.split("\n\n")[1:3]]
    return " ".join(facts[:3])[:600] or "The paper does not say."


def qa_questions_reply(request: dict[str, Any]) -> str:
    text = user_text(request)
    names = terms(text, 6)
    return json.dumps({"pairs": [{"question": f"What is {n}?", "answer": describe(n)} for n in names]})


def localkg_rules() -> list[Rule]:
    """Rules for every localkg prompt (most specific marks first)."""
    return [
        Rule("lkg_mentions", MENTIONS_SENTENCES_MARK, mentions_sentences_reply),
        Rule("lkg_mentions", MENTIONS_MARK, mentions_reply),
        Rule("lkg_familiarity", FAMILIARITY_MARK, familiarity_reply),
        Rule("lkg_describe", DESCRIBE_CONTEXT_MARK, describe_context_reply),
        Rule("lkg_describe", DESCRIBE_TERM_MARK, describe_term_reply),
        Rule("lkg_relations", RELATIONS_SENTENCES_MARK, relations_sentences_reply),
        Rule("lkg_relations", RELATIONS_MARK, relations_reply),
        Rule("lkg_shrink", SHRINK_MARK, shrink_reply),
        Rule("lkg_pairs", PAIRS_MARK, pairs_reply),
        Rule("lkg_types", TYPE_MARK, type_reply),
        Rule("lkg_predicates", PREDICATE_MARK, predicate_reply),
        Rule("kg2text", KG2TEXT_MARK, kg2text_reply),
        Rule("kgqa_entities", QA_ENTITIES_MARK, qa_entities_reply),
        Rule("kgqa_answer", QA_ANSWER_MARK, qa_answer_reply),
        Rule("kgqa_questions", QA_QUESTIONS_MARK, qa_questions_reply),
    ]
