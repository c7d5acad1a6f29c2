"""Workload generator for go-logfmt-stats: logfmt lines whose fields come in varying orders."""

import random
from operator import itemgetter

SERVICES = ["api", "auth", "billing", "cart", "search", "web"]
LEVELS = ["debug", "info", "info", "info", "warn", "error"]
STATUSES = [200, 200, 200, 201, 304, 404, 500, 502]
# A few field orders: parsers must go by key, not by position.
ORDERS = [
    itemgetter(*o)
    for o in ((0, 1, 2, 3, 4, 5), (1, 0, 2, 4, 3, 5), (2, 3, 0, 1, 5, 4), (5, 4, 3, 2, 1, 0))
]


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    seconds = rng.sample(range(86400), 4096)
    ts_t = [f"ts=2024-06-01T{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}Z" for s in seconds]
    level_t = [f"level={v}" for v in LEVELS]
    svc_t = [f"svc={s}" for s in SERVICES]
    path_t = [[f"path=/v1/{s}/{j}" for j in range(97)] for s in SERVICES]
    latency_t = [f"latency_ms={v}" for v in range(30000)]
    status_t = [f"status={v}" for v in STATUSES]
    lines = []
    # One 64-bit draw per line supplies every field (one draw is much cheaper than six
    # choices() calls); each field string comes from a ready-made table.
    for i, r in enumerate([rng.getrandbits(64) for _ in range(size)]):
        svc = (r >> 12) % 6
        fields = (
            ts_t[r & 4095],
            level_t[(r >> 16) % 6],
            svc_t[svc],
            latency_t[(r >> 20) % 30000],
            status_t[(r >> 40) & 7],
            path_t[svc][i % 97],
        )
        lines.append(" ".join(ORDERS[(r >> 44) & 3](fields)))
    return "".join(line + "\n" for line in lines)
