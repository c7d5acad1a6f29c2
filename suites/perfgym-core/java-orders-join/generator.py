"""Workloads for java-orders-join: `size` customers and 10*size orders, a few with unknown ids."""

import random

COUNTRIES = ["DE", "FR", "IT", "ES", "NL", "BE", "PL", "SE", "AT", "DK", "FI", "IE", "PT", "CZ"]


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    ids = rng.sample(range(10**6, 10**7), size)
    lines = [f"{size} {10 * size}"]
    lines.extend(f"C{cid} {rng.choice(COUNTRIES)}" for cid in ids)
    known = [f"C{cid}" for cid in ids]
    for order in range(10 * size):
        # About 2% of orders reference a customer that does not exist.
        cust = rng.choice(known) if rng.random() < 0.98 else f"C{rng.randrange(10**7, 10**8)}"
        lines.append(f"{order} {cust} {rng.randrange(1, 1_000_000)}")
    return "\n".join(lines) + "\n"
