"""Workloads for cpp-word-freq: `size` words drawn from a Zipf-like vocabulary of random words."""

import random


def generate(size: int, seed: int) -> str:
    rng = random.Random(seed)
    letters = "etaoinshrdlucmfwypvbgkqjxz"
    n_vocab = min(20000, max(1, size // 8))
    vocab = sorted({"".join(rng.choices(letters, k=rng.randrange(2, 14))) for _ in range(n_vocab)})
    rng.shuffle(vocab)
    # Word of rank r appears about n_vocab/(r+1) times in the urn (Zipf's law, exponent 1);
    # uniform draws from the urn are much faster than weighted draws.
    urn = []
    for r, word in enumerate(vocab):
        urn.extend([word] * (n_vocab // (r + 1) or 1))
    words = rng.choices(urn, k=size)
    lines = [" ".join(words[i : i + 12]) for i in range(0, size, 12)]
    return "\n".join(lines) + "\n"
