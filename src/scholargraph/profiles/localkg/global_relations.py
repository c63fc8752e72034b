"""Stage 4, paper-level ("global") relation extraction (seed 004 §4.4, Algorithm 4, Prompts 4.1-4.2).

1. Shrink the paper until it fits ``localkg.context_tokens``: the innermost sections are halved
   first (Prompt 4.1), then the outer ones (introduction and conclusion last), round after round.
2. Embed the shrunken paper (mean of its sections' vectors) and each entity (label, potential types
   and description); an entity's relevance is its cosine to the paper.
3. Pair the most relevant entities: the top ``min(localkg.global_entities, localkg.global_fraction x
   entities)`` (at least 2), and ask for the single most important relation of each pair (Prompt
   4.2), several pairs per call. Pairs already related by stage 3 are not asked again.

A relation's evidence is the first sentence mentioning both entities, else the subject's first
mention; its level is "paper". The relevance scores are kept for the KG-to-text evaluation order.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence

import numpy as np

from ...llm.wire import estimate_tokens
from .calls import StageContext, batched
from .document import Paper
from .linking import LocalEntity
from .local_relations import EntityIndex, LocalTriple
from .mentions import mention_key
from .outputs import PairRelationList

PURPOSE = "lkg_global"
MIN_SHRINK_TOKENS = 30  # a section this short is not summarised any further


def shrink_order(n: int) -> list[int]:
    """Sections innermost first (Algorithm 4): the middle of the paper goes before its ends."""
    return sorted(range(n), key=lambda i: (-min(i, n - 1 - i), -i))


def _halve(text: str) -> str:
    """The first half of a text (by words): what a failed summary falls back to."""
    words = text.split()
    return " ".join(words[: max(1, len(words) // 2)])


def pair_count(entities: int, settings) -> int:
    """How many of the most relevant entities are paired (§4.4)."""
    if entities < 2:
        return 0
    return max(2, min(settings.global_entities, math.ceil(settings.global_fraction * entities)))


class GlobalStage:
    def __init__(self, ctx: StageContext, paper: Paper, entities: Sequence[LocalEntity], local: Sequence[LocalTriple]):
        self.ctx = ctx
        self.paper = paper
        self.entities = list(entities)
        self.local = local
        self.relevance: dict[int, float] = {}

    async def run(self) -> list[LocalTriple]:
        if len(self.entities) < 2:
            return []
        texts = await self.shrink()
        self.relevance = await self._relevance(texts)
        pairs = self._pairs()
        if not pairs:
            return []
        content = "\n\n".join(f"{s.heading}\n{t}".strip() for s, t in zip(self.paper.sections, texts, strict=True))
        batches = batched(pairs, self.ctx.settings.pairs_per_call)
        answers = await asyncio.gather(*(self._ask(content, b, n) for n, b in enumerate(batches)))
        return [t for part in answers for t in part]

    # -- Algorithm 4, step 1: shrink --------------------------------------------------------------------

    async def shrink(self) -> list[str]:
        texts = [s.text for s in self.paper.sections]
        limit = self.ctx.settings.context_tokens
        for _ in range(6):  # each round halves what it touches; six rounds leave 1/64
            total = sum(estimate_tokens(t) for t in texts)
            if total <= limit:
                break
            chosen = []
            for i in shrink_order(len(texts)):
                size = estimate_tokens(texts[i])
                if size < MIN_SHRINK_TOKENS:
                    continue
                chosen.append(i)
                total -= size // 2
                if total <= limit:
                    break
            if not chosen:
                break
            summaries = await asyncio.gather(*(self._summarise(i, texts[i]) for i in chosen))
            for i, summary in zip(chosen, summaries, strict=True):
                texts[i] = summary
        return texts

    async def _summarise(self, i: int, text: str) -> str:
        section = self.paper.sections[i]
        words = max(20, len(text.split()) // 2)
        summary = await self.ctx.ask_text("shrink", PURPOSE, f"§{section.number + 1} (shrink)",
                                          section.sentences[0].chunk_id, title=self.paper.title,
                                          heading=section.heading or "(untitled)", words=words, text=text)
        if summary is None or len(summary) >= len(text):
            return _halve(text)  # the paper must still get shorter
        return summary

    # -- step 2: relevance ----------------------------------------------------------------------------------

    async def _relevance(self, texts: list[str]) -> dict[int, float]:
        entity_texts = [e.context_line() for e in self.entities]
        vectors = np.asarray(await self.ctx.embed([t for t in texts if t.strip()] + entity_texts), dtype=np.float32)
        sections, ents = vectors[: len(vectors) - len(entity_texts)], vectors[len(vectors) - len(entity_texts):]
        paper = sections.mean(axis=0) if len(sections) else np.zeros(vectors.shape[1], dtype=np.float32)
        norm = float(np.linalg.norm(paper))
        scores = ents @ (paper / norm) if norm else np.zeros(len(ents))
        return {e.index: round(float(s), 6) for e, s in zip(self.entities, scores, strict=True)}

    # -- step 3: pairs of the most relevant entities --------------------------------------------------------

    def _pairs(self) -> list[tuple[int, int]]:
        k = pair_count(len(self.entities), self.ctx.settings)
        top = sorted(self.entities, key=lambda e: (-self.relevance[e.index], e.index))[:k]
        related = {frozenset((t.subject, t.object)) for t in self.local}
        pairs = [(a.index, b.index) for n, a in enumerate(top) for b in top[n + 1:]
                 if frozenset((a.index, b.index)) not in related]
        return sorted(pairs, key=lambda p: (-(self.relevance[p[0]] + self.relevance[p[1]]), p))

    async def _ask(self, content: str, pairs: list[tuple[int, int]], n: int) -> list[LocalTriple]:
        lines = [f"[{i}] A: {self.entities[a].context_line()}\n    B: {self.entities[b].context_line()}"
                 for i, (a, b) in enumerate(pairs, 1)]
        doc = self.paper.doc
        found = doc.metadata.get("keywords")
        keywords: list = found if isinstance(found, list) else []
        first = self.paper.sentences[0].chunk_id
        answer = await self.ctx.ask("paper_relations", PairRelationList, PURPOSE, f"paper pairs batch {n + 1}", first,
                                    title=self.paper.title, authors=", ".join(doc.authors) or "(unknown)",
                                    keywords=", ".join(map(str, keywords)) or "(none)", content=content,
                                    pairs="\n".join(lines))
        index = EntityIndex(self.entities)
        ordinals = [s.ordinal for s in self.paper.sentences]
        out = []
        seen: set[int] = set()
        for item in answer.pairs if answer else []:
            if not item.predicate or not 1 <= item.pair <= len(pairs) or item.pair in seen:
                continue  # no relation, an unknown pair, or a second relation for a pair
            seen.add(item.pair)
            a, b = pairs[item.pair - 1]
            subject, obj = (b, a) if self._names(b, item.subject) and not self._names(a, item.subject) else (a, b)
            out.append(LocalTriple(subject, item.predicate.strip(), obj, index.evidence(subject, obj, ordinals), "paper"))
        return out

    def _names(self, i: int, name: str | None) -> bool:
        e = self.entities[i]
        return bool(name) and mention_key(name or "") in {mention_key(n) for n in [e.label, *e.aliases]}
