"""The question's own passages: dense (chunk vectors) and lexical (full-text BM25) rankings, their
reciprocal-rank fusion, the fusion of a graph mode's text units with them, and the optional
reranking stage. ``query.passages`` picks fused (default), dense-only or lexical-only."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..config import QuerySettings
from ..llm.rerank import Reranker
from ..store.base import ChunkStore, GraphSearch
from .rank import Ranked, rrf

__all__ = ["PassageLists", "fuse_text_units", "rerank", "search_passages"]


@dataclass
class PassageLists:
    """Rankings of chunks for one question (best first, (chunk id, score))."""

    dense: list[tuple[str, float]] = field(default_factory=list)
    lexical: list[tuple[str, float]] = field(default_factory=list)
    fused: list[tuple[str, float]] = field(default_factory=list)

    def details(self, limit: int = 10) -> dict:
        return {"dense": [i for i, _ in self.dense[:limit]], "lexical": [i for i, _ in self.lexical[:limit]]}


def depth(settings: QuerySettings, top_k: int) -> int:
    return max(top_k, settings.fusion_depth)


def search_passages(store: GraphSearch, settings: QuerySettings, question: str, query_vec: np.ndarray, dim: int,
                    top_k: int) -> PassageLists:
    """The question's passages by the configured method; ``fused`` holds the ranking to use."""
    n = depth(settings, top_k)
    out = PassageLists()
    if settings.passages in ("fused", "dense"):
        out.dense = store.vector_index("chunk", dim).search(query_vec, n)
    if settings.passages in ("fused", "lexical"):
        out.lexical = store.lexical_search(question, n)
    if settings.passages == "dense":
        out.fused = list(out.dense)
    elif settings.passages == "lexical":
        out.fused = list(out.lexical)
    else:
        out.fused = rrf([out.dense, out.lexical], [settings.dense_weight, settings.lexical_weight], settings.rrf_k)
    return out


def fuse_text_units(graph_units: Ranked, passages: PassageLists, settings: QuerySettings,
                    limit: int, graph_weight: float | None = None) -> list[tuple[str, float]]:
    """A graph mode's text units fused (RRF) with the question's own dense and lexical passages, so
    that a mode is never worse than its passage retrieval. With ``query.passages`` = dense or
    lexical only that ranking joins the graph's. Weights: ``graph_weight`` (default
    ``query.graph_weight``), ``query.dense_weight``, ``query.graph_lexical_weight``."""
    lists: list[Ranked] = [graph_units]
    weights = [settings.graph_weight if graph_weight is None else graph_weight]
    if settings.passages in ("fused", "dense"):
        lists.append(passages.dense)
        weights.append(settings.dense_weight)
    if settings.passages in ("fused", "lexical"):
        lists.append(passages.lexical)
        weights.append(settings.graph_lexical_weight)
    return rrf(lists, weights, settings.rrf_k, limit)


async def rerank(reranker: Reranker | None, store: ChunkStore, question: str, ranked: list[tuple[str, float]],
                 candidates: int, limit: int) -> tuple[list[tuple[str, float]], dict]:
    """The first ``candidates`` of ``ranked`` re-ordered by the reranker's scores, cut to ``limit``;
    without a reranker, ``ranked[:limit]``. Returns the list and details for inspection."""
    if reranker is None or not ranked:
        return ranked[:limit], {}
    head = ranked[: max(candidates, limit)]
    chunks = store.get_chunks(i for i, _ in head)
    head = [(i, s) for i, s in head if i in chunks]
    scores = await reranker.scores(question, [chunks[i].text for i, _ in head])
    order = sorted(range(len(head)), key=lambda j: (-scores[j], j))
    out = [(head[j][0], float(scores[j])) for j in order]
    return out[:limit], {"reranker": reranker.name, "reranked": len(head)}
