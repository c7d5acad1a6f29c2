"""Workloads for rs-knapsack: `size` items and a capacity of about a third of their total weight."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    items = []
    for _ in range(size):
        w = rng.randrange(1, 1000)
        # Values correlated with weights make the choice hard (no obvious greedy answer).
        items.append((w, w * 1000 + rng.randrange(-5000, 5000) + 10_000))
    cap = sum(w for w, _ in items) // 3
    return f"{size} {cap}\n" + "\n".join(f"{w} {v}" for w, v in items) + "\n"
