"""Rank fusion: pure functions over ranked id lists (best first).

* :func:`rrf` — weighted reciprocal-rank fusion (Cormack et al., SIGIR 2009): an item's score is
  ``sum(weight_i / (k + rank_i))`` over the lists it appears in (rank from 1). It needs no score
  calibration between lists, which is why dense cosines, BM25 scores and graph support counts can be
  fused at all.
* :func:`relevance_by_support` — a graph mode's text units ranked by how relevant each is to the
  question (its rank by dense similarity and by lexical match, among the units the graph selected)
  together with its graph support (how many selected entities/relations it supports), fused the
  same way: relevance decides between units of equal support, and support between equally relevant
  ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

Ranked = Sequence[tuple[str, float]]

RRF_K = 60  # the constant of the original paper; larger = flatter


def rrf(lists: Sequence[Ranked], weights: Sequence[float] | None = None, k: int = RRF_K,
        limit: int | None = None) -> list[tuple[str, float]]:
    """Weighted reciprocal-rank fusion of ranked lists; best first, at most ``limit``.

    Each list counts an id once (its best rank). Ties go to the id ranked best in any list, then to
    the earlier list, then to the id itself, so the order is deterministic. A list with weight 0
    contributes nothing (and adds no ids)."""
    weights = [1.0] * len(lists) if weights is None else list(weights)
    if len(weights) != len(lists):
        raise ValueError("one weight per list")
    score: dict[str, float] = {}
    first: dict[str, tuple[int, int]] = {}  # id -> (best rank, list index of it)
    for li, (items, w) in enumerate(zip(lists, weights, strict=True)):
        if w <= 0:
            continue
        seen: set[str] = set()
        for rank, (item, _) in enumerate(items, start=1):
            if item in seen:
                continue
            seen.add(item)
            score[item] = score.get(item, 0.0) + w / (k + rank)
            if item not in first or (rank, li) < first[item]:
                first[item] = (rank, li)
    order = sorted(score, key=lambda i: (-score[i], first[i], i))
    if limit is not None:
        order = order[:limit]
    return [(i, score[i]) for i in order]


def relevance_by_support(support: Mapping[str, float], dense: Ranked, lexical: Ranked,
                         weights: tuple[float, float, float] = (1.0, 1.0, 1.0), k: int = RRF_K,
                         limit: int | None = None) -> list[tuple[str, float]]:
    """Text units a graph mode selected (``support``: unit -> support, e.g. how many matched
    entities and relations it states), ranked by relevance to the question weighted by support.

    ``dense`` / ``lexical`` rank (some of) the same units by similarity to the question and by full-text
    match; units they miss are simply not ranked by them. ``weights`` = (support, dense, lexical).
    Only units in ``support`` are returned."""
    by_support = sorted(support.items(), key=lambda kv: (-kv[1], kv[0]))
    inside = [[(i, s) for i, s in ranked if i in support] for ranked in (dense, lexical)]
    fused = rrf([by_support, *inside], weights, k)
    return fused[:limit] if limit is not None else fused
