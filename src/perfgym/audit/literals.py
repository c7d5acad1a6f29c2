"""String literals of arbitrary bytes in each language a probe program is written in."""

from __future__ import annotations

import json

from perfgym.errors import PerfgymError
from perfgym.tasks.task import Language


class NotWritable(PerfgymError):
    """The probe program cannot be written for this task (language, kind, data)."""


def text_bytes(text: str) -> bytes:
    """A program's output as the bytes it printed (outputs that were not UTF-8 hold lone
    surrogates U+DC80-U+DCFF, `perfgym.judge.runner.program_text`). Any other lone surrogate
    (a task file's JSON may hold "\\ud800") names no bytes: NotWritable."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as exc:
        bad = f"U+{ord(exc.object[exc.start]):04X}"
        raise NotWritable(f"a test's text holds a lone surrogate ({bad}), which no program "
                          "prints") from None  # fmt: skip


def literal(data: bytes, language: Language) -> str:
    """A string literal holding exactly `data` (to print it byte for byte), in `language`."""
    if language in (Language.C, Language.CPP):
        # octal escapes, three digits each, so a following digit never joins one
        return '"' + "".join(_c_char(b) for b in data) + '"'
    if language is Language.PYTHON:
        return repr(data)
    if language is Language.RUST:
        return rust_bytes(data)
    # JavaScript, Go, Java: JSON's escapes are theirs; the text must be UTF-8 (checked by caller)
    return json.dumps(data.decode("utf-8"), ensure_ascii=False)


def _c_char(b: int) -> str:
    if 32 <= b < 127 and b not in (34, 63, 92):  # not '"', '?' (trigraphs), '\'
        return chr(b)
    return f"\\{b:03o}"


def rust_bytes(data: bytes) -> str:
    """A Rust byte-string literal (`b"..."`) of `data`: hex escapes for every unusual byte."""
    return 'b"' + "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\x{b:02x}"
                          for b in data) + '"'  # fmt: skip
