"""Stage 2, entity linking inside the paper (seed 004 §4.2, Algorithm 2, Prompts 2.1-2.2).

Each mention gets a one-sentence description: the model is first asked whether it knows the
mention's text without context (Prompt 2.1, once per distinct term); then every mention is described
(Algorithm 2: per mention, not once per term): a mention of a known term from its types and its own
sentence (Prompt 2.2.2), an unknown one -- a new name, a pronoun -- from the paper's abstract, its
section and its sentence (Prompt 2.2.1). The descriptions are
embedded with the workspace's embedding model; two mentions whose descriptions reach
``localkg.link_threshold`` (cosine) are linked, and a maximum-clique partition of that graph
(:func:`scholargraph.graph.resolve.clique_partition`, Bron-Kerbosch) makes the entities: only
mentions that are all pairwise alike become one entity.

An entity's label is its first mention in the paper (the full name usually comes first), skipping
pronouns; aliases and potential types are the union over its mentions; its category is the most
specific one a mention has (named > general > other).

Cost: one familiarity call per ``2 x localkg.batch_size`` distinct terms; descriptions in batches
of ``localkg.batch_size`` mentions (unknown mentions grouped by section).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import numpy as np

from ...graph.resolve import clique_partition
from ...text.stopwords import STOPWORDS
from .calls import StageContext, batched, numbered
from .document import Paper
from .mentions import CATEGORIES, FoundMention
from .outputs import DescriptionList, FamiliarityList

PURPOSE = "lkg_linking"


def is_referential(text: str) -> bool:
    """A pronoun or bare function words ("it", "this", "they"): never an entity's label."""
    words = text.casefold().split()
    return not words or all(w.strip(".,;:()'\"") in STOPWORDS for w in words)


@dataclass
class LocalEntity:
    index: int
    label: str
    category: str
    types: list[str]
    description: str
    mentions: list[FoundMention]
    aliases: list[str] = field(default_factory=list)
    vector: np.ndarray | None = None  # the label mention's description embedding

    @property
    def first(self) -> FoundMention:
        return self.mentions[0]

    def sentences(self) -> set[int]:
        return {m.sentence for m in self.mentions}

    def context_line(self) -> str:
        """How prompts present the entity: label, types, description."""
        types = f" ({', '.join(self.types[:4])})" if self.types else ""
        return f"{self.label}{types}: {self.description}" if self.description else f"{self.label}{types}"


class LinkingStage:
    def __init__(self, ctx: StageContext, paper: Paper):
        self.ctx = ctx
        self.paper = paper

    async def run(self, mentions: list[FoundMention]) -> list[LocalEntity]:
        if not mentions:
            return []
        firsts: dict[str, FoundMention] = {}
        for m in mentions:
            firsts.setdefault(m.key, m)
        familiar = await self._familiarity(list(firsts.values()))
        known = [m for m in mentions if familiar.get(m.key)]
        unknown = [m for m in mentions if not familiar.get(m.key)]
        await asyncio.gather(self._describe_terms(known), self._describe_in_context(unknown))
        vectors = await self._embed(mentions)
        return self._entities(mentions, vectors)

    # -- Prompt 2.1 --------------------------------------------------------------------------------

    async def _familiarity(self, terms: list[FoundMention]) -> dict[str, bool]:
        batches = batched(terms, 2 * self.ctx.settings.batch_size)
        answers = await asyncio.gather(*(
            self.ctx.ask("familiarity", FamiliarityList, PURPOSE, f"familiarity batch {n + 1}", self._chunk(b[0]),
                         terms=numbered([_term_line(m) for m in b]))
            for n, b in enumerate(batches)))
        out: dict[str, bool] = {}
        for batch, answer in zip(batches, answers, strict=True):
            if answer is None:
                continue  # unknown to us = described with the full context: the safe side
            for item in answer.terms:
                if 1 <= item.id <= len(batch):
                    out[batch[item.id - 1].key] = item.familiar
        return out

    # -- Prompt 2.2.2: mentions of known terms, each with its own sentence (Algorithm 2: per mention) ----

    async def _describe_terms(self, terms: list[FoundMention]) -> None:
        texts = self._sentence_texts()
        batches = batched(terms, self.ctx.settings.batch_size)
        answers = await asyncio.gather(*(
            self.ctx.ask("describe_term", DescriptionList, PURPOSE, f"known terms batch {n + 1}", self._chunk(b[0]),
                         mentions=numbered([f"{_term_line(m)} | sentence: {texts[m.sentence]}" for m in b]))
            for n, b in enumerate(batches)))
        for batch, answer in zip(batches, answers, strict=True):
            for item in answer.descriptions if answer else []:
                if 1 <= item.id <= len(batch):
                    batch[item.id - 1].description = item.description

    # -- Prompt 2.2.1: unknown mentions, per mention, with the paper and section context -----------------

    async def _describe_in_context(self, mentions: list[FoundMention]) -> None:
        by_section: dict[int, list[FoundMention]] = {}
        sentences = {s.ordinal: s for s in self.paper.sentences}
        for m in mentions:
            by_section.setdefault(sentences[m.sentence].section_no, []).append(m)
        jobs = []
        for number, group in by_section.items():
            section = next(s for s in self.paper.sections if s.number == number)
            text = _clip(section.text, 4 * self.ctx.settings.unit_tokens)
            for n, batch in enumerate(batched(group, self.ctx.settings.batch_size)):
                jobs.append((batch, self.ctx.ask(
                    "describe_context", DescriptionList, PURPOSE, f"§{number + 1} mentions batch {n + 1}",
                    sentences[batch[0].sentence].chunk_id, title=self.paper.title,
                    abstract=_clip(self.paper.abstract, 3000), section=f"{section.heading}\n{text}".strip(),
                    mentions=numbered([f"{_term_line(m)} | sentence: {sentences[m.sentence].text}" for m in batch]))))
        answers = await asyncio.gather(*(job for _, job in jobs))
        for (batch, _), answer in zip(jobs, answers, strict=True):
            for item in answer.descriptions if answer else []:
                if 1 <= item.id <= len(batch):
                    batch[item.id - 1].description = item.description

    # -- embeddings, links, cliques ------------------------------------------------------------------

    async def _embed(self, mentions: list[FoundMention]) -> np.ndarray:
        """Unit vectors of the descriptions (a mention left without one: its text)."""
        texts = [m.description or m.surface for m in mentions]
        unique = list(dict.fromkeys(texts))
        vectors = np.asarray(await self.ctx.embed(unique), dtype=np.float32)
        row = {t: i for i, t in enumerate(unique)}
        return vectors[[row[t] for t in texts]]

    def _entities(self, mentions: list[FoundMention], vectors: np.ndarray) -> list[LocalEntity]:
        links = similar_pairs(vectors, self.ctx.settings.link_threshold)
        nodes = [str(i) for i in range(len(mentions))]
        groups = clique_partition(nodes, [(str(a), str(b)) for a, b in links], max_group=10_000)
        grouped = {int(n) for g in groups for n in g}
        members = [[int(n) for n in g] for g in groups] + [[i] for i in range(len(mentions)) if i not in grouped]
        members.sort(key=lambda g: g[0])  # mentions are in reading order: entities by first mention
        return [_entity(n, [mentions[i] for i in g], vectors[g]) for n, g in enumerate(members)]

    def _sentence_texts(self) -> dict[int, str]:
        return {s.ordinal: s.text for s in self.paper.sentences}

    def _chunk(self, m: FoundMention) -> str:
        return self.paper.sentences[m.sentence].chunk_id


def similar_pairs(vectors: np.ndarray, threshold: float) -> list[tuple[int, int]]:
    """(i, j), i < j, of unit vectors whose cosine reaches ``threshold``."""
    if len(vectors) < 2:
        return []
    sims = vectors @ vectors.T
    rows, cols = np.nonzero(np.triu(sims >= threshold - 1e-6, k=1))
    return list(zip(rows.tolist(), cols.tolist(), strict=True))


def _entity(index: int, mentions: list[FoundMention], vectors: np.ndarray) -> LocalEntity:
    at = next((i for i, m in enumerate(mentions) if not is_referential(m.surface)), 0)
    named = mentions[at]
    order = {c: i for i, c in enumerate(CATEGORIES)}
    category = min((m.category for m in mentions), key=lambda c: order.get(c, len(order)))
    types: list[str] = []
    for m in mentions:
        types += [t for t in m.types if t.casefold() not in {x.casefold() for x in types}]
    aliases = list(dict.fromkeys(m.surface for m in mentions if m.key != named.key and not is_referential(m.surface)))
    return LocalEntity(index, named.surface, category, types, named.description or mentions[0].description,
                       mentions, aliases, vectors[at])


def _term_line(m: FoundMention) -> str:
    return f"{m.surface} (types: {', '.join(m.types)})" if m.types else m.surface


def _clip(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[:chars].rsplit(" ", 1)[0] + " …"
