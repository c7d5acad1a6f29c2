"""Workloads for java-csv-groupby: a sales CSV with `size` rows over a dozen regions."""

import random

REGIONS = [
    "north",
    "south",
    "east",
    "west",
    "central",
    "north-east",
    "north-west",
    "south-east",
    "south-west",
    "islands",
    "overseas",
    "online",
]


def _tail(rng: random.Random) -> str:
    r = rng.getrandbits(40)
    cents = r & 0xFFFFF
    return f",sku-{r >> 20 & 0xFFF},{1 + (r >> 32 & 63)},{cents // 100}.{cents % 100:02d}"


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    # Uneven region sizes; an urn of repeated names is drawn uniformly (cheaper than weights).
    urn = [name for name in REGIONS for _ in range(rng.randrange(1, 20))]
    # Row bodies come from a pool of distinct random ones so large sizes stay fast to make.
    tails = [_tail(rng) for _ in range(min(size, 8192))]
    rows = map(str.__add__, rng.choices(urn, k=size), rng.choices(tails, k=size))
    return "region,product,units,price\n" + "".join(row + "\n" for row in rows)
