"""Workloads for cpp-shortest-paths: a sparse directed road-like graph with `size` nodes."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    edges = []
    # A ring of local roads keeps most nodes reachable; random shortcuts add long-range edges.
    for u in range(1, size + 1):
        for step in (1, 2, 3):
            v = (u - 1 + step) % size + 1
            edges.append(f"{u} {v} {rng.randrange(1, 1000)}")
        for _ in range(2):
            edges.append(f"{u} {rng.randrange(1, size + 1)} {rng.randrange(1000, 1_000_000)}")
    # Shuffled so no solution can rely on edges arriving grouped by source node.
    rng.shuffle(edges)
    return f"{size} {len(edges)}\n" + "\n".join(edges) + "\n"
