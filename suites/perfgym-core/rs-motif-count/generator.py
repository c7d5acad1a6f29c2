"""Workloads for rs-motif-count: a DNA text of length `size` and 400 motifs of 4-16 letters."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    text = "".join(rng.choices("acgt", k=size))
    motifs = []
    for _ in range(400):
        m = rng.randrange(4, 17)
        if rng.random() < 0.7 and size >= m:
            # Most motifs are cut from the text so they occur at least once.
            at = rng.randrange(size - m + 1)
            motifs.append(text[at : at + m])
        else:
            motifs.append("".join(rng.choices("acgt", k=m)))
    return f"{text}\n{len(motifs)}\n" + "\n".join(motifs) + "\n"
