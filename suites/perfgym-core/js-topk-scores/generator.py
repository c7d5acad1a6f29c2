"""Workload generator for js-topk-scores: n (id, score) rows with many tied scores."""

import random

PRIME = 999_999_937  # largest prime below 10^9: i -> (a*i + b) mod PRIME is a bijection


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    a = rng.randrange(1, PRIME)
    b = rng.randrange(PRIME)
    # Distinct pseudo-random ids without the cost of sampling: an affine map modulo a prime;
    # +1 keeps them >= 1.
    ids = [(a * i + b) % PRIME + 1 for i in range(size)]
    # Scores from a range about the size of n: the top ranks are often shared, so the id
    # tie-break decides the order.
    scores = rng.choices(range(100_000), k=size)
    rows = [f"{i} {s}" for i, s in zip(ids, scores, strict=True)]
    return f"{size} 10\n" + "\n".join(rows) + "\n"
