"""Stage 5, taxonomy generation and predicate resolution (seed 004 §4.5, Algorithm 5, Prompts 5.1-5.2).

Taxonomy: every potential parent type T an entity E1 was given in stage 1 (all of them, as
Algorithm 5 loops) is described (Prompt 5.1, once per distinct type); an entity E2 whose description embeds like T's (cosine >=
``localkg.taxonomy_threshold``) -- or whose name is T -- is broader than E1: ``E1 skos:broader E2``.
When no entity matches, T itself becomes a general concept of the paper (``localkg.new_concepts``),
so the taxonomy also reaches concepts the text only implies (§4.5: "the name of ANU itself
suggesting that it is a university"). Each broader link cites the sentence of E1's mention that
carried T. ``skos:broader`` never forms a cycle: links are taken in a fixed order (entities by first
mention, each one's types in the order found) and a link that would close a cycle (a back-edge) is
left out, so the same paper always gives the same acyclic taxonomy.

Predicate resolution: every distinct predicate is described from one of its triples without naming
its subject or object (Prompt 5.2); predicates whose descriptions embed alike (cosine >=
``localkg.predicate_threshold``) are grouped by maximum-clique partition, as entities are in stage 2,
and each group gets one canonical label: its most used predicate.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...graph.resolve import clique_partition
from .calls import StageContext, batched, numbered
from .document import Paper
from .linking import LocalEntity, similar_pairs
from .local_relations import LocalTriple, predicate_key
from .mentions import mention_key
from .outputs import DescriptionList

PURPOSE = "lkg_taxonomy"
BROADER = "skos:broader"


@dataclass
class Broader:
    narrower: int  # LocalEntity.index
    broader: int
    type: str  # the potential type it came from
    sentence: int  # evidence


class TaxonomyStage:
    def __init__(self, ctx: StageContext, paper: Paper, entities: list[LocalEntity]):
        self.ctx = ctx
        self.paper = paper
        self.entities = entities  # new concepts are appended
        self.cycles_broken = 0  # links left out because they would close a skos:broader cycle

    async def run(self) -> list[Broader]:
        names: dict[str, int] = {}
        for e in self.entities:
            for n in [e.label, *e.aliases]:
                names.setdefault(mention_key(n), e.index)
        wanted: list[tuple[LocalEntity, str]] = []  # (narrower entity, type) in order
        for e in self.entities:
            own = {mention_key(n) for n in [e.label, *e.aliases]}
            wanted += [(e, t) for t in e.types if mention_key(t) and mention_key(t) not in own]
        unmatched = list(dict.fromkeys(mention_key(t) for _, t in wanted if mention_key(t) not in names))
        first_form: dict[str, str] = {}
        for _, t in wanted:
            first_form.setdefault(mention_key(t), t)
        described = await self._describe([first_form[k] for k in unmatched])
        vectors = await self._embed(described)
        concepts: dict[str, int] = {}
        out: list[Broader] = []
        seen: set[tuple[int, int]] = set()
        for e, t in wanted:
            key = mention_key(t)
            target = names.get(key)
            if target is None:
                target = self._closest(vectors.get(key), e.index)
            if target is None and self.ctx.settings.new_concepts:
                target = concepts.get(key)
                if target is None:
                    target = concepts[key] = self._new_concept(first_form[key], described.get(key, ""),
                                                               vectors.get(key))
            if target is None or target == e.index or (e.index, target) in seen:
                continue
            if _reaches(seen, target, e.index):  # a back-edge: skos:broader must never form a cycle
                self.cycles_broken += 1
                continue
            seen.add((e.index, target))
            out.append(Broader(e.index, target, t, _evidence(e, key)))
        return out

    async def _describe(self, types: list[str]) -> dict[str, str]:
        batches = batched(types, self.ctx.settings.batch_size)
        chunk = self.paper.sentences[0].chunk_id
        answers = await asyncio.gather(*(
            self.ctx.ask("describe_type", DescriptionList, PURPOSE, f"types batch {n + 1}", chunk, types=numbered(b))
            for n, b in enumerate(batches)))
        out: dict[str, str] = {}
        for batch, answer in zip(batches, answers, strict=True):
            for item in answer.descriptions if answer else []:
                if 1 <= item.id <= len(batch):
                    out[mention_key(batch[item.id - 1])] = item.description
        return out

    async def _embed(self, described: dict[str, str]) -> dict[str, np.ndarray]:
        if not described:
            return {}
        keys = list(described)
        vectors = np.asarray(await self.ctx.embed([described[k] for k in keys]), dtype=np.float32)
        return dict(zip(keys, vectors, strict=True))

    def _closest(self, vector: np.ndarray | None, exclude: int) -> int | None:
        if vector is None:
            return None
        best, best_score = None, self.ctx.settings.taxonomy_threshold - 1e-6
        for e in self.entities:
            if e.index == exclude or e.vector is None or not e.description:
                continue
            score = float(np.dot(vector, e.vector))
            if score >= best_score:
                best, best_score = e.index, score
        return best

    def _new_concept(self, label: str, description: str, vector: np.ndarray | None) -> int:
        entity = LocalEntity(len(self.entities), label, "general", [], description, [], [], vector)
        self.entities.append(entity)
        return entity.index


def _reaches(edges: set[tuple[int, int]], start: int, goal: int) -> bool:
    """Whether ``goal`` is reachable from ``start`` along the narrower -> broader ``edges``."""
    up: dict[int, list[int]] = {}
    for a, b in edges:
        up.setdefault(a, []).append(b)
    stack, visited = [start], {start}
    while stack:
        node = stack.pop()
        if node == goal:
            return True
        for nxt in up.get(node, []):
            if nxt not in visited:
                visited.add(nxt)
                stack.append(nxt)
    return False


def _evidence(e: LocalEntity, type_key: str) -> int:
    found = next((m for m in e.mentions if type_key in {mention_key(t) for t in m.types}), None)
    return (found or e.first).sentence


class PredicateStage:
    def __init__(self, ctx: StageContext, paper: Paper, entities: Sequence[LocalEntity]):
        self.ctx = ctx
        self.paper = paper
        self.entities = entities

    async def run(self, triples: Sequence[LocalTriple]) -> None:
        """Sets every triple's ``canonical`` predicate."""
        examples: dict[str, LocalTriple] = {}
        for t in triples:
            examples.setdefault(predicate_key(t.predicate), t)
        keys = list(examples)
        if not keys:
            return
        lines = [f"{self.entities[t.subject].label}; {t.predicate}; {self.entities[t.object].label}"
                 for t in examples.values()]
        batches = batched(list(range(len(keys))), self.ctx.settings.batch_size)
        chunk = self.paper.sentences[0].chunk_id
        answers = await asyncio.gather(*(
            self.ctx.ask("describe_predicate", DescriptionList, PURPOSE, f"predicates batch {n + 1}", chunk,
                         predicates=numbered([lines[i] for i in b]))
            for n, b in enumerate(batches)))
        described: dict[int, str] = {}
        for batch, answer in zip(batches, answers, strict=True):
            for item in answer.descriptions if answer else []:
                if 1 <= item.id <= len(batch):
                    described[batch[item.id - 1]] = item.description
        groups = await self._groups(keys, described)
        uses = Counter(predicate_key(t.predicate) for t in triples)
        canonical: dict[str, str] = {}
        for group in groups:
            label = min(group, key=lambda k: (-uses[k], len(k), k))
            canonical.update({k: label for k in group})
        for t in triples:
            key = predicate_key(t.predicate)
            t.canonical = canonical.get(key, key)

    async def _groups(self, keys: list[str], described: dict[int, str]) -> list[list[str]]:
        ids = sorted(described)
        if len(ids) < 2:
            return []
        vectors = np.asarray(await self.ctx.embed([described[i] for i in ids]), dtype=np.float32)
        links = [(keys[ids[a]], keys[ids[b]]) for a, b in similar_pairs(vectors, self.ctx.settings.predicate_threshold)]
        return clique_partition(keys, links, max_group=10_000)
