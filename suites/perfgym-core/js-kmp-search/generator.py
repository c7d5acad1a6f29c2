"""Workload generator for js-kmp-search: long runs of 'a' broken by single letters, and run-shaped patterns."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    # Runs of 40..200 'a' each closed by 'b' or 'c': a text where a naive matcher compares
    # many characters before each mismatch.
    runs = rng.choices(range(40, 201), k=size // 120 + 1)
    ends = rng.choices("bc", weights=(4, 1), k=len(runs))
    text = "".join("a" * r + e for r, e in zip(runs, ends, strict=True))[:size]
    patterns = []
    for k in (30, 60, 90, 120):
        patterns.append("a" * k + "b")
    patterns.append("b" + "a" * 30)
    # Patterns of 'a' alone match at most positions of a long run: overlapping matches by the
    # hundred thousand.
    patterns.append("a" * 50)
    patterns.append("a" * 20)
    patterns.append("c" + "a" * 25 + "b")
    return f"{text}\n{len(patterns)}\n" + "\n".join(patterns) + "\n"
