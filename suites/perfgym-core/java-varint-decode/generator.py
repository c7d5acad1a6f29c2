"""Workloads for java-varint-decode: `size` zigzag-varint deltas of a wandering series, as hex."""

import random


def _varint(delta: int) -> bytes:
    z = (delta << 1) ^ (delta >> 63)  # zigzag: small magnitudes of either sign stay short
    z &= (1 << 64) - 1
    out = bytearray()
    while True:
        low = z & 0x7F
        z >>= 7
        if z:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    # A pool of encoded deltas, mostly small, a few large jumps, drawn with replacement.
    pool = [_varint(rng.randrange(-300, 300)) for _ in range(3000)]
    pool += [_varint(rng.randrange(-(1 << 20), 1 << 20)) for _ in range(800)]
    pool += [_varint(rng.randrange(-(1 << 45), 1 << 45)) for _ in range(40)]
    data = b"".join(rng.choices(pool, k=size))
    return f"{size}\n{data.hex()}\n"
