"""Workloads for rs-numeric-sort: `size` signed integers of mixed magnitudes, with duplicates."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    # Distinct values of mixed lengths and both signs; drawing `size` of them with replacement
    # is fast and leaves a realistic share of duplicates.
    distinct = max(1, size // 4)
    pool = [str(rng.getrandbits(62) - (1 << 61)) for _ in range(distinct * 3 // 4)]
    pool += [str(rng.randrange(-(10**9), 10**9)) for _ in range(distinct // 8)]
    pool += [str(rng.randrange(-1000, 1000)) for _ in range(distinct // 8 + 1)]
    return f"{size}\n" + "\n".join(rng.choices(pool, k=size)) + "\n"
