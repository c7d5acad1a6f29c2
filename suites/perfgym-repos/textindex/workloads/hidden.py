"""Hidden: fewer, longer documents added with shuffled ids, phrase queries and ranking."""

import random

from textindex import Index

WORDS = [f"t{i}" for i in range(25)] + ["the", "of"]


def setup():
    rng = random.Random(99)
    ids = list(range(1500))
    rng.shuffle(ids)
    return {doc_id: " ".join(rng.choice(WORDS) for _ in range(30)) for doc_id in ids}


def experiment(docs):
    index = Index.from_documents(docs)
    phrases = [index.search(f'"t{i} t{i + 2}"') for i in range(0, 20, 4)]
    return phrases, index.rank("t3 t7", top=20), index.postings("t11")[:50]
