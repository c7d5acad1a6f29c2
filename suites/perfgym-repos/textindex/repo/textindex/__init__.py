"""textindex: a small positional inverted index with boolean and phrase search."""

from textindex.index import Index
from textindex.tokens import Tokenizer, tokenize

__all__ = ["Index", "Tokenizer", "tokenize"]
__version__ = "0.3.1"
