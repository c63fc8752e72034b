"""digests.DigestMap: what a run remembers about every record it reads, in a few bytes per record."""

from scholargraph.digests import DigestMap


def test_keys_keep_their_first_value_and_the_table_grows_without_losing_any():
    seen = DigestMap()
    for i in range(5000):  # several doublings of the 1024-slot table
        assert seen.setdefault(f"paper-{i}", i) == i
    assert len(seen) == 5000
    assert seen.setdefault("paper-17", 99) == 17  # the first value stays
    assert seen.get("paper-4999") == 4999 and "paper-0" in seen
    assert seen.get("paper-5000") is None and "nope" not in seen


def test_the_table_costs_bytes_per_key_whatever_the_keys_length():
    seen = DigestMap()
    for i in range(3000):
        seen.setdefault(f"{'x' * 200}-{i}", i)
    assert seen.nbytes() <= 4096 * 12  # 12 bytes a slot (digest and value), at most 3/4 full before it doubles
