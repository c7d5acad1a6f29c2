"""Workload generator for py-lis-dp: a noisy upward trend, so the longest run is long but not trivial."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    # Noise about n/60 steps wide keeps the answer near n/4: long enough that per-element work
    # proportional to the current answer shows, with many equal values for the strictness rule.
    noise = max(1, size // 60)
    values = [i + rng.randrange(noise) - 50_000 for i in range(size)]
    return f"{size}\n{' '.join(map(str, values))}\n"
