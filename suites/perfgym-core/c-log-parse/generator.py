"""Workloads for c-log-parse: `size` access-log lines with realistic paths, statuses and latencies."""

import random

METHODS = ["GET"] * 10 + ["POST"] * 4 + ["PUT", "DELETE"]
STATUSES = [200] * 19 + [201, 204, 301, 302, 304, 400, 401, 403, 404, 404, 500, 502, 503]
RESOURCES = ["users", "orders", "items", "search", "static/img", "api/v2/metrics", "login", "cart"]
PARAMS = ["page", "sort", "utm_source", "utm_campaign", "session", "q", "filter", "lang", "ref"]


def _tail(rng: random.Random) -> str:
    r = rng.getrandbits(80)
    latency = (r & 0x1FFFFF) % 2_000_000
    # Tracking-style query strings make paths long, as in real front-end logs.
    query = "&".join(
        f"{rng.choice(PARAMS)}={rng.getrandbits(rng.randrange(8, 96)):x}"
        for _ in range(rng.randrange(6))
    )
    return (
        f"{METHODS[r >> 29 & 15]} /{RESOURCES[r >> 33 & 7]}/{r >> 36 & 0xFFFF}"
        f"{'?' if query else ''}{query} "
        f"{STATUSES[r >> 52 & 31]} {r >> 57 & 0x3FFFFF} {latency // 1000}.{latency % 1000:03d}ms"
    )


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    # Formatting every field of every line is too slow for large sizes: draw line bodies from a
    # pool of distinct random ones and pair them with a clock that advances every few lines.
    tails = [_tail(rng) for _ in range(min(size, 5000))]
    picks = rng.choices(tails, k=size)
    clock = [f"{h:02d}:{m:02d}:{s:02d}Z " for h in range(24) for m in range(60) for s in range(60)]
    t = 1_700_000_000 + rng.randrange(86400)
    stamps: list[str] = []
    while len(stamps) < size:
        # Up to 64 lines per call to the generator: the clock ticks 1-2 s, 1-4 lines each.
        r = rng.getrandbits(192)
        for _ in range(64):
            t += 1 + (r & 1)
            day, sec = divmod(t, 86400)
            stamp = f"2024-{1 + day % 12:02d}-{1 + day % 28:02d}T" + clock[sec]
            stamps.extend([stamp] * (1 + (r >> 1 & 3)))
            r >>= 3
    lines = map(str.__add__, stamps[:size], picks)
    return "\n".join(lines) + ("\n" if size else "")
