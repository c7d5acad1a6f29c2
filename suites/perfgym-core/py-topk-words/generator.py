"""Workload generator for py-topk-words: Zipf-distributed words over a large vocabulary."""

import random
from itertools import accumulate

# Byte value -> letter; random bytes become random lowercase letters in one C-level call.
LETTERS = bytes(ord("a") + b % 26 for b in range(256))


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    n_vocab = max(1, size)
    lengths = [2 + (b & 7) for b in rng.randbytes(n_vocab)]
    letters = rng.randbytes(sum(lengths)).translate(LETTERS).decode()
    cuts = [0, *accumulate(lengths)]
    # dict.fromkeys drops repeats but keeps first-seen order, so the result does not depend
    # on string hashing (which varies between processes).
    vocab = list(dict.fromkeys(letters[a:b] for a, b in zip(cuts, cuts[1:], strict=False)))
    # Zipf-like frequencies: the word of rank r fills about size/(8(r+1)) slots of an urn
    # (at least one), so a few words dominate and a long tail appears once or twice. Drawing
    # uniformly from the urn is much faster than weighted choices.
    urn = []
    rank = 0
    while rank < len(vocab) and size // (8 * (rank + 1)) > 1:
        urn.extend([vocab[rank]] * (size // (8 * (rank + 1))))
        rank += 1
    urn.extend(vocab[rank:])
    words = rng.choices(urn, k=size)
    lines = [" ".join(words[i : i + 12]) for i in range(0, size, 12)]
    return "60\n" + "\n".join(lines) + "\n"
