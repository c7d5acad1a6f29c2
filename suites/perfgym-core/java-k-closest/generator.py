"""Workloads for java-k-closest: `size` integer points, many at tied distances, K = 10."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    # Coordinates on a coarse lattice make equal distances (ties) common.
    coords = [rng.randrange(-1000, 1001) * 1000 for _ in range(2 * size)]
    lines = [f"{size} 10"]
    lines.extend(f"{coords[2 * i]} {coords[2 * i + 1]}" for i in range(size))
    return "\n".join(lines) + "\n"
