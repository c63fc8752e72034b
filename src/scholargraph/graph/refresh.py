"""Rebuild merged entities/relations from their sources: name, aliases, type, description,
weight, and the vectors the query engine searches.

Descriptions accumulate (deduplicated, in order of arrival). When the merged text exceeds the
token budget it is summarised by the LLM (purpose ``summarise``) or, without an LLM, cut to
the first descriptions that fit. A rebuild lands only if no new source arrived meanwhile
(optimistic check on ``updated_at``), so concurrent documents never lose a description.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable

from ..errors import ScholarGraphError
from ..llm.embeddings import Embedder
from ..models import Entity, Relation
from ..store.base import GraphKind, GraphUpkeep, SourceDescriptions
from ..text.acronyms import is_acronym

Summariser = Callable[[str, str, list[str]], Awaitable[str]]  # (kind, name, descriptions) -> summary
TokenCounter = Callable[[str], int]
BATCH = 256
STALLED_BATCHES = 3  # claims in a row that rebuilt nothing before a pass gives up
# Batches of one claim rebuilt at once: a batch waits seconds on the LLM summaries of its long
# descriptions, and one at a time the 200k run's rebuild went at one batch per summary latency.
LANES = 4
CLAIM_RETRY_S = 0.5  # before claiming again when a claim came back empty with rows still dirty
# What is embedded for search: name, type and the start of the description. Embedding cost grows
# with length and graphs have many more relations than chunks, so these stay short.
ENTITY_TEXT_CHARS = 200
RELATION_TEXT_CHARS = 240


def dedupe(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        norm = " ".join(item.split()).casefold()
        if norm and norm not in seen:
            seen.add(norm)
            out.append(item.strip())
    return out


def fit_budget(descriptions: list[str], budget: int, count: TokenCounter) -> str:
    kept: list[str] = []
    used = 0
    for d in descriptions:
        n = count(d)
        if kept and used + n > budget:
            break
        kept.append(d)
        used += n
    return "\n".join(kept)


ROLE_RANK = {"canonical": 0, "name": 1, "alias": 2}


def canonical_name(names: list[str], roles: list[str] | None = None) -> str:
    """A name an extractor declared canonical (it listed aliases for it: "Retrieval-Augmented
    Generation" with alias "RAG", or the HGNC symbol "IL1B" with alias "interleukin-1 beta") wins;
    then the most frequent name; then a full form over an acronym; then the first seen (sources
    come ordered by document, so the choice does not depend on arrival order)."""
    roles = roles or ["name"] * len(names)
    rank: dict[str, int] = {}
    counts: Counter = Counter()
    first: dict[str, int] = {}
    for i, (n, role) in enumerate(zip(names, roles, strict=True)):
        key = " ".join(n.split()).casefold()
        rank[key] = min(rank.get(key, 2), ROLE_RANK.get(role, 1))
        counts[key] += role != "alias"
        first.setdefault(key, i)
    return min(dedupe(names), key=lambda n: (rank[" ".join(n.split()).casefold()],
                                             -counts[" ".join(n.split()).casefold()], is_acronym(n.strip()),
                                             first[" ".join(n.split()).casefold()]))


def merge_entity(src: SourceDescriptions) -> Entity:
    names = dedupe(src.names)
    name = canonical_name(src.names, src.roles) if names else src.id
    names = [name] + [n for n in names if n != name]
    types = Counter(t for t in src.types if t)
    type_ = types.most_common(1)[0][0] if types else ""
    return Entity(src.id, name, type_, "\n".join(dedupe(src.descriptions)), names[1:], max(1.0, src.weight))


def entity_text(name: str, type_: str, description: str, aliases: list[str]) -> str:
    alias = f" (also: {', '.join(aliases[:8])})" if aliases else ""
    kind = f" [{type_}]" if type_ else ""
    return f"{name}{alias}{kind}: {description}"[:ENTITY_TEXT_CHARS]


class GraphRefresher:
    def __init__(self, store: GraphUpkeep, embedder: Embedder, count: TokenCounter, budget: int,
                 summarise: Summariser | None = None):
        self.store = store
        self.embedder = embedder
        self.count = count
        self.budget = budget
        self.summarise = summarise
        self.failures: list[str] = []

    async def refresh(self) -> tuple[int, int]:
        """Rebuild every dirty entity and relation; returns how many of each were rebuilt. The dirty
        elements are claimed a few batches at a time (``MaintenanceStore.claim_dirty``): workers that
        finish together share the rebuild rather than each doing all of it."""
        self.store.begin_vector_rebuild()  # a large rebuild writes its vectors first and indexes them once
        rebuilt = await self._rebuild_all("entities", self._entities), await self._rebuild_all("relations", self._relations)
        self.store.end_vector_rebuild()  # also what a worker that died set aside
        return rebuilt

    async def _rebuild_all(self, kind: GraphKind, rebuild: Callable[[list[str]], Awaitable[int]]) -> int:
        """Claim ``LANES`` batches at a time and rebuild them together until nothing is dirty. A claim
        that rebuilt nothing (another worker's edits changed every row's version meanwhile) is claimed
        again with fresh versions; only ``STALLED_BATCHES`` of those in a row end the pass (rows no
        rebuild can land stay dirty for the next one). Leaving at the first such batch left a 20k
        run's rebuild to one worker."""
        rebuilt = stalled = 0
        while stalled < STALLED_BATCHES:
            ids = self.store.claim_dirty(kind, BATCH * LANES)
            if not ids:
                if not self.store.dirty_ids(kind, 1):
                    break
                # rows other workers hold, or a claim that ran at the same moment as another worker's
                # and found its candidates taken: the 200k run's first worker left with 181,000 to go
                stalled += 1
                await asyncio.sleep(CLAIM_RETRY_S)
                continue
            done = sum(await asyncio.gather(*(rebuild(ids[i:i + BATCH]) for i in range(0, len(ids), BATCH))))
            rebuilt += done
            stalled = 0 if done else stalled + 1
        return rebuilt

    async def _description(self, kind: str, name: str, descriptions: list[str]) -> str:
        joined = "\n".join(descriptions)
        if self.count(joined) <= self.budget:
            return joined
        if self.summarise is not None:
            try:
                return await self.summarise(kind, name, descriptions)
            except ScholarGraphError as exc:  # keep the graph usable; the next rebuild retries
                self.failures.append(f"summary of {kind} {name!r} failed: {exc}")
        return fit_budget(descriptions, self.budget, self.count)

    async def _entities(self, ids: list[str]) -> int:
        versions = self.store.versions("entities", ids)
        names = {i: e.name for i, e in self.store.get_entities(ids, sources=False).items()}
        merged = [merge_entity(s) for s in self.store.entity_sources(ids).values()]
        descs = await asyncio.gather(*(self._description("entity", m.name, m.description.split("\n")) for m in merged))
        texts = [entity_text(m.name, m.type, d, m.aliases) for m, d in zip(merged, descs, strict=True)]
        vectors = await self.embedder.embed(texts)
        for m, d in zip(merged, descs, strict=True):
            m.description = d

        def store_rebuilt() -> int:
            rebuilt = [i for i, m in enumerate(merged) if self.store.update_entity(m, versions.get(m.id, 0.0))]
            self.store.put_vectors("entity", [merged[i].id for i in rebuilt], vectors[rebuilt])
            self.store.release_dirty("entities", ids)
            # a relation's vector text names its ends: an entity that changed name makes them stale
            renamed = [merged[i].id for i in rebuilt if names.get(merged[i].id) != merged[i].name]
            if renamed:
                self.store.touch_relations(self.store.relations_touching(renamed))
            return len(rebuilt)

        return await self.store.awrite(store_rebuilt)

    async def _relations(self, ids: list[str]) -> int:
        versions = self.store.versions("relations", ids)
        sources = self.store.relation_sources(ids)
        rels = self.store.get_relations(ids, sources=False)
        ends = self.store.get_entities({e for r in rels.values() for e in (r.source_id, r.target_id)}, sources=False)
        items = [(sources[i], rels[i]) for i in ids if i in rels]
        descs = await asyncio.gather(*(
            self._description("relation", f"{ends[r.source_id].name} -> {ends[r.target_id].name}", dedupe(s.descriptions))
            for s, r in items))
        texts = []
        for (s, r), d in zip(items, descs, strict=True):
            kw = ", ".join(dedupe(s.keywords)[:8])
            texts.append(f"{ends[r.source_id].name} -- {ends[r.target_id].name}: {kw}. {d}"[:RELATION_TEXT_CHARS])
        vectors = await self.embedder.embed(texts)
        merged = [Relation(r.id, r.source_id, r.target_id, d, dedupe(s.keywords)[:12], dedupe(s.types), max(s.weight, 0.0),
                           r.directed, s.confidence) for (s, r), d in zip(items, descs, strict=True)]

        def store_rebuilt() -> int:
            rebuilt = [i for i, m in enumerate(merged) if self.store.update_relation(m, versions.get(m.id, 0.0))]
            self.store.put_vectors("relation", [merged[i].id for i in rebuilt], vectors[rebuilt])
            self.store.release_dirty("relations", ids)
            return len(rebuilt)

        return await self.store.awrite(store_rebuilt)
