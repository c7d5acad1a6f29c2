"""Workload generator for js-varint-encode: unsigned 32-bit values of mixed magnitude."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    # Bit lengths are uniform over 1..32, so every varint length from 1 to 5 bytes is common.
    widths = rng.choices(range(1, 33), k=size)
    values = [rng.getrandbits(w) for w in widths]
    lines = [" ".join(map(str, values[i : i + 16])) for i in range(0, size, 16)]
    return f"{size}\n" + "\n".join(lines) + "\n"
