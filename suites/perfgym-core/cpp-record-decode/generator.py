"""Workloads for cpp-record-decode: `size` random 16-byte records, base64 in 76-character lines."""

import base64
import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    data = bytearray(rng.getrandbits(128 * size).to_bytes(16 * size, "little") if size else b"")
    # Regions (bytes 12-13) are kept to a few hundred values so the busiest one is meaningful.
    for off in range(12, len(data), 16):
        data[off + 1] = data[off + 1] & 1
    text = base64.b64encode(bytes(data)).decode()
    lines = [text[i : i + 76] for i in range(0, len(text), 76)]
    return f"{size}\n" + "".join(line + "\n" for line in lines)
