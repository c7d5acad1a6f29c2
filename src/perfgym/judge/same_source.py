"""Normalised sources: two programs that differ only in comments and layout are the same
program, so a candidate that is the baseline (or the reference) padded with comments or blank
lines is a tie with it by construction, never faster or slower.

The rule, per language:

    python        the token stream (`tokenize`), without comments and blank lines (a source
                  whose coding declaration makes Python read other text falls back); the
                  layout inside a line is free, indentation (INDENT/DEDENT) still counts,
                  string literals (docstrings too) count exactly
    C family      (c, cpp, cuda, java, go) backslash-newlines spliced (C, C++, CUDA), then
                  `//` and `/* */` comments removed outside string and character literals,
                  every run of whitespace made one space, and a space beside punctuation
                  dropped unless it separates two punctuation marks (`i++ + j` stays apart
                  from `i + ++j`); a source where this is not the compiler's reading (raw
                  strings, digit separators, trigraphs, Java unicode escapes and text
                  blocks) and every Rust and JavaScript source fall back to the last rule
    anything else line endings, trailing whitespace and blank lines ignored; the rule the
                  other two fall back to when a source does not tokenize

A false tie needs two programs that differ only inside what the rule reads as a comment.
"""

from __future__ import annotations

import functools
import io
import re
import tokenize

from perfgym.judge.source_encoding import encoding_problem
from perfgym.tasks.task import Language, Task

_C_FAMILY = {Language.C, Language.CPP, Language.CUDA, Language.JAVA, Language.GO,
             Language.JAVASCRIPT, Language.RUST}  # fmt: skip
_SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING}


def _lines(source: str) -> str:
    lines = (line.rstrip() for line in source.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    return "\n".join(line for line in lines if line)


def _python(source: str) -> str:
    # A coding declaration under which Python reads other text (`unicode_escape` turns what
    # tokenize reads as a comment into code): never a tie.
    if why := encoding_problem(source):
        raise ValueError(why)
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in _SKIPPED:
            continue
        # Indentation's width is layout; its structure is in the INDENT/DEDENT tokens.
        text = (
            "" if tok.type in (tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE) else tok.string
        )
        out.append(f"{tok.type}:{text}")
    return "\x00".join(out)


def _strip_c_comments(source: str, quotes: str) -> list[tuple[bool, str]]:
    """(is a literal, text) pieces with the comments gone (each a space)."""
    pieces: list[tuple[bool, str]] = []
    code: list[str] = []
    i, n = 0, len(source)
    while i < n:
        ch = source[i]
        if source.startswith("//", i):
            j = source.find("\n", i)
            i = n if j < 0 else j
            code.append(" ")
        elif source.startswith("/*", i):
            j = source.find("*/", i + 2)
            if j < 0:
                raise ValueError("unterminated comment")
            i = j + 2
            code.append(" ")
        elif ch in quotes:
            j = i + 1
            while j < n and source[j] != ch:
                j += 2 if source[j] == "\\" else 1
            if j >= n:
                raise ValueError("unterminated literal")
            pieces += [(False, "".join(code)), (True, source[i : j + 1])]
            code = []
            i = j + 1
        else:
            code.append(ch)
            i += 1
    pieces.append((False, "".join(code)))
    return pieces


_SPACES = re.compile(r"\s+")
# A space with punctuation on one side and a word character (or an edge) on the other.
_LOOSE = re.compile(r"(?<=[^\w\s]) (?=[\w])|(?<=[\w]) (?=[^\w\s])|^ | $")


#: Where the comment rule above is not the compiler's, the source is compared by lines
#: (`_lines`): a C or C++ raw string (`R"x( ... )x"` may hold quotes and `//`), a Java
#: unicode escape (`\u000a` ends a `//` comment before the lexer runs), a Java text block,
#: and every Rust and JavaScript source (raw strings, char literals against lifetimes, regular
#: expression literals).
_BY_LINES = {
    Language.C: ('R"',),
    Language.CPP: ('R"',),
    Language.CUDA: ('R"',),
    Language.JAVA: ("\\u", '"""'),
}
_ALWAYS_BY_LINES = {Language.RUST, Language.JAVASCRIPT}
#: C, C++ and CUDA splice a backslash-newline before comments are seen (translation phase 2):
#: `// note \` makes the next line part of the comment.
_SPLICED = {Language.C, Language.CPP, Language.CUDA}
_DIGIT_SEPARATOR = re.compile(r"[0-9a-fA-F]'[0-9a-fA-F]")
#: gcc splices a backslash followed by spaces too ("backslash and newline separated by space").
_SPLICE = re.compile(r"\\[ \t\f\v]*\r?\n")
#: A C or C++ source with a trigraph (`??/` is a backslash, `??/` + newline a splice, under
#: `-std=c11`, `-std=c++11` and every ISO mode before C++17 and C23) is compared by lines: the
#: comment rule would read `/* *??/` + newline + `/ CODE` as one comment (red team helper-92).
_TRIGRAPH = re.compile(r"\?\?[=/'()!<>-]")


def _c_family(source: str, language: Language) -> str:
    if language in _ALWAYS_BY_LINES or any(m in source for m in _BY_LINES.get(language, ())):
        raise ValueError("not a source the comment rule reads as the compiler does")
    if language in _SPLICED and _DIGIT_SEPARATOR.search(source):
        raise ValueError("a digit separator (1'000) reads as a character literal here")
    if language in _SPLICED and _TRIGRAPH.search(source):
        raise ValueError("a trigraph: ??/ is a backslash where trigraphs are on (gcc -std=c11)")
    if language in _SPLICED:
        source = _SPLICE.sub("", source)
    quotes = "\"'`"
    parts = []
    for literal, text in _strip_c_comments(source, quotes):
        parts.append(text if literal else _LOOSE.sub("", _SPACES.sub(" ", text)))
    return "\x00".join(parts)


def normalised(source: str, language: Language | str) -> str:
    """`source` under its language's rule (the module docstring); equal for the same program."""
    lang = Language(language) if not isinstance(language, Language) else language
    return _normalised(source, lang)


@functools.lru_cache(maxsize=512)
def _normalised(source: str, lang: Language) -> str:
    # Cached: a batch asks for its task's baseline and reference once per candidate.
    # Line ends as compilers read them: Python's and gcc's end a line at a lone CR too, which
    # tokenize's readline (and a `//` comment scan) would not, leaving code inside a "comment".
    source = source.replace("\r\n", "\n").replace("\r", "\n")
    try:
        if lang is Language.PYTHON:
            return _python(source)
        if lang in _C_FAMILY:
            return _c_family(source, lang)
    except (SyntaxError, tokenize.TokenError, ValueError, IndentationError):
        pass
    return _lines(source)


def same_source_roles(task: Task, source: str | None) -> list[str]:
    """The roles ('baseline', 'reference') whose normalised source equals `source`'s."""
    if source is None:
        return []
    mine = normalised(source, task.language)
    roles = []
    for role, sol in (("baseline", task.baseline), ("reference", task.reference)):
        if (
            sol is not None
            and sol.source is not None
            and normalised(sol.source, task.language) == mine
        ):
            roles.append(role)
    return roles
