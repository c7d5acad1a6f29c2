"""Workload generator for py-bfs-grid: a square grid with ~30% random walls, S central, T in a corner."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    h = w = max(2, size)
    # 70% open cells is above the site-percolation threshold (~59%), so most open cells form
    # one large component and the start usually reaches the target by a winding path.
    cells = rng.choices(".#", weights=(7, 3), k=h * w)
    # S near the centre (every cell is then at most about (h + w) / 2 steps away), T near the
    # bottom-right corner; a cleared 5x5 patch around each keeps them from being walled in.
    sr, sc = h // 2 - rng.randrange(h // 8 + 1), w // 2 - rng.randrange(w // 8 + 1)
    tr, tc = h - 1 - rng.randrange(min(h, 5)), w - 1 - rng.randrange(w // 4 + 1)
    for r0, c0 in ((sr, sc), (tr, tc)):
        for r in range(max(0, r0 - 2), min(h, r0 + 3)):
            for c in range(max(0, c0 - 2), min(w, c0 + 3)):
                cells[r * w + c] = "."
    cells[sr * w + sc] = "S"
    cells[tr * w + tc] = "T"
    rows = ["".join(cells[r * w : (r + 1) * w]) for r in range(h)]
    return f"{h} {w}\n" + "\n".join(rows) + "\n"
