"""Workload generator for go-hash-join: a product table and ~25x as many order lines."""

import random

CATEGORIES = ["books", "garden", "games", "kitchen", "music", "outdoor", "tools", "toys"]


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, size // 25)
    ids = rng.sample(range(1, 1_000_000_000), n)
    cats = rng.choices(CATEGORIES, k=n)
    prices = rng.choices(range(1, 100_000), k=n)
    # One order line in twenty names a product that is not in the table.
    known = rng.choices(ids, k=size)
    unknown = rng.choices(range(1, 1_000_000_000), k=size)
    flags = rng.choices((True, False), weights=(1, 19), k=size)
    pids = [u if f else k for k, u, f in zip(known, unknown, flags, strict=True)]
    qtys = rng.choices(range(1, 50), k=size)
    lines = [f"{n} {size}"]
    lines += [f"{i} {c} {p}" for i, c, p in zip(ids, cats, prices, strict=True)]
    lines += [f"{o} {p} {q}" for o, p, q in zip(range(1, size + 1), pids, qtys, strict=True)]
    return "\n".join(lines) + "\n"
