"""Hidden: bytes keys of mixed length, a looser filter, two filters joined."""

import random

from bloomc import BloomFilter


def setup():
    rng = random.Random(5)
    keys = [rng.randbytes(rng.randint(0, 40)) for _ in range(25_000)]
    return keys[:12_500], keys[12_500:]


def experiment(state):
    left, right = state
    a = BloomFilter.for_capacity(30_000, 0.05)
    b = BloomFilter.for_capacity(30_000, 0.05)
    a.update(left)
    b.update(right)
    both = a.union(b)
    return sum(both.query(left + right)), round(both.fill_ratio(), 12), both.to_bytes()
