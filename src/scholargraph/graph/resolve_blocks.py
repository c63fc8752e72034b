"""Candidate pairs for resolution: name blocks + vector neighbours (step 1 of
:mod:`scholargraph.graph.resolve`).

Pairs are found without comparing everything with everything: name blocks (same compact key,
same content words, one typo apart, code/proper-name prefixes, acronym keys) plus the top-``k``
vector neighbours of every candidate (exact block-wise products, or an inverted-file index above
``exact_limit`` vectors).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..extract.text_utils import STOPWORDS
from .resolve_acronyms import _acronym_letters, _is_acronym_word, _word_parts
from .resolve_names import _Surface
from .resolve_rules import _TYPO_MIN_LEN

if TYPE_CHECKING:
    from .resolve import ResolutionSettings

_MAX_SPAN_WORDS = 8


def _acronym_keys(s: _Surface) -> tuple[list[str], list[str]]:
    """Block keys for rule d: (keys as an abbreviation, keys as a long form).

    Both have the form "words before#letters#words after": "SMV thrombosis" gives "#smv#thrombosis"
    and "superior mesenteric vein thrombosis" gives the same for the span of its first three
    words (initials with and without function words). Letters inside words ("HDAC" = "histone
    deacetylase") have no key: such pairs come from the vector neighbours.
    """
    words, keys = s.words, s.word_keys
    short: list[str] = []
    long: list[str] = []
    if not words or len(words) > _MAX_SPAN_WORDS:
        return short, long
    is_acr = [_is_acronym_word(w) for w in words]
    for i in range(len(words)):
        for j in range(i + 1, min(len(words), i + 2) + 1):
            if all(is_acr[i:j]):
                for letters in _acronym_letters(" ".join(words[i:j])):
                    short.append(f"{'|'.join(keys[:i])}#{letters}#{'|'.join(keys[j:])}")
    if s.acronym:
        return short, long
    parts = [_word_parts(w) for w in words]
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
    return short, long


def _typo_keys(tokens: Sequence[str]) -> list[str]:
    """Symmetric-delete keys (SymSpell): two names one typo apart in one long word share one."""
    if len(tokens) > 4:
        return []
    keys = []
    for idx, tok in enumerate(tokens):
        if len(tok) < _TYPO_MIN_LEN - 1 or not tok.isalpha():
            continue
        rest = " ".join(tokens[:idx]) + "|" + " ".join(tokens[idx + 1 :])
        variants = {tok} | {tok[:i] + tok[i + 1 :] for i in range(len(tok))}
        keys += [f"~{idx}|{v}|{rest}" for v in variants]
    return keys


def _name_blocks(surfaces: list[list[_Surface]], settings: ResolutionSettings) -> set[tuple[int, int]]:
    by_key: dict[str, list[int]] = defaultdict(list)
    by_prefix: dict[tuple[str, ...], list[int]] = defaultdict(list)
    shorts: list[tuple[int, tuple[str, ...]]] = []
    acr_short: dict[str, list[int]] = defaultdict(list)
    acr_long: dict[str, list[int]] = defaultdict(list)
    by_bag: dict[str, list[int]] = defaultdict(list)
    for i, ss in enumerate(surfaces):
        for s in ss:
            by_key[s.compact].append(i)
            content = sorted(set(s.tokens) - STOPWORDS)
            if len(content) >= 2:
                by_bag[" ".join(content)].append(i)
            for key in _typo_keys(s.tokens):
                by_bag[key].append(i)
            for m in range(1, min(3, len(s.tokens)) + 1):
                by_prefix[s.tokens[:m]].append(i)
            if 0 < len(s.tokens) <= 3 and len(s.word_keys) <= 2 and (s.code or s.proper):
                shorts.append((i, s.tokens))
            short_keys, long_keys = _acronym_keys(s)
            for key in short_keys:
                acr_short[key].append(i)
            for key in long_keys:
                acr_long[key].append(i)
    pairs: set[tuple[int, int]] = set()

    def add(i: int, j: int) -> None:
        if i != j:
            pairs.add((i, j) if i < j else (j, i))

    for members in [*by_key.values(), *by_bag.values()]:
        members = sorted(set(members))
        # Same compact key: all pairs; a huge block (thousands of "model"s) in chunks of max_group,
        # the most a group may hold anyway.
        chunk = len(members) if len(members) <= settings.block_limit else max(2, settings.max_group)
        for start in range(0, len(members), chunk):
            part = members[start : start + chunk]
            for x in range(len(part)):
                for y in range(x + 1, len(part)):
                    add(part[x], part[y])
    # Rule e: a code or proper name of one or two words against every name that starts with it.
    for i, prefix in shorts:
        for j in by_prefix.get(prefix, [])[:20000]:
            add(i, j)
    for letters, abbreviations in acr_short.items():
        longs = sorted(set(acr_long.get(letters, ())))
        if not longs:
            continue
        for i in sorted(set(abbreviations))[: settings.block_limit * 4]:
            for j in longs[: settings.block_limit * 16]:
                add(i, j)
    return pairs


def _vector_neighbours(vectors: np.ndarray, k: int, floor: float, settings: ResolutionSettings
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(i, j, cosine) with i < j: j among i's top-k neighbours (or i among j's), cosine >= floor."""
    n = len(vectors)
    empty = np.zeros(0, dtype=np.int64)
    if n < 2 or k <= 0:
        return empty, empty, np.zeros(0, dtype=np.float32)
    rows_all: list[np.ndarray] = []
    cols_all: list[np.ndarray] = []
    vals_all: list[np.ndarray] = []

    def top_k(block: np.ndarray, row_ids: np.ndarray, col_ids: np.ndarray) -> None:
        kk = min(k, block.shape[1] - 1)
        if kk <= 0:
            return
        idx = np.argpartition(-block, kk - 1, axis=1)[:, :kk]
        vals = np.take_along_axis(block, idx, axis=1)
        r, c = np.nonzero(vals >= floor)
        rows_all.append(row_ids[r])
        cols_all.append(col_ids[idx[r, c]])
        vals_all.append(vals[r, c])

    if n <= settings.exact_limit:
        step = max(1, min(1024, 2**24 // n))
        all_ids = np.arange(n)
        for start in range(0, n, step):
            block = vectors[start : start + step] @ vectors.T
            local = np.arange(block.shape[0])
            block[local, start + local] = -np.inf
            top_k(block, all_ids[start : start + step], all_ids)
    else:
        for members in _ivf_cells(vectors, settings):
            if len(members) < 2:
                continue
            sub = vectors[members]
            for start in range(0, len(members), 2048):
                block = sub[start : start + 2048] @ sub.T
                local = np.arange(block.shape[0])
                block[local, start + local] = -np.inf
                top_k(block, members[start : start + 2048], members)
    if not rows_all:
        return empty, empty, np.zeros(0, dtype=np.float32)
    rows, cols, vals = np.concatenate(rows_all), np.concatenate(cols_all), np.concatenate(vals_all)
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
