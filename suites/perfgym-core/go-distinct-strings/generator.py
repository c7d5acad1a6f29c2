"""Workload generator for go-distinct-strings: request paths from a hot set plus rare one-offs."""

import random

SHAPES = ["/api/v2/users/{}/orders", "/static/img/{}.png", "/search?q=item{}", "/api/items/{}"]


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    hot_count = max(10, size // 200)
    hot = [rng.choice(SHAPES).format(rng.randrange(10**6)) for _ in range(hot_count)]
    lines = rng.choices(hot, k=size)
    # About one line in 500 is a one-off path (counted among the strings seen exactly once).
    for i in rng.sample(range(size), size // 500):
        lines[i] = f"/tmp/session-{rng.getrandbits(48):012x}"
    return f"{size}\n" + "\n".join(lines) + "\n"
