"""Workload generator for py-csv-groupby: sales rows spread over a few dozen regions."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    n_regions = 48
    regions = [f"region-{i:02d}" for i in rng.sample(range(100), n_regions)]
    stores = [f"s{i}" for i in range(1, 2001)]
    # choices() draws whole columns at C speed, keeping the generator well under a second.
    reg_col = rng.choices(regions, k=size)
    store_col = rng.choices(stores, k=size)
    amount_col = rng.choices(range(1, 500_000), k=size)
    rows = [f"{r},{s},{a}" for r, s, a in zip(reg_col, store_col, amount_col, strict=True)]
    return "region,store,amount_cents\n" + "\n".join(rows) + ("\n" if rows else "")
