"""Candidate pairs for resolution: name blocks + vector neighbours (step 1 of
:mod:`scholargraph.graph.resolve`).

Pairs are found without comparing everything with everything: name blocks (same compact key,
same content words, one typo apart, code/proper-name prefixes, acronym keys) plus the top-``k``
vector neighbours of every candidate (exact block-wise products, or an inverted-file index above
``exact_limit`` vectors).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..text.stopwords import STOPWORDS
from .resolve_acronyms import acronym_letters, is_acronym_word, word_parts
from .resolve_names import Surface
from .resolve_rules import TYPO_MIN_LEN
from .resolve_types import Candidate, ResolutionSettings


def candidate_pairs(cands: Sequence[Candidate], surfaces: list[list[Surface]], settings: ResolutionSettings
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, cols, cosine) of every candidate pair, rows < cols, sorted by (row, col).

    Pairs from the name blocks and the vector neighbours; the cosine is NaN unless both have a vector.
    """
    n = len(cands)
    name_pairs = _name_blocks(surfaces, settings)
    has_vec = np.array([c.vector is not None for c in cands], dtype=bool)
    mat: np.ndarray | None = None
    codes = [np.fromiter((i * n + j for i, j in name_pairs), dtype=np.int64, count=len(name_pairs))]
    if has_vec.sum() >= 2:
        mat = _unit_matrix(cands, has_vec)
        codes.append(_vector_pair_codes(mat, has_vec, surfaces, settings))
    all_codes = np.unique(np.concatenate(codes))
    rows, cols = all_codes // n, all_codes % n
    return rows, cols, _pair_cosines(mat, has_vec, rows, cols)


def _unit_matrix(cands: Sequence[Candidate], has_vec: np.ndarray) -> np.ndarray:
    """One row per candidate: its vector normalised (zeros where it has none)."""
    idx = np.flatnonzero(has_vec)
    dim = int(np.asarray(cands[idx[0]].vector).size)
    mat = np.zeros((len(cands), dim), dtype=np.float32)
    for i in idx.tolist():
        mat[i] = np.asarray(cands[i].vector, dtype=np.float32).reshape(-1)
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    mat /= np.where(norms > 0, norms, 1.0)
    return mat


def _vector_pair_codes(mat: np.ndarray, has_vec: np.ndarray, surfaces: list[list[Surface]],
                       settings: ResolutionSettings) -> np.ndarray:
    """Pair codes ``i * n + j`` (i < j) of the vector neighbours worth checking."""
    n = len(mat)
    idx = np.flatnonzero(has_vec)
    floor = min(settings.threshold, settings.alias_threshold)
    lo, hi, vals = _vector_neighbours(mat[idx], settings.k, floor, settings)
    lo, hi = idx[lo], idx[hi]
    keep = vals >= settings.threshold
    # Below `threshold` the name blocks already hold every pair that rules c, e and f's typo
    # test can link; what is left is rule d, whose pairs come from a range, not the nearest k.
    acr_lo, acr_hi = _acronym_range(mat, has_vec, surfaces, settings)
    return np.concatenate([lo[keep].astype(np.int64) * n + hi[keep], acr_lo * n + acr_hi])


def rule_d_side(surfaces: Sequence[Surface]) -> tuple[str, bool]:
    """What rule d's pairs are drawn by: the first letter of a candidate's name ("" without one)
    and whether a word of one of its names is acronym-like. Rule d links only names of the same
    first letter, one of them with an acronym-like word."""
    first = surfaces[0].compact[:1] if surfaces else ""
    return first, any(s.has_acronym for s in surfaces)


def _acronym_range(mat: np.ndarray, has_vec: np.ndarray, surfaces: list[list[Surface]],
                   settings: ResolutionSettings) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) pairs rule d may link: each candidate with an acronym-like word against every
    candidate of the same first letter at cosine >= ``alias_threshold``, its ``acronym_range``
    closest of them. A range, not the nearest k: "HDAC" and "histone deacetylase" (cosine 0.48)
    are compared however many closer names the others have, so the pairs of one candidate do not
    depend on what else a pass holds (papers indexed one by one or together, issue 27 item 11)."""
    by_letter: dict[str, list[int]] = defaultdict(list)
    acronym_like = np.zeros(len(mat), dtype=bool)
    for i in np.flatnonzero(has_vec).tolist():
        first, acronym_like[i] = rule_d_side(surfaces[i])
        if first:
            by_letter[first].append(i)
    found: list[tuple[np.ndarray, np.ndarray]] = []
    cap = settings.acronym_range
    for members in by_letter.values():
        group = np.array(members)
        at = np.flatnonzero(acronym_like[group])  # the acronym-like rows, by their place in the group
        step = max(1, min(1024, 2**24 // len(group)))  # a block of at most 16M scores
        for start in range(0, len(at) if cap > 0 else 0, step):
            places = at[start : start + step]
            scores = mat[group[places]] @ mat[group].T
            scores[np.arange(len(places)), places] = -np.inf  # not itself
            top = np.argpartition(-scores, cap - 1, axis=1)[:, :cap] if cap < len(group) else \
                np.broadcast_to(np.arange(len(group)), scores.shape)
            r, c = np.nonzero(np.take_along_axis(scores, top, axis=1) >= settings.alias_threshold)
            a, b = group[places[r]], group[top[r, c]]
            found.append((np.minimum(a, b), np.maximum(a, b)))
    if not found:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    lo, hi = (np.concatenate(x).astype(np.int64) for x in zip(*found, strict=True))
    return lo, hi


def _pair_cosines(mat: np.ndarray | None, has_vec: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Cosine of each pair (rows[p], cols[p]); NaN unless both have a vector."""
    cos = np.full(len(rows), np.nan, dtype=np.float32)
    if mat is not None:
        both = has_vec[rows] & has_vec[cols]
        sel = np.flatnonzero(both)
        for start in range(0, len(sel), 65536):
            part = sel[start : start + 65536]
            cos[part] = np.einsum("ij,ij->i", mat[rows[part]], mat[cols[part]])
    return cos


# --------------------------------------------------------------------------------------------
# Name blocks
# --------------------------------------------------------------------------------------------


@dataclass
class _NameIndex:
    """Block keys -> candidate indexes (a candidate appears once per surface with that key)."""

    by_key: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    by_bag: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    by_prefix: dict[tuple[str, ...], list[int]] = field(default_factory=lambda: defaultdict(list))
    shorts: list[tuple[int, tuple[str, ...]]] = field(default_factory=list)
    acr_short: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    acr_long: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))


def _index_names(surfaces: list[list[Surface]]) -> _NameIndex:
    index = _NameIndex()
    for i, ss in enumerate(surfaces):
        for s in ss:
            index.by_key[s.compact].append(i)
            content = sorted(set(s.tokens) - STOPWORDS)
            if len(content) >= 2:
                index.by_bag[" ".join(content)].append(i)
            for key in _typo_keys(s.tokens):
                index.by_bag[key].append(i)
            for m in range(1, min(3, len(s.tokens)) + 1):
                index.by_prefix[s.tokens[:m]].append(i)
            if 0 < len(s.tokens) <= 3 and len(s.word_keys) <= 2 and (s.code or s.proper):
                index.shorts.append((i, s.tokens))
            short_keys, long_keys = _acronym_keys(s)
            for key in short_keys:
                index.acr_short[key].append(i)
            for key in long_keys:
                index.acr_long[key].append(i)
    return index


def _name_blocks(surfaces: list[list[Surface]], settings: ResolutionSettings) -> set[tuple[int, int]]:
    """Index pairs (i < j) that share a name block."""
    index = _index_names(surfaces)
    found = itertools.chain(
        _same_block_pairs([*index.by_key.values(), *index.by_bag.values()], settings),
        _prefix_pairs(index),
        _acronym_block_pairs(index, settings),
    )
    return {(i, j) if i < j else (j, i) for i, j in found if i != j}


def _same_block_pairs(blocks: list[list[int]], settings: ResolutionSettings) -> Iterator[tuple[int, int]]:
    for members in blocks:
        members = sorted(set(members))
        # Same compact key: all pairs; a huge block (thousands of "model"s) in chunks of max_group,
        # the most a group may hold anyway.
        chunk = len(members) if len(members) <= settings.block_limit else max(2, settings.max_group)
        for start in range(0, len(members), chunk):
            part = members[start : start + chunk]
            for x in range(len(part)):
                for y in range(x + 1, len(part)):
                    yield part[x], part[y]


def _prefix_pairs(index: _NameIndex) -> Iterator[tuple[int, int]]:
    # Rule e: a code or proper name of one or two words against every name that starts with it.
    for i, prefix in index.shorts:
        for j in index.by_prefix.get(prefix, [])[:20000]:
            yield i, j


def _acronym_block_pairs(index: _NameIndex, settings: ResolutionSettings) -> Iterator[tuple[int, int]]:
    for letters, abbreviations in index.acr_short.items():
        longs = sorted(set(index.acr_long.get(letters, ())))
        if not longs:
            continue
        for i in sorted(set(abbreviations))[: settings.block_limit * 4]:
            for j in longs[: settings.block_limit * 16]:
                yield i, j


_MAX_SPAN_WORDS = 8


def _acronym_keys(s: Surface) -> tuple[list[str], list[str]]:
    """Block keys for rule d: (keys as an abbreviation, keys as a long form).

    Both have the form "words before#letters#words after": "SMV thrombosis" gives "#smv#thrombosis"
    and "superior mesenteric vein thrombosis" gives the same for the span of its first three
    words (initials with and without function words). Letters inside words ("HDAC" = "histone
    deacetylase") have no key: such pairs come from the vector neighbours.
    """
    words, keys = s.words, s.word_keys
    if not words or len(words) > _MAX_SPAN_WORDS:
        return [], []
    short = _abbreviation_keys(words, keys)
    if s.acronym:
        return short, []
    return short, _long_form_keys(words, keys)


def _abbreviation_keys(words: Sequence[str], keys: Sequence[str]) -> list[str]:
    """Keys of each run of one or two acronym-like words, as an abbreviation."""
    short: list[str] = []
    is_acr = [is_acronym_word(w) for w in words]
    for i in range(len(words)):
        for j in range(i + 1, min(len(words), i + 2) + 1):
            if all(is_acr[i:j]):
                for letters in acronym_letters(" ".join(words[i:j])):
                    short.append(f"{'|'.join(keys[:i])}#{letters}#{'|'.join(keys[j:])}")
    return short


def _long_form_keys(words: Sequence[str], keys: Sequence[str]) -> list[str]:
    """Keys of each span of two or more word parts, as a long form (initials with and without
    function words)."""
    long: list[str] = []
    parts = [word_parts(w) for w in words]
    full_i = ["".join(p[0][0] for p in ps) for ps in parts]
    content_i = ["".join(p[0][0] for p in ps if not p[1]) for ps in parts]
    n_parts = [len(ps) for ps in parts]
    for i in range(len(words)):
        before = "|".join(keys[:i])
        full, content, count = "", "", 0
        for j in range(i + 1, len(words) + 1):
            full += full_i[j - 1]
            content += content_i[j - 1]
            count += n_parts[j - 1]
            if count < 2:
                continue
            after = "|".join(keys[j:])
            long.append(f"{before}#{full}#{after}")
            if content != full and len(content) >= 2:
                long.append(f"{before}#{content}#{after}")
    return long


def _typo_keys(tokens: Sequence[str]) -> list[str]:
    """Symmetric-delete keys (SymSpell): two names one typo apart in one long word share one."""
    if len(tokens) > 4:
        return []
    keys = []
    for idx, tok in enumerate(tokens):
        if len(tok) < TYPO_MIN_LEN - 1 or not tok.isalpha():
            continue
        rest = " ".join(tokens[:idx]) + "|" + " ".join(tokens[idx + 1 :])
        variants = {tok} | {tok[:i] + tok[i + 1 :] for i in range(len(tok))}
        keys += [f"~{idx}|{v}|{rest}" for v in variants]
    return keys


# --------------------------------------------------------------------------------------------
# Vector neighbours
# --------------------------------------------------------------------------------------------


def _vector_neighbours(vectors: np.ndarray, k: int, floor: float, settings: ResolutionSettings
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(i, j, cosine) with i < j: j among i's top-k neighbours (or i among j's), cosine >= floor."""
    n = len(vectors)
    empty = np.zeros(0, dtype=np.int64)
    if n < 2 or k <= 0:
        return empty, empty, np.zeros(0, dtype=np.float32)
    found = [_top_k(block, row_ids, col_ids, k, floor) for block, row_ids, col_ids in _score_blocks(vectors, settings)]
    found = [f for f in found if f is not None]
    if not found:
        return empty, empty, np.zeros(0, dtype=np.float32)
    rows, cols, vals = (np.concatenate(parts) for parts in zip(*found, strict=True))
    return _best_pairs(rows, cols, vals, n, k)


def _score_blocks(vectors: np.ndarray, settings: ResolutionSettings
                  ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(scores, row ids, column ids) blocks of cosines, self-matches at -inf: exact block-wise
    products up to ``exact_limit`` vectors, above that within each inverted-file cell."""
    n = len(vectors)
    if n <= settings.exact_limit:
        step = max(1, min(1024, 2**24 // n))
        all_ids = np.arange(n)
        for start in range(0, n, step):
            block = vectors[start : start + step] @ vectors.T
            local = np.arange(block.shape[0])
            block[local, start + local] = -np.inf
            yield block, all_ids[start : start + step], all_ids
        return
    for members in _ivf_cells(vectors, settings):
        if len(members) < 2:
            continue
        sub = vectors[members]
        for start in range(0, len(members), 2048):
            block = sub[start : start + 2048] @ sub.T
            local = np.arange(block.shape[0])
            block[local, start + local] = -np.inf
            yield block, members[start : start + 2048], members


def _top_k(block: np.ndarray, row_ids: np.ndarray, col_ids: np.ndarray, k: int, floor: float
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(row id, column id, score) of each row's top-k scores that reach ``floor``."""
    kk = min(k, block.shape[1] - 1)
    if kk <= 0:
        return None
    idx = np.argpartition(-block, kk - 1, axis=1)[:, :kk]
    vals = np.take_along_axis(block, idx, axis=1)
    r, c = np.nonzero(vals >= floor)
    return row_ids[r], col_ids[idx[r, c]], vals[r, c]


def _best_pairs(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, n: int, k: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's k best distinct neighbours, as deduplicated (lo, hi, cosine) pairs."""
    # A row may have neighbours from several cells: deduplicate, keep its k best overall.
    code, first = np.unique(rows.astype(np.int64) * n + cols, return_index=True)
    rows, cols, vals = rows[first], cols[first], vals[first]
    order = np.lexsort((cols, -vals, rows))
    rows, cols, vals = rows[order], cols[order], vals[order]
    rank = np.arange(len(rows)) - np.searchsorted(rows, rows, side="left")
    keep = rank < k
    rows, cols, vals = rows[keep], cols[keep], vals[keep]
    lo, hi = np.minimum(rows, cols), np.maximum(rows, cols)
    code, first = np.unique(lo.astype(np.int64) * n + hi, return_index=True)
    return lo[first], hi[first], vals[first]


def _ivf_cells(vectors: np.ndarray, settings: ResolutionSettings) -> list[np.ndarray]:
    """Inverted-file cells: k-means (seeded, deterministic) on a sample, each vector in nprobe cells."""
    n = len(vectors)
    # 2*sqrt(n) cells balance filing (n x cells) against searching (cells x cell_size^2).
    n_cells = max(2, int(2 * np.sqrt(n)))
    rng = np.random.default_rng(0)
    sample = vectors[rng.choice(n, size=min(n, 10 * n_cells), replace=False)]
    centroids = sample[rng.choice(len(sample), size=n_cells, replace=False)].copy()
    for _ in range(6):
        assign = np.argmax(sample @ centroids.T, axis=1)
        for c in range(n_cells):
            pts = sample[assign == c]
            if len(pts):
                centre = pts.mean(axis=0)
                norm = np.linalg.norm(centre)
                centroids[c] = centre / norm if norm > 0 else centre
    nprobe = max(1, min(settings.nprobe, n_cells))
    cells: list[list[np.ndarray]] = [[] for _ in range(n_cells)]
    for start in range(0, n, 8192):
        scores = vectors[start : start + 8192] @ centroids.T
        top = np.argpartition(-scores, nprobe - 1, axis=1)[:, :nprobe]
        for p in range(nprobe):
            col = top[:, p]
            order = np.argsort(col, kind="stable")
            bounds = np.searchsorted(col[order], np.arange(n_cells + 1))
            for c in range(n_cells):
                if bounds[c + 1] > bounds[c]:
                    cells[c].append(order[bounds[c] : bounds[c + 1]] + start)
    return [np.unique(np.concatenate(parts)) for parts in cells if parts]
