"""Workload generator for py-hash-join: a customer table and ~40x as many orders referencing it."""

import random

COUNTRIES = ["AR", "BR", "CA", "DE", "ES", "FR", "IN", "IT", "JP", "KE", "NL", "US"]


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    n_customers = max(1, size // 40)
    ids = rng.sample(range(1, 1_000_000_000), n_customers)
    countries = rng.choices(COUNTRIES, k=n_customers)
    # One order in ten names a customer that does not exist and must be counted as unmatched.
    known = rng.choices(ids, k=size)
    unknown = rng.choices(range(1, 1_000_000_000), k=size)
    use_unknown = rng.choices((True, False), weights=(1, 9), k=size)
    order_cust = [u if flag else k for k, u, flag in zip(known, unknown, use_unknown, strict=True)]
    amounts = rng.choices(range(1, 100_000), k=size)
    lines = [f"{n_customers} {size}"]
    lines += [f"{i} {c}" for i, c in zip(ids, countries, strict=True)]
    lines += [
        f"{o} {c} {a}" for o, c, a in zip(range(1, size + 1), order_cust, amounts, strict=True)
    ]
    return "\n".join(lines) + "\n"
