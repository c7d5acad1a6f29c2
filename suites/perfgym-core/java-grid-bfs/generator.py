"""Workloads for java-grid-bfs: a size x size maze-like grid, S and T in opposite corners."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    rows = []
    for r in range(size):
        if r % 10 == 5:
            # A long wall with a few doors, so shortest paths have to wind back and forth.
            doors = {rng.randrange(size) for _ in range(6)}
            row = ["." if c in doors else "#" for c in range(size)]
            for c in doors:
                rows[r - 1][c] = "."  # keep each door usable from the side above
        else:
            # Scattered walls: about 1 cell in 8, well below the percolation threshold.
            bits = rng.getrandbits(3 * size)
            row = ["#" if (bits >> (3 * c)) & 7 == 0 else "." for c in range(size)]
        rows.append(row)
    for r in range(5, size - 1, 10):
        for c, ch in enumerate(rows[r]):
            if ch == ".":
                rows[r + 1][c] = "."  # ... and from the side below
    # Clear the corners so S and T are not sealed in by chance.
    for r in range(3):
        for c in range(3):
            rows[r][c] = "."
            rows[size - 1 - r][size - 1 - c] = "."
    rows[0][0] = "S"
    rows[size - 1][size - 1] = "T"
    return f"{size} {size}\n" + "\n".join("".join(row) for row in rows) + "\n"
