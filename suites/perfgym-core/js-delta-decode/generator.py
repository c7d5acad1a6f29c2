"""Workload generator for js-delta-decode: a delta-encoded random walk and n range queries."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    n = q = size
    deltas = [rng.randrange(-500, 501)] + rng.choices(range(-100, 101), k=n - 1)
    lo = rng.choices(range(1, n + 1), k=q)
    hi = rng.choices(range(1, n + 1), k=q)
    queries = [f"{min(a, b)} {max(a, b)}" for a, b in zip(lo, hi, strict=True)]
    return f"{n} {q}\n{' '.join(map(str, deltas))}\n" + "\n".join(queries) + "\n"
