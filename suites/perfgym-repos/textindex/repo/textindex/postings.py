"""Posting lists: for one term, the documents holding it (ascending ids) and the positions."""

from __future__ import annotations

import bisect
from collections.abc import Iterable


class PostingList:
    """Documents containing a term, kept sorted by id, with the term's positions in each."""

    __slots__ = ("doc_ids", "positions")

    def __init__(self) -> None:
        self.doc_ids: list[int] = []
        self.positions: dict[int, list[int]] = {}

    def add(self, doc_id: int, position: int) -> None:
        """Record that the term occurs in `doc_id` at `position` (any order of calls)."""
        if doc_id not in self.doc_ids:
            bisect.insort(self.doc_ids, doc_id)
            self.positions[doc_id] = []
        bisect.insort(self.positions[doc_id], position)

    def remove(self, doc_id: int) -> None:
        if doc_id in self.positions:
            del self.positions[doc_id]
            self.doc_ids.remove(doc_id)

    def frequency(self, doc_id: int) -> int:
        return len(self.positions.get(doc_id, ()))

    def __len__(self) -> int:
        return len(self.doc_ids)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.doc_ids)

    def __repr__(self) -> str:
        return f"PostingList({self.doc_ids!r})"


def intersect(lists: Iterable[PostingList]) -> list[int]:
    """Ids present in every list, ascending (smallest list first)."""
    ordered = sorted(lists, key=len)
    if not ordered:
        return []
    result = list(ordered[0].doc_ids)
    for other in ordered[1:]:
        keep = set(other.doc_ids)
        result = [d for d in result if d in keep]
    return result


def union(lists: Iterable[PostingList]) -> list[int]:
    ids: set[int] = set()
    for pl in lists:
        ids.update(pl.doc_ids)
    return sorted(ids)


def phrase_match(lists: list[PostingList], offsets: list[int]) -> list[int]:
    """Ids where term i occurs at position p + offsets[i] for some p (offsets[0] == 0)."""
    hits = []
    for doc_id in intersect(lists):
        starts = set(lists[0].positions[doc_id])
        for pl, off in zip(lists[1:], offsets[1:]):
            starts &= {p - off for p in pl.positions[doc_id]}
            if not starts:
                break
        if starts:
            hits.append(doc_id)
    return hits
