"""Workload generator for py-substring-count: a DNA-like text and patterns cut from it."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    text = "".join(rng.choices("acgt", k=size))
    patterns = []
    # Short patterns occur thousands of times; several of them overlap themselves ("aa",
    # "cac"), so counting must not skip past a match.
    for m in (1, 2, 2, 3, 3, 4, 5, 6, 8, 12):
        start = rng.randrange(size - m)
        patterns.append(text[start : start + m])
    patterns.append("aa")
    patterns.append("".join(rng.choices("acgt", k=20)))
    return f"{text}\n{len(patterns)}\n" + "\n".join(patterns) + "\n"
