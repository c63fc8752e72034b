"""Evaluation via application (seed 004 §5.3): answer questions about a paper from its local KG
alone, and from its text, and compare both with the true answers.

The questions come from a file (``[{"question", "answer"}]`` JSON, as the ASKG QA files, or JSON
lines), or are written by the LLM from the whole paper (the seed's "Teacher", Prompt
``kgqa_questions``). The graph-based chatbot is the seed's: the LLM lists the entities a question
names (``kgqa_entities``), they are matched to the paper's entities (name or alias, else the
closest entity vector), their one-hop triples are the only material of the answer
(``kgqa_answer``). The same question answered from the paper's text is the reference. Score =
cosine of the answer's and the true answer's embeddings.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import field_validator

from ..errors import ConfigError, ModelOutputError
from ..llm.output import Items, Keys, LenientModel, Text, output_schema, parse_reply, validate
from ..prompts import load_prompt
from ..text.names import normalise_name
from .kgfacts import Embed, Fact, PaperKG, load_paper_kg, stored_relevance, summary

MAX_FACTS = 40  # one-hop triples given to one answer (most relevant first)
MATCH_THRESHOLD = 0.5  # cosine of a question entity to a graph entity, when no name matches
TEXT_CHARS = 24_000  # the paper text an answer (or the Teacher) reads
_PAIR = {"question", "answer"}


class QAPair(LenientModel):
    """A question and its true answer (a blank one is no pair)."""

    question: Text
    answer: Text

    @field_validator("question", "answer")
    @classmethod
    def _filled(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("blank")
        return v


class QAPairs(LenientModel):
    """A questions file or the Teacher's reply: ``{"pairs": [...]}`` or the bare list."""

    bare_field = "pairs"

    pairs: Annotated[Items[QAPair], Keys("questions", "items")]


class QuestionEntities(LenientModel):
    """The entities a question names: ``{"entities": [...]}`` or the bare list."""

    bare_field = "entities"

    entities: Items[Text]


# what a server that supports structured output is held to (the readers above accept more)
QA_PAIRS_SCHEMA = output_schema(QAPairs)
ENTITIES_SCHEMA = output_schema(QuestionEntities)


def _pairs_schema(count: int) -> dict:
    """The pairs schema asking for exactly ``count`` pairs (Qwen2.5-Coder 0.5B wrote one of two)."""
    pairs = {**QA_PAIRS_SCHEMA["properties"]["pairs"], "minItems": count, "maxItems": count}
    return {**QA_PAIRS_SCHEMA, "properties": {**QA_PAIRS_SCHEMA["properties"], "pairs": pairs}}


def read_qa_pairs(path: str | Path) -> list[dict[str, str]]:
    """``[{"question", "answer"}]`` as a JSON array or JSON lines (a pair that is not one is skipped)."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = [_line(path, n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    pairs = validate(data if isinstance(data, list) else [data], QAPairs).pairs
    if not pairs:
        raise ConfigError(f"{path}: no question/answer pairs (expected JSON objects with 'question' and 'answer')")
    return [p.model_dump(include=_PAIR) for p in pairs]


def _line(path: str | Path, number: int, line: str) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{number}: not JSON ({exc.msg}); expected a JSON array or one object a line") from None


async def kg_qa(kb: Any, doc_id: str, pairs: Sequence[dict[str, str]] | None = None, count: int = 10,
                score_embed: Embed | None = None) -> dict[str, Any]:
    """``score_embed`` compares answers (default: the workspace's embedding model, which also matches
    question entities to the graph's entity vectors)."""
    kg = load_paper_kg(kb.store, doc_id)
    relevance = stored_relevance(kb.store, kg)
    questions = list(pairs) if pairs else await _teacher(kb, kg, count)
    embed = score_embed or kb.embedder.embed
    rows = await asyncio.gather(*(_one(kb, kg, relevance, q, embed) for q in questions))
    return {"document": doc_id, "title": kg.title, "questions": len(rows),
            "generated_questions": not pairs,
            "kg": summary([r["kg_score"] for r in rows]), "text": summary([r["text_score"] for r in rows]),
            "answered_from_facts": sum(1 for r in rows if r["facts"]), "per_question": rows}


async def _teacher(kb: Any, kg: PaperKG, count: int) -> list[dict[str, str]]:
    reply = await kb.llm.chat(load_prompt("kgqa_questions").messages(count=count, title=kg.title,
                                                                     text=kg.text[:TEXT_CHARS]),
                              purpose="kgqa", document_id=kg.doc_id, schema=_pairs_schema(count),
                              schema_name="qa_pairs")
    try:
        pairs = parse_reply(reply.text, QAPairs).pairs
    except ModelOutputError:
        pairs = []
    if not pairs:
        raise ModelOutputError("question generation returned no question/answer pairs", reply.text)
    return [p.model_dump(include=_PAIR) for p in pairs[:count]]


async def _one(kb: Any, kg: PaperKG, relevance: dict[str, float], pair: dict[str, str], embed: Embed
               ) -> dict[str, Any]:
    names = await _question_entities(kb, kg, pair["question"])
    matched = await _match(kb, kg, names)
    facts = sorted((f for f in kg.facts if f.subject_id in matched or f.object_id in matched),
                   key=lambda f: -(relevance.get(f.subject_id, 0.0) + relevance.get(f.object_id, 0.0)))
    lines = list(dict.fromkeys(f.line() for f in facts))[:MAX_FACTS]
    from_kg, from_text = await asyncio.gather(
        _answer(kb, kg, "Facts", "\n".join(lines) or "(none)", pair["question"]),
        _answer(kb, kg, "Paper text", kg.text[:TEXT_CHARS], pair["question"]))
    vectors = np.asarray(await embed([pair["answer"], from_kg, from_text]), dtype=np.float32)
    return {"question": pair["question"], "answer": pair["answer"], "entities": names,
            "matched": [kg.entities[e].name for e in matched], "facts": len(lines), "kg_answer": from_kg,
            "text_answer": from_text, "kg_score": round(float(np.dot(vectors[0], vectors[1])), 4),
            "text_score": round(float(np.dot(vectors[0], vectors[2])), 4)}


async def _question_entities(kb: Any, kg: PaperKG, question: str) -> list[str]:
    reply = await kb.llm.chat(load_prompt("kgqa_entities").messages(question=question), purpose="kgqa",
                              document_id=kg.doc_id, schema=ENTITIES_SCHEMA, schema_name="question_entities")
    try:
        found = parse_reply(reply.text, QuestionEntities).entities
    except ModelOutputError:
        return []
    return [x.strip() for x in found if x.strip()]


async def _match(kb: Any, kg: PaperKG, names: list[str]) -> list[str]:
    """Graph entities the question names: by name or alias, else the closest entity vector."""
    keys: dict[str, str] = {}
    for e in kg.entities.values():
        for n in [e.name, *e.aliases]:
            keys.setdefault(normalise_name(n), e.id)
    found = [keys[k] for k in (normalise_name(n) for n in names) if k in keys]
    rest = [n for n in names if normalise_name(n) not in keys]
    vectors = kb.store.get_vectors("entity", list(kg.entities))
    if rest and vectors:
        ids = list(vectors)
        matrix = np.stack([vectors[i] for i in ids])
        for q in np.asarray(await kb.embedder.embed(rest), dtype=np.float32):
            scores = matrix @ q
            best = int(np.argmax(scores))
            if scores[best] >= MATCH_THRESHOLD:
                found.append(ids[best])
    return list(dict.fromkeys(found))


async def _answer(kb: Any, kg: PaperKG, kind: str, material: str, question: str) -> str:
    reply = await kb.llm.chat(load_prompt("kgqa_answer").messages(kind=kind, title=kg.title, material=material,
                                                                  question=question),
                              purpose="kgqa", document_id=kg.doc_id)
    return reply.text.strip()


__all__ = ["Fact", "kg_qa", "read_qa_pairs"]
