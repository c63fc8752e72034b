"""``ppr`` mode: personalised PageRank over entity and passage nodes (HippoRAG 2-style).

The graph has one node per entity and one per chunk (passage). Relations join entities (weight =
the relation's weight); an entity joins every chunk that states it with weight 1 / (the number of
chunks stating it): a passage's rare names (a person, a gene) carry the walk further than its
common terms, which join it to hundreds of passages. Entity names that contain one another ("Nicki
Minaj" / "singer Nicki Minaj", "Frank Lloyd" / "Frank William George Lloyd") are joined too
(:func:`name_links`, weight = the shorter name's specificity times ``plugins.ppr.name_links``): HippoRAG's
synonym edges, by words rather than by vectors, because the offline graph's entity vectors embed
the name with its context sentence (on 2Wiki "Nicki Minaj" / "singer Nicki Minaj" have cosine
0.53 while unrelated phrases of one sentence reach 0.9) and embedding every name alone would
cost about as much as embedding the entities again. A walk starts from the seeds and, at each
step, follows an edge with probability ``damping`` or jumps back to a seed; passages are ranked by
how often the walk visits them.

Seeds: the question's best passages (dense + lexical fusion, the first ``plugins.ppr.seed_passages``,
weighted by their fused score), so that the walk goes from what the question matches to the
passages its names lead to (the second hop of a multi-hop question); and the entities the question
matches, as in HippoRAG 2 (Gutiérrez et al., 2025, §3), each divided by the number of passages
stating it (node specificity). By default only the entities the question names exactly seed the
walk (``plugins.ppr.entity_min_score`` = 1; an exact match counts only when the question itself says the
name, :func:`question_seeds`, not for the graph phrases the offline keywords add): on the offline
noun-phrase graph the nearest-vector matches and the facts' ends are noisy ("director" matches every "British film director") and lowered
2Wiki recall@10 of ppr from 0.82 to 0.75 (``docs/benchmarks.md``); with an LLM-built graph a
lower threshold may help.

:func:`personalized_pagerank` is the pure algorithm (power iteration on a scipy sparse matrix);
:class:`PassageGraph` is the matrix of one workspace, built once per graph version.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..store.base import GraphStore, SourceLimit
from ..text.names import fold_plural, normalise_name

if TYPE_CHECKING:
    import scipy.sparse as sp  # imported where used: commands without a ppr query never load scipy

__all__ = ["PassageGraph", "name_links", "name_tokens", "named_in", "personalized_pagerank", "question_seeds",
           "seed_vector"]

_POSSESSIVE = re.compile(r"['\u2019]s\b")
_WORD = re.compile(r"\w+")
MAX_NAME_WORDS = 8  # longer names are phrases, not names: they are not searched for shorter ones


def transition(adjacency: sp.spmatrix) -> tuple[sp.csr_matrix, np.ndarray]:
    """The walk's step on ``adjacency``: the column-stochastic matrix (row i: the probability of
    stepping into i from each node, by edge weight) and the mask of nodes with no out-edge."""
    import scipy.sparse as sp

    n = adjacency.shape[0]
    matrix = sp.csr_matrix(adjacency, dtype=np.float64)
    out_weight = np.asarray(matrix.sum(axis=1)).ravel()
    dangling = out_weight == 0
    inv = np.divide(1.0, out_weight, out=np.zeros(n), where=~dangling)
    return (sp.diags(inv) @ matrix).T.tocsr(), dangling


def personalized_pagerank(adjacency: sp.spmatrix, seeds: np.ndarray, damping: float = 0.5, tol: float = 1e-8,
                          max_iter: int = 100,
                          step: tuple[sp.csr_matrix, np.ndarray] | None = None) -> np.ndarray:
    """Stationary distribution of a walk on the (weighted, symmetric or not) ``adjacency`` that
    follows an out-edge (chosen by weight) with probability ``damping`` and restarts from
    ``seeds`` (normalised to a distribution) otherwise. A node without out-edges restarts.

    Power iteration until the L1 change is below ``tol``; returns one score per node, summing to 1.
    All-zero seeds give all-zero scores. ``step``: :func:`transition` of ``adjacency`` when the
    caller keeps it (a graph walked for many questions)."""
    n = adjacency.shape[0]
    seeds = np.asarray(seeds, dtype=np.float64)
    total = seeds.sum()
    if n == 0 or total <= 0:
        return np.zeros(n)
    restart = seeds / total
    transition_t, dangling = step if step is not None else transition(adjacency)
    p = restart.copy()
    for _ in range(max_iter):
        lost = p[dangling].sum()  # mass at nodes with no way out restarts
        nxt = (1 - damping) * restart + damping * (transition_t @ p + lost * restart)
        if np.abs(nxt - p).sum() < tol:
            return nxt
        p = nxt
    return p


def seed_vector(n: int, weights: Mapping[int, float]) -> np.ndarray:
    vec = np.zeros(n)
    for i, w in weights.items():
        vec[i] += max(float(w), 0.0)
    return vec


def name_tokens(name: str) -> tuple[str, ...]:
    """An entity name's words as compared for containment: its merge key (:func:`normalise_name`:
    casefolded, hyphens as spaces, last word plural-folded) without possessives or punctuation."""
    return tuple(_WORD.findall(_POSSESSIVE.sub("", normalise_name(name))))


def named_in(text: str, name: str) -> bool:
    """Whether ``name``'s words occur in ``text`` as a contiguous run (case, punctuation, possessives
    and plurals aside): "Gaby: A True Story" names "True Story", not "born American film director"."""
    words = tuple(fold_plural(w) for w in name_tokens(name))
    if not words:
        return False
    found = tuple(fold_plural(w) for w in _WORD.findall(_POSSESSIVE.sub("", text.casefold())))
    n = len(words)
    return any(found[i : i + n] == words for i in range(len(found) - n + 1))


def question_seeds(matched: Mapping[str, float], names: Mapping[str, str], question: str, min_score: float,
                 weight: float) -> dict[str, float]:
    """The matched entities (id -> match score) that seed the walk, times ``weight``: those scoring at
    least ``min_score``, an exact match (score 1) only when the question itself names it (``names``:
    id -> name). The offline keywords add the graph's own phrases most similar to the question
    (clues such as "born American film director" for "...the director of film Gaby...") and they
    match exactly, but they name the passages they come from, not the question's entities."""
    if weight <= 0:
        return {}
    return {e: weight * w for e, w in matched.items()
            if w >= min_score and (w < 1.0 or (e in names and named_in(question, names[e])))}


def name_links(names: Sequence[str]) -> list[tuple[int, int, float]]:
    """Links between entity names that name the same thing as far as their words tell: (i, j, weight)
    with i < j, where one name's words are a contiguous run of the other's ("Nicki Minaj" in "singer
    Nicki Minaj", "Palme" in "Swedish prime minister Olof Palme"), or the other with its middle words
    left out ("Frank Lloyd" / "Frank William George Lloyd"), or both have the same words.

    The weight is the shorter name's specificity: 1 / (the number of names containing it), as the
    passage edges are weighted by 1 / (passages stating the entity): a generic word contained in
    hundreds of names ("film", "director") links to each of them with a negligible weight, a full
    name contained in one other name links to it with weight 1. This is the cheap, string-level
    counterpart of HippoRAG's synonym edges (Gutierrez et al. 2024, §3; HippoRAG 2, 2025, §3), for
    an offline graph whose noun phrases keep a title or role with the name ("singer Nicki Minaj")."""
    tokens = [name_tokens(n) for n in names]
    by_key: dict[tuple[str, ...], list[int]] = {}
    for i, t in enumerate(tokens):
        if t:
            by_key.setdefault(t, []).append(i)
    shorter: list[int] = []  # (shorter[k], longer[k]): a name and a name containing it
    longer: list[int] = []
    for i, t in enumerate(tokens):
        if not t or len(t) > MAX_NAME_WORDS:
            continue
        runs = {t[a:b] for a in range(len(t)) for b in range(a + 1, len(t) + 1)}
        if len(t) >= 3:
            runs.add((t[0], t[-1]))
        for run in runs:
            for j in by_key.get(run, ()):
                if j != i:
                    shorter.append(j)
                    longer.append(i)
    if not shorter:
        return []
    short, long_ = np.asarray(shorter), np.asarray(longer)
    weight = 1.0 / np.bincount(short)[short]  # each contained name: 1 / the names containing it
    first, second = np.minimum(short, long_), np.maximum(short, long_)
    # names with the same words contain each other: one link per pair, the heavier weight
    order = np.lexsort((-weight, second, first))
    first, second, weight = first[order], second[order], weight[order]
    keep = np.ones(len(first), dtype=bool)
    keep[1:] = (first[1:] != first[:-1]) | (second[1:] != second[:-1])
    return list(zip(first[keep].tolist(), second[keep].tolist(), weight[keep].tolist(), strict=True))


@dataclass
class PassageGraph:
    """Entity and chunk nodes of one workspace and their weighted adjacency (symmetric)."""

    nodes: list[str]  # entity ids, then chunk ids
    index: dict[str, int]  # entity id -> node; chunk ids are keyed "chunk:<id>"
    n_entities: int
    adjacency: sp.csr_matrix
    passages_of: np.ndarray  # per entity node: number of chunks stating it
    load_seconds: float = 0.0
    step: tuple[sp.csr_matrix, np.ndarray] | None = None  # transition(adjacency), computed once

    def __post_init__(self) -> None:
        if self.step is None:
            self.step = transition(self.adjacency)

    @classmethod
    def build(cls, store: GraphStore, name_link_weight: float = 0.0) -> PassageGraph:
        """The matrix of ``store``'s entities and chunks; ``name_link_weight`` > 0 also joins entity
        names that contain one another (:func:`name_links`, each weight multiplied by it)."""
        return cls.assemble(store, store.all_entity_ids(), store.all_edges(), name_link_weight)

    @classmethod
    def assemble(cls, store: GraphStore, entity_ids: list[str], edges: Iterable[tuple[str, str, str, float]],
                 name_link_weight: float = 0.0, passages: SourceLimit | None = None) -> PassageGraph:
        """The matrix of ``entity_ids``, the ``edges`` between them (others are left out) and the
        chunks stating them: the whole graph (:meth:`build`) or a question's neighbourhood.

        ``passages``: at most that many chunks per entity join the matrix (those it prefers first: a
        hub stated in thousands of passages is not read whole); an entity's specificity still counts
        every passage stating it, so each kept edge weighs what it weighs in the whole matrix."""
        started = time.perf_counter()
        index = {e: i for i, e in enumerate(entity_ids)}
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        for _rid, a, b, w in edges:
            ia, ib = index.get(a), index.get(b)
            if ia is None or ib is None or ia == ib:
                continue
            rows += [ia, ib]
            cols += [ib, ia]
            vals += [max(float(w), 1e-6)] * 2
        nodes = list(entity_ids)
        passages_of = np.zeros(len(entity_ids))
        names = [""] * len(entity_ids)
        chunk_index: dict[str, int] = {}
        batch = 2000
        stated = store.chunk_counts("entities", entity_ids) if passages is not None else {}
        for start in range(0, len(entity_ids), batch):
            part = entity_ids[start : start + batch]
            for eid, entity in store.get_entities(part, passages if passages is not None else True).items():
                ie = index[eid]
                names[ie] = entity.name
                distinct = dict.fromkeys(entity.chunk_ids)
                passages_of[ie] = stated.get(eid, len(distinct))
                specificity = 1.0 / max(passages_of[ie], 1.0)
                for cid in distinct:
                    ic = chunk_index.get(cid)
                    if ic is None:
                        ic = chunk_index[cid] = len(nodes)
                        nodes.append(cid)
                    rows += [ie, ic]
                    cols += [ic, ie]
                    vals += [specificity, specificity]
        if name_link_weight > 0:
            for ia, ib, w in name_links(names):
                rows += [ia, ib]
                cols += [ib, ia]
                vals += [name_link_weight * w] * 2
        n = len(nodes)
        import scipy.sparse as sp

        adjacency = sp.csr_matrix((np.asarray(vals), (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))),
                                  shape=(n, n))
        index.update({f"chunk:{c}": i for c, i in chunk_index.items()})
        step = transition(adjacency)
        return cls(nodes, index, len(entity_ids), adjacency, passages_of, time.perf_counter() - started, step)

    def chunk_node(self, chunk_id: str) -> int | None:
        return self.index.get(f"chunk:{chunk_id}")

    def rank(self, entity_seeds: Mapping[str, float], passage_seeds: Mapping[str, float], damping: float,
             limit: int) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        """(passages, entities) by PageRank score, best first, ``limit`` passages and 2 x limit entities.
        Entity seeds are divided by the number of passages stating the entity (node specificity);
        passage seeds are taken as given."""
        weights: dict[int, float] = {}
        for eid, w in entity_seeds.items():
            i = self.index.get(eid)
            if i is not None and i < self.n_entities:
                weights[i] = weights.get(i, 0.0) + w / max(self.passages_of[i], 1.0)
        for cid, w in passage_seeds.items():
            i = self.chunk_node(cid)
            if i is not None:
                weights[i] = weights.get(i, 0.0) + w
        if not weights:
            return [], []
        scores = personalized_pagerank(self.adjacency, seed_vector(len(self.nodes), weights), damping, tol=1e-6,
                                       step=self.step)
        chunk_scores = scores[self.n_entities :]
        entity_scores = scores[: self.n_entities]
        top_c = _top(chunk_scores, limit)
        top_e = _top(entity_scores, 2 * limit)
        passages = [(self.nodes[self.n_entities + i], float(chunk_scores[i])) for i in top_c]
        entities = [(self.nodes[i], float(entity_scores[i])) for i in top_e]
        return passages, entities


def _top(scores: np.ndarray, k: int) -> list[int]:
    """Indices of the ``k`` highest positive scores, best first (ties: lower index first)."""
    if k <= 0 or not len(scores):
        return []
    k = min(k, len(scores))
    candidates = np.argpartition(-scores, k - 1)[:k]
    ordered = sorted(candidates.tolist(), key=lambda i: (-scores[i], i))
    return [i for i in ordered if scores[i] > 0]
