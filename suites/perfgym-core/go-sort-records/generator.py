"""Workload generator for go-sort-records: n people with scores drawn from a narrow range."""

import random
from itertools import accumulate


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    lengths = rng.choices(range(3, 11), k=size)
    # A small alphabet and short names make equal names common, so the age tie-break matters.
    letters = "".join(rng.choices("abcdefgh", k=sum(lengths)))
    cuts = [0, *accumulate(lengths)]
    names = [letters[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]
    scores = rng.choices(range(1000), k=size)
    ages = rng.choices(range(18, 91), k=size)
    rows = [f"{n} {s} {a}" for n, s, a in zip(names, scores, ages, strict=True)]
    return f"{size}\n" + "\n".join(rows) + "\n"
