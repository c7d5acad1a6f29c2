"""Tokenisation: case folding, splitting on non-word characters, stop words, light stemming."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)

DEFAULT_STOPWORDS = frozenset(
    "a an and are as at be by for from has in is it its of on or that the to was were will with".split()
)


def _stem(word: str) -> str:
    """A deliberately light stemmer: plural and -ing/-ed endings of longer words."""
    if len(word) > 5 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 4 and word.endswith("ed"):
        return word[:-2]
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


class Tokenizer:
    """Turns text into (position, term) pairs; positions count every word, stop words included,
    so phrase queries keep their gaps."""

    def __init__(self, stopwords: Iterable[str] = DEFAULT_STOPWORDS, stem: bool = True) -> None:
        self.stopwords = frozenset(w.casefold() for w in stopwords)
        self.stem = stem

    def positions(self, text: str) -> Iterator[tuple[int, str]]:
        for position, match in enumerate(_WORD.finditer(text)):
            word = match.group().casefold()
            if word in self.stopwords:
                continue
            yield position, _stem(word) if self.stem else word

    def terms(self, text: str) -> list[str]:
        return [term for _, term in self.positions(text)]


_default = Tokenizer()


def tokenize(text: str) -> list[str]:
    """The index's terms of `text` with the default tokenizer."""
    return _default.terms(text)
