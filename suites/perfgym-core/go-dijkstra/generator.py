"""Workload generator for go-dijkstra: a random sparse digraph with n nodes and 4n weighted edges."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(2, size)
    m = 4 * n
    # Sources skip the last n/50 nodes, so those have no outgoing edges, and targets skip
    # nodes 2..n/100 + 1, so those are unreachable from node 1: both cases are exercised.
    src = rng.choices(range(1, n - n // 50 + 1), k=m)
    dst = rng.choices(range(n // 100 + 2, n + 1), k=m)
    w = rng.choices(range(1, 1_000_001), k=m)
    lines = [f"{a} {b} {c}" for a, b, c in zip(src, dst, w, strict=True)]
    return f"{n} {m}\n" + "\n".join(lines) + "\n"
