"""Workloads for cpp-lcs-length: two related DNA-like strings of length about `size`."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    a = rng.choices("acgt", k=size)
    # b is a mutated copy of a (substitutions, insertions, deletions), so the LCS is long.
    b = []
    for ch in a:
        r = rng.random()
        if r < 0.08:
            b.append(rng.choice("acgt"))
        elif r < 0.12:
            b.extend((ch, rng.choice("acgt")))
        elif r >= 0.16:
            b.append(ch)
    return f"{''.join(a)}\n{''.join(b)}\n"
