"""Workloads for c-substring-count: a near-periodic text (tandem repeats with rare mutations)."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    period = 7
    unit = "".join(rng.choice("ab") for _ in range(period - 1)) + "c"
    chars = list((unit * (size // period + 1))[:size])
    # Rare point mutations break the repeats; between them every aligned shift matches on.
    for _ in range(size // 5000):
        chars[rng.randrange(size)] = "d"
    m = 3000
    start = rng.randrange(period)
    pattern = (unit * (m // period + 2))[start : start + m]
    return f"{size} {m}\n{''.join(chars)}\n{pattern}\n"
