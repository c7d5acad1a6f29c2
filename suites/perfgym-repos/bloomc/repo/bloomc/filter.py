"""BloomFilter: m bits, k probes per item by double hashing (h1 + i * h2) mod m."""

from __future__ import annotations

import math
from collections.abc import Iterable

from bloomc import _core

Item = str | bytes


def optimal_parameters(capacity: int, error_rate: float) -> tuple[int, int]:
    """(bits, probes) for `capacity` items at false-positive rate `error_rate`."""
    if capacity < 1:
        raise ValueError("capacity must be at least 1")
    if not 0 < error_rate < 1:
        raise ValueError("error_rate must be in (0, 1)")
    bits = math.ceil(-capacity * math.log(error_rate) / math.log(2) ** 2)
    probes = max(1, round(bits / capacity * math.log(2)))
    return bits, probes


def _as_bytes(item: Item) -> bytes:
    if isinstance(item, str):
        return item.encode("utf-8")
    if isinstance(item, bytes):
        return item
    raise TypeError(f"BloomFilter items are str or bytes, not {type(item).__name__}")


class BloomFilter:
    """A fixed-size Bloom filter; `bits` is rounded up to whole bytes."""

    def __init__(self, bits: int, probes: int) -> None:
        if bits < 8 or probes < 1:
            raise ValueError("a filter needs at least 8 bits and 1 probe")
        self.bits = (bits + 7) // 8 * 8
        self.probes = probes
        self._buf = bytearray(self.bits // 8)
        self.count = 0

    @classmethod
    def for_capacity(cls, capacity: int, error_rate: float = 0.01) -> BloomFilter:
        return cls(*optimal_parameters(capacity, error_rate))

    def _positions(self, data: bytes) -> list[int]:
        h1 = _core.hash64(data, 0)
        h2 = _core.hash64(data, 1) | 1
        return [(h1 + i * h2) % self.bits for i in range(self.probes)]

    def add(self, item: Item) -> None:
        for pos in self._positions(_as_bytes(item)):
            _core.set_bit(self._buf, pos)
        self.count += 1

    def update(self, items: Iterable[Item]) -> None:
        for item in items:
            self.add(item)

    def __contains__(self, item: Item) -> bool:
        return all(_core.test_bit(self._buf, pos) for pos in self._positions(_as_bytes(item)))

    def query(self, items: Iterable[Item]) -> list[bool]:
        return [item in self for item in items]

    def union(self, other: BloomFilter) -> BloomFilter:
        if (self.bits, self.probes) != (other.bits, other.probes):
            raise ValueError("only filters of the same size and probes can be joined")
        out = BloomFilter(self.bits, self.probes)
        out._buf = bytearray(a | b for a, b in zip(self._buf, other._buf))
        out.count = self.count + other.count
        return out

    def fill_ratio(self) -> float:
        return _core.popcount(bytes(self._buf)) / self.bits

    def estimated_error(self) -> float:
        return self.fill_ratio() ** self.probes

    def to_bytes(self) -> bytes:
        return bytes(self._buf)

    def __len__(self) -> int:
        return self.count
