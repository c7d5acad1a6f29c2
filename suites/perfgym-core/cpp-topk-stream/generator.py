"""Workloads for cpp-topk-stream: `size` stream items, roughly one query per size/150 values."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    k = 1000
    every = max(1, size // 150)
    items = []
    for i in range(size):
        if i % every == every - 1:
            items.append("?")
        else:
            # Slowly rising values: later values keep displacing part of the top K.
            items.append(str(rng.randrange(1_000_000) // 2 + i * 500_000 // size))
    return f"{size} {k}\n" + "\n".join(items) + "\n"
