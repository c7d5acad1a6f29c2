"""Workloads for c-hash-join: two tables of `size` rows over a shared key space with some hot keys."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    keys = [rng.randrange(10**9) for _ in range(size)]
    hot = keys[:8]
    out = [f"{size} {size}"]
    for _ in range(2 * size):
        # Mostly keys from a shared domain (about half of them match), a few hot duplicates.
        if rng.random() < 0.01:
            key = rng.choice(hot)
        elif rng.random() < 0.5:
            key = rng.choice(keys)
        else:
            key = rng.randrange(10**9)
        out.append(f"{key} {rng.randrange(10001)}")
    return "\n".join(out) + "\n"
