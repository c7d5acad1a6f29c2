"""Workloads for c-rect-sums: a size x size grid of small signed values and random rectangles."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    queries = size * 5
    out = [f"{size} {size} {queries}"]
    values = range(-999, 1000)
    for _ in range(size):
        out.append(" ".join(map(str, rng.choices(values, k=size))))
    for _ in range(queries):
        r1, r2 = sorted((rng.randint(1, size), rng.randint(1, size)))
        c1, c2 = sorted((rng.randint(1, size), rng.randint(1, size)))
        out.append(f"{r1} {c1} {r2} {c2}")
    return "\n".join(out) + "\n"
