"""A compact map from strings (paper or document ids) to small integers, for what a run must
remember about every record it reads — a CSV's first row of each paper id, the first input file of
each document — without one Python string and dict entry per record (~100–200 B each).

Each key is kept as an 8-byte digest (BLAKE2b) in an open-addressing table of two numpy arrays
(digests, and 4-byte values: a row number or a file's index), at most three quarters full: 16 B
per key at the table's fullest, 32 B just after it doubles — 12 bytes a slot whatever the id's length. Two different ids share a digest with probability ~n²/2⁶⁵ (about 3·10⁻⁸ for
a million ids): the cost of such a collision is a wrong duplicate warning, never lost data.
"""

from __future__ import annotations

import hashlib

import numpy as np

EMPTY = np.uint64(0)  # a free slot (a key whose digest is 0 is stored as 1)
MIN_SLOTS = 1024


def digest(key: str) -> int:
    value = int.from_bytes(hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")
    return value or 1


class DigestMap:
    """``key -> int`` (0 to 2³¹-1) for many string keys, kept as digests (see the module docstring)."""

    def __init__(self, slots: int = MIN_SLOTS):
        size = MIN_SLOTS
        while size < slots:
            size *= 2
        self._keys = np.zeros(size, dtype=np.uint64)
        self._values = np.zeros(size, dtype=np.int32)
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def nbytes(self) -> int:
        """Bytes held by the table (what it costs, whatever the keys' lengths)."""
        return int(self._keys.nbytes + self._values.nbytes)

    def _slot(self, key: int) -> int:
        """The slot holding ``key``, or the free slot where it would go (linear probing)."""
        keys, mask = self._keys, len(self._keys) - 1
        i = key & mask  # a digest's bits are uniform already
        while True:
            found = int(keys[i])
            if found == key or found == 0:
                return i
            i = (i + 1) & mask

    def get(self, key: str) -> int | None:
        d = digest(key)
        i = self._slot(d)
        return int(self._values[i]) if int(self._keys[i]) == d else None

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def setdefault(self, key: str, value: int) -> int:
        """The value stored for ``key``; ``value`` stored (and returned) when there is none."""
        d = digest(key)
        i = self._slot(d)
        if int(self._keys[i]) == d:
            return int(self._values[i])
        self._keys[i], self._values[i] = d, value
        self._count += 1
        if 4 * self._count > 3 * len(self._keys):
            self._grow()
        return value

    def _grow(self) -> None:
        keys, values = self._keys, self._values
        self._keys = np.zeros(2 * len(keys), dtype=np.uint64)
        self._values = np.zeros(2 * len(keys), dtype=np.int32)
        for i in np.flatnonzero(keys):
            j = self._slot(int(keys[i]))
            self._keys[j], self._values[j] = keys[i], values[i]
