"""Workloads for c-hamming-pairs: `size` fingerprints of 4 words, clustered so some pairs are close."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    words = 4
    centres = [[rng.getrandbits(64) for _ in range(words)] for _ in range(max(1, size // 50))]
    lines = [f"{size} {words} 96"]
    for _ in range(size):
        row = list(rng.choice(centres))
        # Flip a few bits so rows near one centre are close but rarely identical.
        for _ in range(rng.randrange(0, 40)):
            k = rng.randrange(words)
            row[k] ^= 1 << rng.randrange(64)
        lines.append(" ".join(f"{v:016x}" for v in row))
    return "\n".join(lines) + "\n"
