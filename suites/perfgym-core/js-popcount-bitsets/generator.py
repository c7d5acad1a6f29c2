"""Workload generator for js-popcount-bitsets: m random bitsets of L bits and q pair queries."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    m, bits = 128, 2048
    # Densities vary per set, so intersection sizes spread out instead of all sitting at L/4.
    sets = []
    for _ in range(m):
        density = rng.choice((0.05, 0.25, 0.5, 0.75, 0.95))
        value = 0
        for _ in range(int(bits * density)):
            value |= 1 << rng.randrange(bits)
        sets.append(format(value, f"0{bits // 4}x"))
    a = rng.choices(range(m), k=size)
    b = rng.choices(range(m), k=size)
    queries = [f"{i} {j}" for i, j in zip(a, b, strict=True)]
    return f"{m} {bits} {size}\n" + "\n".join(sets) + "\n" + "\n".join(queries) + "\n"
