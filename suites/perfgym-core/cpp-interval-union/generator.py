"""Workloads for cpp-interval-union: `size` short intervals scattered over a wide range."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    span = 10**9
    out = [str(size)]
    for _ in range(size):
        # Mostly short bookings, a few long ones: many separate blocks, some deep overlaps.
        length = rng.randrange(1, 20_000) if rng.random() < 0.98 else rng.randrange(1, 5_000_000)
        start = rng.randrange(span - length)
        out.append(f"{start} {start + length}")
    return "\n".join(out) + "\n"
