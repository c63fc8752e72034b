"""Per-chunk bounds on an extraction: a runaway model reply — ten thousand entities for
one passage — cannot flood the graph. What is beyond ``extraction.max_entities_per_chunk`` /
``max_relations_per_chunk`` / ``max_keywords_per_chunk`` is dropped (the first ones, in the
model's order, are kept) and a note says how much. Profile-neutral: applied by the pipeline to
whatever an extractor returned."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from ..models import Extraction

T = TypeVar("T")


@dataclass(frozen=True)
class ChunkLimits:
    entities: int
    relations: int
    keywords: int


def _keep_per_chunk(records: Sequence[T], limit: int) -> tuple[list[T], Counter[str]]:
    seen: Counter[str] = Counter()
    kept: list[T] = []
    dropped: Counter[str] = Counter()
    for record in records:
        chunk = record.chunk_id  # type: ignore[attr-defined]
        seen[chunk] += 1
        if seen[chunk] <= limit:
            kept.append(record)
        else:
            dropped[chunk] += 1
    return kept, dropped


def limit_per_chunk(extraction: Extraction, limits: ChunkLimits) -> list[str]:
    """Drop what is beyond the limits in place; returns one note per chunk that lost something."""
    extraction.entities, entities = _keep_per_chunk(extraction.entities, limits.entities)
    extraction.relations, relations = _keep_per_chunk(extraction.relations, limits.relations)
    extraction.keywords, keywords = _keep_per_chunk(extraction.keywords, limits.keywords)
    notes = []
    for chunk in dict.fromkeys([*entities, *relations, *keywords]):
        parts = [f"{n:,} {what}" for n, what in ((entities[chunk], "entities"), (relations[chunk], "relations"),
                                                   (keywords[chunk], "keywords")) if n]
        notes.append(f"chunk {chunk}: {', '.join(parts)} beyond the per-chunk limits dropped "
                     f"(extraction.max_entities_per_chunk={limits.entities}, max_relations_per_chunk={limits.relations}, "
                     f"max_keywords_per_chunk={limits.keywords})")
    return notes
