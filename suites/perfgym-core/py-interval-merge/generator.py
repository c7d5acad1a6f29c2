"""Workload generator for py-interval-merge: intervals scattered over a line ~250n long."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    extent = min(10_000_000, 250 * size)
    # Lengths average 250 against 250 units per interval: about 63% of the line is covered, in
    # many separate pieces, so both merging and gaps matter.
    lengths = rng.choices(range(1, 500), k=size)
    starts = rng.choices(range(extent), k=size)
    lines = [f"{s} {min(s + w, extent)}" for s, w in zip(starts, lengths, strict=True)]
    return f"{size}\n" + "".join(line + "\n" for line in lines)
