"""IndexBuilder: feeds tokenised documents into the posting lists."""

from __future__ import annotations

from textindex.postings import PostingList
from textindex.tokens import Tokenizer


class IndexBuilder:
    """Accumulates documents into term -> PostingList, with each document's length."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self.postings: dict[str, PostingList] = {}
        self.lengths: dict[int, int] = {}

    def add_document(self, doc_id: int, text: str) -> None:
        if doc_id in self.lengths:
            raise ValueError(f"document {doc_id} is already indexed")
        count = 0
        for position, term in self.tokenizer.positions(text):
            pl = self.postings.get(term)
            if pl is None:
                pl = self.postings[term] = PostingList()
            pl.add(doc_id, position)
            count += 1
        self.lengths[doc_id] = count

    def remove_document(self, doc_id: int) -> None:
        if doc_id not in self.lengths:
            raise KeyError(doc_id)
        del self.lengths[doc_id]
        empty = []
        for term, pl in self.postings.items():
            pl.remove(doc_id)
            if not pl:
                empty.append(term)
        for term in empty:
            del self.postings[term]
