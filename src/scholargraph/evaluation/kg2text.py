"""Evaluation via reverse engineering (seed 004 §5.2): write each paper's local KG back as text and
compare it with the paper.

Two orders (``order``):

* ``"paper"`` -- as §5.2 describes it: all the paper's triples, from the most relevant to the least
  (a triple's relevance is the sum of its entities' relevance to the paper, stage 4's scores as the
  local KG stored them), are turned into text a batch at a time by the LLM
  (``prompts/kg2text.txt``) and the segments concatenated into one synthesised document, the most
  important information first, scored against the whole paper;
* ``"section"`` (default) -- per section: the triples read from each section, in the same order,
  make the synthesised section; each section and the whole paper are scored. A section with no
  triples scores 0: what the graph lost counts.

Scores: embedding similarity (cosine, the workspace's embedding model) and lexical overlap
(ROUGE-1 on content words).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigError
from ..prompts import load_prompt
from .kgfacts import Embed, Fact, PaperKG, load_paper_kg, overlap, similarity, stored_relevance, summary

BATCH = 25  # triples per generated segment
ORDERS = ("section", "paper")


async def kg_to_text(kb: Any, doc_ids: Sequence[str] | None = None, batch: int = BATCH,
                     embed: Embed | None = None, order: str = "section") -> dict[str, Any]:
    """``embed`` scores the similarity (default: the workspace's embedding model); ``order``:
    "section" (per section) or "paper" (the whole paper by relevance, §5.2)."""
    if order not in ORDERS:
        raise ConfigError(f"unknown kg2text order {order!r}; use one of {', '.join(ORDERS)}")
    ids = list(doc_ids) if doc_ids else [r.id for r in kb.status() if r.status == "PROCESSED"]
    run = _paper if order == "section" else _whole_paper
    papers = [await run(kb, doc_id, batch, embed or kb.embedder.embed) for doc_id in ids]
    return {"order": order, "papers": papers, "similarity": summary([p["similarity"] for p in papers]),
            "rouge1_recall": summary([p["rouge1"]["recall"] for p in papers]),
            "rouge1_f1": summary([p["rouge1"]["f1"] for p in papers])}


async def _paper(kb: Any, doc_id: str, batch: int, embed: Embed) -> dict[str, Any]:
    kg = load_paper_kg(kb.store, doc_id)
    relevance = stored_relevance(kb.store, kg)
    generated = await asyncio.gather(*(_section(kb, kg, heading, relevance, batch) for heading, _ in kg.sections))
    sections: list[dict[str, Any]] = []
    for (heading, text), (facts, written) in zip(kg.sections, generated, strict=True):
        sections.append({"section": heading, "facts": facts, "words": len(text.split()),
                         "generated_words": len(written.split()),
                         "similarity": await similarity(embed, text, written),
                         "rouge1": overlap(text, written), "generated": written})
    whole = "\n\n".join(written for _, written in generated if written)
    return {"document": doc_id, "title": kg.title, "facts": len(kg.facts),
            "similarity": await similarity(embed, kg.text, whole), "rouge1": overlap(kg.text, whole),
            "sections": sections}


async def _whole_paper(kb: Any, doc_id: str, batch: int, embed: Embed) -> dict[str, Any]:
    """§5.2: every triple of the paper, most relevant first, written back in batches and
    concatenated into one document."""
    kg = load_paper_kg(kb.store, doc_id)
    relevance = stored_relevance(kb.store, kg)
    facts = sorted(kg.facts, key=lambda f: _rank(f, relevance))
    count, written = await _write(kb, kg, "(the whole paper)", facts, batch)
    return {"document": doc_id, "title": kg.title, "facts": count, "words": len(kg.text.split()),
            "generated_words": len(written.split()), "similarity": await similarity(embed, kg.text, written),
            "rouge1": overlap(kg.text, written), "generated": written, "sections": []}


async def _section(kb: Any, kg: PaperKG, heading: str, relevance: dict[str, float], batch: int) -> tuple[int, str]:
    facts = sorted((f for f in kg.facts if f.section == heading), key=lambda f: _rank(f, relevance))
    return await _write(kb, kg, heading or "(untitled)", facts, batch)


async def _write(kb: Any, kg: PaperKG, where: str, facts: list[Fact], batch: int) -> tuple[int, str]:
    """The facts (in order, repeats dropped) written back as text, ``batch`` facts per call."""
    lines = list(dict.fromkeys(f.line() for f in facts))
    prompt = load_prompt("kg2text")
    segments = await asyncio.gather(*(
        kb.llm.chat(prompt.messages(title=kg.title, section=where, facts="\n".join(lines[i : i + batch])),
                    purpose="kg2text", document_id=kg.doc_id)
        for i in range(0, len(lines), batch)))
    return len(lines), " ".join(s.text.strip() for s in segments if s.text.strip())


def _rank(fact: Fact, relevance: dict[str, float]) -> tuple[float, str]:
    return (-(relevance.get(fact.subject_id, 0.0) + relevance.get(fact.object_id, 0.0)), fact.line())
