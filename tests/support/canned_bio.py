"""Canned answers for the fastbio prompts (draft, refine) and the bio query prompts (parse, batch
answer, merge): a test double for the protocol, used by tests and benchmarks."""

from __future__ import annotations

import json
import re
from typing import Any

from scholargraph.testing.llm_server import Rule

from .canned_terms import terms, user_text

DRAFT_MARK = r"Extract the findings of a biomedical abstract"
REFINE_MARK = r"state what the text reports about how the source relates"
PARSE_MARK = r"Parse a biomedical question for a knowledge-graph search"
ANSWER_MARK = r"Answer the question using only the numbered papers"
MERGE_MARK = r"Merge partial answers to one question"
_TYPES = ["Gene/Protein", "Disease", "Drug/Compound", "Pathway"]
_RTYPES = ["Biomarker", "Regulation", "Causal", "Risk Factor"]


def _line(label: str, text: str) -> str:
    """The rest of the line that starts with ``label:`` in a prompt."""
    found = re.search(rf"^{label}: (.*)$", text, re.M)
    return found.group(1) if found else ""


def draft_reply(request: dict[str, Any]) -> str:
    """Entities = the abstract's capitalised terms; relations chain them; descriptions name the title."""
    text = user_text(request)
    title = _line("Title", text)
    abstract = text.split("Abstract: ", 1)[1]
    names = [t for t in terms(abstract, 8) if len(t) > 2]
    entities = [{"name": n, "type": _TYPES[i % 4], "alias": n.lower() if i % 2 else ""} for i, n in enumerate(names)]
    relations = [{"source": a, "target": b, "type": _RTYPES[i % 4], "confidence": 0.8,
                  "description": f"{a} is linked to {b} in '{title[:40]}'."}
                 for i, (a, b) in enumerate(zip(names, names[1:], strict=False))][:6]
    return json.dumps({"entities": entities, "relations": relations})


def refine_reply(request: dict[str, Any]) -> str:
    """Quotes the start of the first paragraph it was given, so provenance can be checked."""
    text = user_text(request)
    source = _line("Source", text)
    target = _line("Target", text)
    passage = text.split("Text:\n", 1)[1].split("\n\n")[0]
    return f"In the main text, {source} acts on {target}: {passage[:90]}"


def batch_answer(request: dict[str, Any]) -> str:
    numbers = re.findall(r"^\[(\d+)\]", user_text(request), re.M)
    return " ".join(f"Finding from paper [{n}]." for n in numbers) + " Also an invented one [42]."


def merge_answer(request: dict[str, Any]) -> str:
    cites = re.findall(r"\[\d+\]", user_text(request))
    return "Merged: " + " ".join(dict.fromkeys(cites)) + " and [77]."


def parse_reply(request: dict[str, Any]) -> str:
    names = terms(user_text(request), 4)
    return json.dumps({"genes": [n for n in names if n.isupper()], "diseases": [n for n in names if not n.isupper()],
                       "other": [], "entity_types": [], "relation_types": []})


def fastbio_rules() -> list[Rule]:
    return [Rule("extract", DRAFT_MARK, draft_reply), Rule("refine", REFINE_MARK, refine_reply)]


def bio_query_rules() -> list[Rule]:
    return [Rule("parse", PARSE_MARK, parse_reply), Rule("answer", ANSWER_MARK, batch_answer),
            Rule("merge", MERGE_MARK, merge_answer)]
