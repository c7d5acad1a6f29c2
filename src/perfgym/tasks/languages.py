"""Which `Language` a benchmark's language name or a source file name means."""

from __future__ import annotations

from pathlib import PurePath

from perfgym.tasks.task import Language

_BY_EXTENSION = {
    ".py": Language.PYTHON,
    ".c": Language.C,
    ".cpp": Language.CPP,
    ".cc": Language.CPP,
    ".cxx": Language.CPP,
    ".cu": Language.CUDA,
    ".go": Language.GO,
    ".java": Language.JAVA,
    ".js": Language.JAVASCRIPT,
    ".rs": Language.RUST,
}

# Spellings benchmarks use (PerfCodeBench writes "C++", "CUDA", "Go", ...), lower-cased.
_BY_NAME = {
    **{language.value: language for language in Language},
    "c++": Language.CPP,
    "cxx": Language.CPP,
    "golang": Language.GO,
    "py": Language.PYTHON,
    "python3": Language.PYTHON,
    "js": Language.JAVASCRIPT,
    "node": Language.JAVASCRIPT,
    "rs": Language.RUST,
    "cu": Language.CUDA,
}


def language_from_filename(name: str) -> Language | None:
    """The language of a source file by its extension; None when the extension is unknown."""
    return _BY_EXTENSION.get(PurePath(name).suffix.lower())


def language_from_name(name: str) -> Language | None:
    """The language a benchmark's name for it means ('C++', 'CUDA', 'go'); None if unknown."""
    return _BY_NAME.get(name.strip().lower())


def known_names() -> list[str]:
    """Accepted language names, for error messages."""
    return sorted(_BY_NAME)
