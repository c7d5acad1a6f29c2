"""Index: the public face: add documents, then boolean, phrase and ranked search."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping

from textindex.builder import IndexBuilder
from textindex.postings import intersect, phrase_match, union
from textindex.tokens import Tokenizer

_PHRASE = re.compile(r'"([^"]+)"')


class Index:
    """A positional inverted index over documents with integer ids."""

    def __init__(self, tokenizer: Tokenizer | None = None) -> None:
        self._builder = IndexBuilder(tokenizer or Tokenizer())
        self._next_id = 0

    @classmethod
    def from_documents(cls, docs: Iterable[str] | Mapping[int, str], **kw) -> Index:  # type: ignore[no-untyped-def]
        index = cls(**kw)
        items = docs.items() if isinstance(docs, Mapping) else enumerate(docs)
        for doc_id, text in items:
            index.add(text, doc_id=doc_id)
        return index

    def add(self, text: str, doc_id: int | None = None) -> int:
        if doc_id is None:
            doc_id = self._next_id
        if doc_id < 0:
            raise ValueError("document ids are non-negative")
        self._builder.add_document(doc_id, text)
        self._next_id = max(self._next_id, doc_id + 1)
        return doc_id

    def remove(self, doc_id: int) -> None:
        self._builder.remove_document(doc_id)

    def __len__(self) -> int:
        return len(self._builder.lengths)

    @property
    def vocabulary(self) -> list[str]:
        return sorted(self._builder.postings)

    def postings(self, term: str) -> list[int]:
        terms = self._builder.tokenizer.terms(term)
        if len(terms) != 1:
            return []
        pl = self._builder.postings.get(terms[0])
        return list(pl.doc_ids) if pl else []

    def search(self, query: str, mode: str = "and") -> list[int]:
        """Ids matching `query`: every term ('and') or any ('or'); "quoted phrases" must occur
        in order. Ascending ids."""
        if mode not in ("and", "or"):
            raise ValueError(f"mode must be 'and' or 'or', not {mode!r}")
        phrases = _PHRASE.findall(query)
        rest = _PHRASE.sub(" ", query)
        postings = self._builder.postings
        groups: list[list[int]] = []
        for phrase in phrases:
            pos = list(self._builder.tokenizer.positions(phrase))
            if not pos:
                continue
            if any(t not in postings for _, t in pos):
                groups.append([])
                continue
            lists = [postings[t] for _, t in pos]
            groups.append(phrase_match(lists, [p - pos[0][0] for p, _ in pos]))
        for term in self._builder.tokenizer.terms(rest):
            pl = postings.get(term)
            groups.append(list(pl.doc_ids) if pl else [])
        if not groups:
            return []
        sets = [set(g) for g in groups]
        hits = set.intersection(*sets) if mode == "and" else set.union(*sets)
        return sorted(hits)

    def rank(self, query: str, top: int = 10) -> list[tuple[int, float]]:
        """BM25-ranked (id, score), best first, ties by ascending id."""
        terms = self._builder.tokenizer.terms(query)
        postings = self._builder.postings
        lengths = self._builder.lengths
        if not terms or not lengths:
            return []
        n = len(lengths)
        avg = sum(lengths.values()) / n
        scores: dict[int, float] = {}
        lists = [postings[t] for t in dict.fromkeys(terms) if t in postings]
        for pl in lists:
            idf = math.log(1 + (n - len(pl) + 0.5) / (len(pl) + 0.5))
            for doc_id in union([pl]):
                tf = pl.frequency(doc_id)
                norm = tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * lengths[doc_id] / avg))
                scores[doc_id] = scores.get(doc_id, 0.0) + idf * norm
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
        return [(d, round(s, 9)) for d, s in ranked[:top]]

    def common(self, terms: Iterable[str]) -> list[int]:
        lists = [self._builder.postings[t] for t in terms if t in self._builder.postings]
        return intersect(lists)
