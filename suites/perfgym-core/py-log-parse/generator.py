"""Workload generator for py-log-parse: web access-log lines spread over several days."""

import random

METHODS = ["GET", "GET", "GET", "POST", "PUT", "DELETE"]
PATHS = ["/", "/login", "/api/items", "/api/items/{}", "/api/users/{}/orders", "/static/app.js"]


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    stamps = sorted(rng.choices(range(5 * 86400), k=size))
    methods = rng.choices(METHODS, k=size)
    paths = rng.choices(PATHS, k=size)
    ids = rng.choices(range(1, 100000), k=size)
    statuses = rng.choices(
        [200, 201, 204, 301, 404, 500, 503], weights=[60, 5, 5, 5, 10, 3, 2], k=size
    )
    latencies = rng.choices(range(1, 5000), k=size)
    lines = []
    for t, m, p, i, s, lat in zip(stamps, methods, paths, ids, statuses, latencies, strict=True):
        day, rest = divmod(t, 86400)
        hh, rest = divmod(rest, 3600)
        mm, ss = divmod(rest, 60)
        lines.append(
            f"2024-03-{day + 1:02d}T{hh:02d}:{mm:02d}:{ss:02d}Z {m} {p.format(i)} {s} {lat}ms"
        )
    return "".join(line + "\n" for line in lines)
