"""A Python source is judged as the text it is: one whose coding declaration makes Python read
other text is refused before anything runs.

A program's text reaches the interpreter in two ways. A warm worker compiles the text
(`compile(str)`), which ignores a PEP 263 coding declaration; a fresh `python3 main.py` reads
the UTF-8 file and decodes it with the declared codec. With `# -*- coding: unicode_escape -*-`
the line `# setup\\nCODE` is a comment to the first and CODE to the second, so the tests ran
one program and the timed runs another (red team helper-92: a wrong program judged OK at the
top RLPF reward, 1.26 against 0.10). `encoding_problem` names such a source: a declaration
under which the file's bytes decode to anything but the text itself (an unknown codec too),
or a byte-order mark (python3 drops it, `compile(str)` refuses it). A declaration that
changes nothing (`utf-8`, or `latin-1` over ASCII text) is fine.

Where a declaration counts is looked for liberally: in the first two lines as Python's
tokenizer splits them (at LF), at any line end (CR too), and as `str.splitlines` splits them
(form feeds and the other Unicode breaks too). A harmless declaration found this way costs
nothing; a missed one would be the attack above.
"""

from __future__ import annotations

import codecs
import re

#: PEP 263's pattern: a comment line naming a codec.
_DECLARATION = re.compile(r"^[ \t\f\v]*#.*?coding[:=][ \t]*([-\w.]+)")
_LINE_ENDS = re.compile(r"\r\n|\r|\n")


def _first_lines(source: str) -> list[str]:
    lines = source.split("\n")[:2] + _LINE_ENDS.split(source)[:2] + source.splitlines()[:2]
    return [line for line in lines if "coding" in line]


def encoding_problem(source: str) -> str:
    """Why Python would read `source`, written as UTF-8, as other text ('' when it would not)."""
    if source.startswith("\ufeff"):
        return "the source starts with a byte-order mark, which python3 drops and compile() refuses"
    data = source.encode("utf-8", "surrogatepass")
    for line in _first_lines(source):
        for name in _DECLARATION.findall(line):
            try:
                codec = codecs.lookup(name)
            except LookupError:
                return f"the source declares an unknown encoding ({name!r})"
            if codec.name == "utf-8":
                continue
            try:
                same = data.decode(codec.name) == source
            except (UnicodeDecodeError, ValueError):
                same = False
            if not same:
                return (
                    f"the source declares the encoding {name!r}, under which Python reads "
                    "other text than it is: perfgym judges Python sources as UTF-8 text"
                )
    return ""
