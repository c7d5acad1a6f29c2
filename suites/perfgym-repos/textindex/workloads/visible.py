"""Index 2500 short generated documents over a small vocabulary, then search it."""

import random

from textindex import Index

WORDS = [f"w{i}" for i in range(40)]


def setup():
    rng = random.Random(1234)
    return [" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(2500)]


def experiment(docs):
    index = Index.from_documents(docs)
    hits = [index.search(f"w{i} w{i + 1}") for i in range(0, 38, 3)]
    return len(index), [len(index.postings(w)) for w in WORDS], hits
