"""Nearest neighbours (cosine) with pgvector: one table per namespace, an HNSW index on each.

Vectors are stored L2-normalised (as the embedded store's exact index keeps them), so a returned
score is ``1 - cosine distance`` and ``get`` returns the normalised vector. Unfiltered top-k
searches walk the HNSW index (approximate, ``ef_search`` >= 2k); searches restricted to ``allowed``
ids and ``above`` without a limit score exactly the rows they name or every row. Many searches at
once (``search_many``) in a namespace without its HNSW index yet read the namespace once and score
it in numpy: the database would scan it once per query.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .schema import vector_table

EF_SEARCH_DEFAULT = 100  # set on every connection (store.hnsw_ef_search); larger k sets it per query
EF_SEARCH_MAX = 1000  # pgvector's limit
# search_many without an HNSW index (a namespace below hnsw_min_rows): from this many queries on, the
# namespace is read once and scored in numpy, rather than scanned once per query by the database
# (the resolution pass's blocks of 256 entities: 256 full scans each, quadratic over a run)
EXACT_MANY_MIN_QUERIES = 32
EXACT_PAGE = 4096  # rows of the namespace scored at a time there


def normalised(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float32)
    if v.ndim == 1:
        v = v.reshape(1, -1)
    if not np.isfinite(v).all():
        raise ValueError("vectors contain non-finite values")
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0
    return v / norms


def _score(value: Any) -> float:
    s = float(value)
    return 0.0 if math.isnan(s) else s  # a zero vector has no direction: similarity 0


class PgVectorIndex:
    """:class:`~scholargraph.store.base.VectorIndex` over ``vectors_<namespace>``."""

    def __init__(self, rows: Callable[..., list], dim: int, namespace: str, ef_search: int = EF_SEARCH_DEFAULT,
                 indexed: Callable[[], bool] | None = None):
        self._rows = rows  # (sql, params, ef_search=None, binary=False) -> rows, on a pooled or the unit of work's connection
        self.dim = dim
        self.namespace = namespace
        self.table = vector_table(namespace)
        self.ef_search = ef_search  # the connection's setting
        self._indexed = indexed  # whether the namespace has its HNSW index now (None: assume it has)

    def _query(self, query: np.ndarray) -> np.ndarray | None:
        q = np.asarray(query, dtype=np.float32)
        if q.ndim == 2 and q.shape[0] == 1:
            q = q[0]
        if q.ndim != 1 or q.shape[0] != self.dim:
            raise ValueError(f"query has dimension {q.shape[-1] if q.ndim else 0} but the index holds {self.dim}-d vectors")
        norm = float(np.linalg.norm(q))
        if not np.isfinite(norm):
            raise ValueError("query contains non-finite values")
        return None if norm == 0.0 else q / norm

    def _ef(self, k: int) -> int | None:
        return None if 2 * k <= self.ef_search else min(EF_SEARCH_MAX, 2 * k)

    def search(self, query: np.ndarray, k: int, allowed: set[str] | None = None) -> list[tuple[str, float]]:
        q = self._query(query)
        if q is None or k <= 0:
            return []
        if allowed is not None:
            if not allowed:
                return []
            rows = self._rows(
                f"SELECT id, 1 - (embedding <=> %s) AS s FROM {self.table} WHERE id = ANY(%s) "
                "ORDER BY s DESC NULLS LAST, id LIMIT %s", (q, list(allowed), k))
        else:
            rows = self._rows(
                f"SELECT id, 1 - (embedding <=> %s) FROM {self.table} ORDER BY embedding <=> %s LIMIT %s",
                (q, q, k), ef_search=self._ef(k))
        return [(r[0], _score(r[1])) for r in rows]

    def search_many(self, queries: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        Q = np.asarray(queries, dtype=np.float32)
        if Q.ndim == 1:
            Q = Q.reshape(1, -1)
        if Q.ndim != 2 or Q.shape[1] != self.dim:
            raise ValueError(f"query has dimension {Q.shape[-1] if Q.ndim else 0} but the index holds {self.dim}-d vectors")
        out: list[list[tuple[str, float]]] = [[] for _ in range(Q.shape[0])]
        norms = np.linalg.norm(Q, axis=1)
        if not np.isfinite(norms).all():
            raise ValueError("queries contain non-finite values")
        live = [i for i in range(Q.shape[0]) if norms[i] > 0]
        if k <= 0 or not live:
            return out
        vectors = [Q[i] / norms[i] for i in live]
        if len(live) >= EXACT_MANY_MIN_QUERIES and self._indexed is not None and not self._indexed():
            for i, hits in zip(live, self._exact_many(np.stack(vectors), k), strict=True):
                out[i] = hits
            return out
        rows = self._rows(
            f"""SELECT q.i, v.id, 1 - v.d FROM unnest(%s::vector[]) WITH ORDINALITY AS q(vec, i)
                CROSS JOIN LATERAL (SELECT id, embedding <=> q.vec AS d FROM {self.table}
                                    ORDER BY embedding <=> q.vec LIMIT %s) v
                ORDER BY q.i, v.d""",
            (vectors, k), ef_search=self._ef(k))
        for i, id_, s in rows:
            out[live[int(i) - 1]].append((id_, _score(s)))
        return out

    def _exact_many(self, queries: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """Exact top-``k`` of many unit queries: the namespace read once (each row once, a page of
        ``EXACT_PAGE`` rows at a time, in id order: memory stays bounded) and scored by matrix
        products; best first, equal scores by id."""
        n = len(queries)
        best_s = np.empty((n, 0), dtype=np.float32)
        best_r = np.empty((n, 0), dtype=np.int64)  # positions in ``ids`` (id order: ties go to the smaller)
        ids: list[str] = []
        last = None
        while True:
            after, params = ("WHERE id > %s ", (last, EXACT_PAGE)) if last is not None else ("", (EXACT_PAGE,))
            rows = self._rows(f"SELECT id, embedding FROM {self.table} {after}ORDER BY id LIMIT %s", params, binary=True)
            if not rows:
                break
            matrix = np.stack([np.asarray(r[1], dtype=np.float32) for r in rows])
            scores = queries @ matrix.T
            top = (np.argpartition(-scores, k - 1, axis=1)[:, :k] if k < len(rows)
                   else np.broadcast_to(np.arange(len(rows)), (n, len(rows))))
            all_s = np.concatenate([best_s, np.take_along_axis(scores, top, 1)], axis=1)
            all_r = np.concatenate([best_r, top + len(ids)], axis=1)
            order = np.lexsort((all_r, -all_s))[:, :k]
            best_s, best_r = np.take_along_axis(all_s, order, 1), np.take_along_axis(all_r, order, 1)
            ids += [r[0] for r in rows]
            last = rows[-1][0]
            if len(rows) < EXACT_PAGE:
                break
        return [[(ids[r], _score(v)) for r, v in zip(rs, vs, strict=True)] for rs, vs in zip(best_r, best_s, strict=True)]

    def above(self, query: np.ndarray, threshold: float, limit: int | None = None) -> list[tuple[str, float]]:
        q = self._query(query)
        if q is None or (limit is not None and limit <= 0):
            return []
        if limit is None:
            rows = self._rows(
                f"SELECT id, s FROM (SELECT id, 1 - (embedding <=> %s) AS s FROM {self.table}) t "
                "WHERE s >= %s ORDER BY s DESC, id", (q, float(threshold)))
        else:
            rows = self._rows(
                f"SELECT id, 1 - (embedding <=> %s) FROM {self.table} ORDER BY embedding <=> %s LIMIT %s",
                (q, q, limit), ef_search=self._ef(limit))
        return [(r[0], s) for r in rows if (s := _score(r[1])) >= threshold]

    def similarities(self, ids: Sequence[str], probes: np.ndarray) -> dict[str, float]:
        """Scored in the database: only one number per id comes back, not its vector."""
        wanted = list(dict.fromkeys(ids))
        rows_ = np.atleast_2d(np.asarray(probes, dtype=np.float32))
        if not wanted or not len(rows_):
            return {}
        rows = self._rows(
            f"SELECT v.id, max(1 - (v.embedding <=> p.vec)) FROM {self.table} v "
            "CROSS JOIN unnest(%s::vector[]) AS p(vec) WHERE v.id = ANY(%s) GROUP BY v.id",
            (list(rows_), wanted))
        return {r[0]: _score(r[1]) for r in rows}

    def get(self, id_: str) -> np.ndarray | None:
        rows = self._rows(f"SELECT embedding FROM {self.table} WHERE id = %s", (id_,))
        return rows[0][0] if rows else None

    def __len__(self) -> int:
        return int(self._rows(f"SELECT count(*) FROM {self.table}")[0][0])

    def __bool__(self) -> bool:
        """Whether the table holds a vector: one row looked at, where ``len`` counts (scans) them all."""
        return bool(self._rows(f"SELECT EXISTS (SELECT 1 FROM {self.table})")[0][0])

    def __contains__(self, id_: object) -> bool:
        return isinstance(id_, str) and bool(self._rows(f"SELECT 1 FROM {self.table} WHERE id = %s", (id_,)))
