"""Evaluation via reverse engineering (seed 004 §5.2): write each paper's local KG back as text and
compare it with the paper.

For every section, the triples read from it are ordered by relevance (the sum of their entities'
relevance to the paper, as in stage 4) and turned into text a batch at a time by the LLM
(``prompts/kg2text.txt``); the segments make the synthesised section. Each section and the whole
paper are scored against the original: embedding similarity (cosine, the workspace's embedding
model) and lexical overlap (ROUGE-1 on content words). A section with no triples scores 0: what
the graph lost counts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from ..prompts import load_prompt
from .kgfacts import Embed, Fact, PaperKG, entity_relevance, load_paper_kg, overlap, similarity, summary

BATCH = 25  # triples per generated segment


async def kg_to_text(kb: Any, doc_ids: Sequence[str] | None = None, batch: int = BATCH,
                     embed: Embed | None = None) -> dict[str, Any]:
    """``embed`` scores the similarity (default: the workspace's embedding model)."""
    ids = list(doc_ids) if doc_ids else [r["id"] for r in kb.status() if r["status"] == "PROCESSED"]
    papers = [await _paper(kb, doc_id, batch, embed or kb.embedder.embed) for doc_id in ids]
    return {"papers": papers, "similarity": summary([p["similarity"] for p in papers]),
            "rouge1_recall": summary([p["rouge1"]["recall"] for p in papers]),
            "rouge1_f1": summary([p["rouge1"]["f1"] for p in papers])}


async def _paper(kb: Any, doc_id: str, batch: int, embed: Embed) -> dict[str, Any]:
    kg = load_paper_kg(kb.store, doc_id)
    relevance = entity_relevance(kb.store, kg)
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


async def _section(kb: Any, kg: PaperKG, heading: str, relevance: dict[str, float], batch: int) -> tuple[int, str]:
    facts = sorted((f for f in kg.facts if f.section == heading), key=lambda f: _rank(f, relevance))
    lines = list(dict.fromkeys(f.line() for f in facts))
    prompt = load_prompt("kg2text")
    segments = await asyncio.gather(*(
        kb.llm.chat(prompt.messages(title=kg.title, section=heading or "(untitled)",
                                    facts="\n".join(lines[i : i + batch])), purpose="kg2text", document_id=kg.doc_id)
        for i in range(0, len(lines), batch)))
    return len(lines), " ".join(s.text.strip() for s in segments if s.text.strip())


def _rank(fact: Fact, relevance: dict[str, float]) -> tuple[float, str]:
    return (-(relevance.get(fact.subject_id, 0.0) + relevance.get(fact.object_id, 0.0)), fact.line())
