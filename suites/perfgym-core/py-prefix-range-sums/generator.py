"""Workload generator for py-prefix-range-sums: n values and n random inclusive ranges."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    n = q = size
    values = rng.choices(range(-1_000_000, 1_000_001), k=n)
    lo = rng.choices(range(1, n + 1), k=q)
    hi = rng.choices(range(1, n + 1), k=q)
    queries = [f"{min(a, b)} {max(a, b)}" for a, b in zip(lo, hi, strict=True)]
    return f"{n} {q}\n{' '.join(map(str, values))}\n" + "\n".join(queries) + "\n"
