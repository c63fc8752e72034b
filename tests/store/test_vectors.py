"""Behaviour tests for the exact in-process vector index."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from scholargraph.store.vectors import ExactVectorIndex

DIM = 16


def _random(n: int, dim: int = DIM, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)


def _normed(v: np.ndarray) -> np.ndarray:
    v = v.astype(np.float64)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _brute(ids: list[str], vecs: np.ndarray, q: np.ndarray, k: int) -> list[tuple[str, float]]:
    s = _normed(vecs) @ _normed(q)
    order = np.argsort(-s, kind="stable")[:k]
    return [(ids[i], float(s[i])) for i in order]


def _build(n: int, seed: int = 0) -> tuple[ExactVectorIndex, list[str], np.ndarray]:
    ids = [f"v{i}" for i in range(n)]
    vecs = _random(n, seed=seed)
    index = ExactVectorIndex(DIM)
    index.add(ids, vecs)
    return index, ids, vecs


def _assert_same(got: list[tuple[str, float]], want: list[tuple[str, float]]) -> None:
    assert [i for i, _ in got] == [i for i, _ in want]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=1e-5)


def test_top_k_matches_brute_force() -> None:
    index, ids, vecs = _build(500)
    for q in _random(20, seed=1):
        for k in (1, 5, 10, 37):
            _assert_same(index.search(q, k), _brute(ids, vecs, q, k))


def test_results_are_best_first_and_typed() -> None:
    index, _, _ = _build(200)
    res = index.search(_random(1, seed=2)[0], 10)
    scores = [s for _, s in res]
    assert scores == sorted(scores, reverse=True)
    assert all(isinstance(i, str) and isinstance(s, float) for i, s in res)


def test_incremental_adds_grow_capacity() -> None:
    index = ExactVectorIndex(DIM)
    vecs = _random(1000, seed=3)
    ids = [f"x{i}" for i in range(1000)]
    for start in range(0, 1000, 7):
        index.add(ids[start : start + 7], vecs[start : start + 7])
    assert len(index) == 1000
    q = _random(1, seed=4)[0]
    _assert_same(index.search(q, 10), _brute(ids, vecs, q, 10))


def test_upsert_replaces_vector() -> None:
    index, ids, vecs = _build(50)
    new = -vecs[3]
    index.add(["v3"], new[None, :])
    assert len(index) == 50
    np.testing.assert_allclose(index.get("v3"), _normed(new), atol=1e-6)
    top = index.search(new, 1)
    assert top[0][0] == "v3"
    assert top[0][1] == pytest.approx(1.0, abs=1e-5)
    # the old direction no longer finds v3 on top
    assert index.search(vecs[3], 1)[0][0] != "v3"


def test_duplicate_ids_in_one_batch_keep_last() -> None:
    index = ExactVectorIndex(DIM)
    a, b = _random(2, seed=5)
    index.add(["same", "same"], np.stack([a, b]))
    assert len(index) == 1
    np.testing.assert_allclose(index.get("same"), _normed(b), atol=1e-6)


def test_remove_then_search_never_returns_removed() -> None:
    index, ids, vecs = _build(300)
    removed = set(ids[::3]) | {"not-there"}
    index.remove(removed)
    assert len(index) == 300 - 100
    assert "v0" not in index and "v1" in index
    assert index.get("v0") is None
    keep = [i for i, id_ in enumerate(ids) if id_ not in removed]
    kept_ids = [ids[i] for i in keep]
    for q in _random(10, seed=6):
        res = index.search(q, 300)
        assert not removed & {i for i, _ in res}
        _assert_same(res, _brute(kept_ids, vecs[keep], q, 300))
    # surviving vectors moved by swap-remove are still intact
    for i in keep:
        np.testing.assert_allclose(index.get(ids[i]), _normed(vecs[i]), atol=1e-6)


def test_remove_everything_then_reuse() -> None:
    index, ids, _ = _build(200)
    index.remove(ids)
    assert len(index) == 0
    assert index.search(_random(1)[0], 5) == []
    index.add(["a"], _random(1, seed=7))
    assert [i for i, _ in index.search(_random(1, seed=7)[0], 5)] == ["a"]


@pytest.mark.parametrize("n_allowed", [3, 100, 400])  # small (gather path) and large (mask path)
def test_allowed_filter(n_allowed: int) -> None:
    index, ids, vecs = _build(1000)
    rng = np.random.default_rng(8)
    pick = sorted(rng.choice(1000, size=n_allowed, replace=False).tolist())
    allowed = {ids[i] for i in pick} | {"unknown-id"}
    q = _random(1, seed=9)[0]
    got = index.search(q, 10, allowed=allowed)
    assert {i for i, _ in got} <= allowed
    _assert_same(got, _brute([ids[i] for i in pick], vecs[pick], q, 10))


def test_allowed_empty_or_unknown() -> None:
    index, _, _ = _build(10)
    q = _random(1, seed=10)[0]
    assert index.search(q, 5, allowed=set()) == []
    assert index.search(q, 5, allowed={"nope"}) == []


def test_above_threshold() -> None:
    index, ids, vecs = _build(500)
    q = vecs[0] + 0.1 * _random(1, seed=11)[0]
    s = _normed(vecs) @ _normed(q)
    thr = float(np.sort(s)[-25])
    want = [ids[i] for i in np.argsort(-s) if s[i] >= thr]
    got = index.above(q, thr)
    assert [i for i, _ in got] == want
    assert all(score >= thr - 1e-6 for _, score in got)
    assert [i for i, _ in index.above(q, thr, limit=5)] == want[:5]
    assert index.above(q, 1.5) == []
    assert len(index.above(q, -1.0)) == 500


def test_k_larger_than_n() -> None:
    index, ids, vecs = _build(7)
    q = _random(1, seed=12)[0]
    res = index.search(q, 100)
    assert len(res) == 7
    _assert_same(res, _brute(ids, vecs, q, 7))
    assert index.search(q, 0) == []


def test_empty_index() -> None:
    index = ExactVectorIndex(DIM)
    q = _random(1)[0]
    assert len(index) == 0
    assert index.search(q, 10) == []
    assert index.search(q, 10, allowed={"a"}) == []
    assert index.above(q, 0.0) == []
    assert index.search_many(_random(3), 10) == [[], [], []]
    assert index.get("a") is None and "a" not in index


def test_dimension_mismatch_raises() -> None:
    index = ExactVectorIndex(384)
    index.add(["a"], np.ones((1, 384), dtype=np.float32))
    with pytest.raises(ValueError, match="query has dimension 768 but the index holds 384-d vectors"):
        index.search(np.ones(768, dtype=np.float32), 5)
    with pytest.raises(ValueError, match="dimension 768"):
        index.above(np.ones(768, dtype=np.float32), 0.5)
    with pytest.raises(ValueError, match="dimension 768"):
        index.search_many(np.ones((2, 768), dtype=np.float32), 5)
    with pytest.raises(ValueError):
        index.add(["b"], np.ones((1, 768), dtype=np.float32))
    with pytest.raises(ValueError):
        index.add(["b", "c"], np.ones((1, 384), dtype=np.float32))


def test_zero_query_returns_empty() -> None:
    index, _, _ = _build(20)
    assert index.search(np.zeros(DIM, dtype=np.float32), 5) == []
    assert index.above(np.zeros(DIM, dtype=np.float32), -1.0) == []


def test_normalisation_identical_direction_is_one() -> None:
    index = ExactVectorIndex(4)
    index.add(["a", "b"], np.array([[3.0, 0, 0, 4.0], [0, 1.0, 0, 0]], dtype=np.float32))
    np.testing.assert_allclose(np.linalg.norm(index.get("a")), 1.0, atol=1e-6)
    res = index.search(np.array([30.0, 0, 0, 40.0]), 2)
    assert res[0][0] == "a" and res[0][1] == pytest.approx(1.0, abs=1e-6)
    assert res[1][0] == "b" and res[1][1] == pytest.approx(0.0, abs=1e-6)
    assert index.search(np.array([0, -2.0, 0, 0]), 1, allowed={"b"}) == [("b", pytest.approx(-1.0, abs=1e-6))]


def test_search_many_matches_single(monkeypatch: pytest.MonkeyPatch) -> None:
    import scholargraph.store.vectors as mod

    monkeypatch.setattr(mod, "_MANY_BLOCK_ELEMS", 64)  # force many small row blocks
    index, ids, vecs = _build(700)
    queries = _random(9, seed=13)
    queries[4] = 0.0  # zero query row -> []
    many = index.search_many(queries, 10)
    assert len(many) == 9 and many[4] == []
    for q, res in zip(queries, many, strict=True):
        if np.any(q):
            _assert_same(res, _brute(ids, vecs, q, 10))
    assert [len(r) for r in index.search_many(queries[:2], 5000)] == [700, 700]


def test_get_returns_copy() -> None:
    index, _, _ = _build(5)
    v = index.get("v1")
    assert v is not None
    v[:] = 0
    assert np.linalg.norm(index.get("v1")) == pytest.approx(1.0, abs=1e-6)


def test_concurrent_readers_and_writer() -> None:
    index, ids, _ = _build(2000)
    stable = set(ids[:1000])
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            for r in range(30):
                extra = [f"tmp{r}-{i}" for i in range(50)]
                index.add(extra, _random(50, seed=100 + r))
                index.remove(extra)
        except BaseException as e:  # pragma: no cover - surfaced below
            errors.append(e)

    def reader(seed: int) -> None:
        try:
            for q in _random(30, seed=seed):
                res = index.search(q, 5, allowed=stable)
                assert len(res) == 5 and {i for i, _ in res} <= stable
        except BaseException as e:  # pragma: no cover - surfaced below
            errors.append(e)

    threads = [threading.Thread(target=writer)] + [threading.Thread(target=reader, args=(s,)) for s in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(index) == 2000


def test_mixed_upsert_and_insert_in_one_call() -> None:
    index, ids, vecs = _build(30)
    fresh = _random(3, seed=14)
    index.add(["new-a", "v5", "new-b"], fresh)
    assert len(index) == 32
    for id_, v in zip(["new-a", "v5", "new-b"], fresh, strict=True):
        np.testing.assert_allclose(index.get(id_), _normed(v), atol=1e-6)
        assert index.search(v, 1)[0][0] == id_


def test_mass_removal_shrinks_and_stays_correct() -> None:
    index, ids, vecs = _build(2000)
    index.remove(ids[100:])
    assert len(index) == 100
    q = _random(1, seed=15)[0]
    _assert_same(index.search(q, 10), _brute(ids[:100], vecs[:100], q, 10))
    index.add(["late"], vecs[1500][None, :])
    assert index.search(vecs[1500], 1)[0][0] == "late"


def test_the_exact_index_scores_named_vectors_against_several_probes():
    index = ExactVectorIndex(3)
    index.add(["a", "b", "c"], np.array([[1, 0, 0], [0, 2, 0], [1, 1, 0]], dtype=np.float32))
    probes = np.array([[1, 0, 0], [0, 1, 0]], dtype=np.float32)
    got = index.similarities(["c", "a", "nowhere", "a"], probes)
    assert list(got) == ["c", "a"] and got["a"] == 1.0 and abs(got["c"] - 2 ** -0.5) < 1e-6
    assert index.similarities([], probes) == {}
