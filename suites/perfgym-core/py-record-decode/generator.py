"""Workload generator for py-record-decode: n fixed-width binary records as hex lines."""

import random
from struct import Struct

RECORD = Struct("<I16si")


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    lengths = rng.choices(range(1, 17), k=size)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    letters = "".join(rng.choices(alphabet, k=sum(lengths))).encode()
    ids = rng.choices(range(2**32), k=size)
    # Scores cluster in a narrow band so that the maximum is often shared: ties matter.
    scores = rng.choices(range(-(2**31), 2**31 - 1, 2**20), k=size)
    lines = []
    pos = 0
    for rid, n, score in zip(ids, lengths, scores, strict=True):
        lines.append(RECORD.pack(rid, letters[pos : pos + n], score).hex())
        pos += n
    return f"{size}\n" + "".join(line + "\n" for line in lines)
