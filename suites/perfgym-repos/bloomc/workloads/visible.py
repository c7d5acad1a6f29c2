"""Fill a filter with 25000 keys, then query 25000 keys (half present)."""

from bloomc import BloomFilter


def setup():
    keys = [f"user:{i:07d}" for i in range(25_000)]
    probes = [f"user:{i:07d}" for i in range(12_500, 37_500)]
    return keys, probes


def experiment(state):
    keys, probes = state
    bf = BloomFilter.for_capacity(len(keys), 0.01)
    bf.update(keys)
    hits = bf.query(probes)
    return sum(hits), hits[::1000], bf.to_bytes()
