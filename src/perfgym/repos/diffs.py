"""Reading a unified diff: which files a patch touches and the lines it adds (new-file numbers).

Read as `git apply` reads it: lines end at "\n" only (not at a form feed or the other breaks
`str.splitlines` knows), and a hunk's lines are the counts its header gives, each read by its
first character alone, never as a file header. Red team helper-108 added a line whose text was
"++ b/pkg/x.py" to a new root module: in the diff it read "+++ b/pkg/x.py", which a reader that
tests for headers first took for another file, so every static check saw a file inside the
package while git created the root module (Python's `copy` imports a root `org` during
`import pytest`, ahead of perfgym's outcome plugin), and the tests' outcomes were forged again.
`perfgym.repos.shell.apply_patch` also asks git which files it applies and refuses a patch whose
text says otherwise."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class FileChange:
    """One file of a patch: its path (new name, or old for a deletion) and added lines."""

    path: str
    old_path: str = ""
    added: dict[int, str] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)
    created: bool = False
    deleted: bool = False
    binary: bool = False

    @property
    def first_line(self) -> int:
        return min(self.added) if self.added else 1


#: git's C-style escapes in a quoted path (besides three octal digits, one byte each).
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def unquote(name: str) -> str:
    """A path as git writes it in a diff: as is, or C-quoted ("...", escapes and octal bytes,
    which git does for a name with a non-ASCII or control character or a quote), decoded as
    UTF-8 (bytes that are not kept as surrogates, as the file system's names are read)."""
    if len(name) < 2 or name[0] != '"' or name[-1] != '"':
        return name
    body, out, i = name[1:-1], bytearray(), 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8", "surrogateescape")
            i += 1
        elif body[i + 1 : i + 2] in _ESCAPES:
            out.append(_ESCAPES[body[i + 1]])
            i += 2
        elif re.fullmatch(r"[0-3][0-7]{2}", body[i + 1 : i + 4]):
            out.append(int(body[i + 1 : i + 4], 8))
            i += 4
        else:
            out += b"\\"
            i += 1
    return out.decode("utf-8", "surrogateescape")


def _quoted_end(text: str) -> int:
    """Where the quoted name `text` opens with ends (past its closing quote), or -1."""
    i = 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == '"':
            return i + 1
        else:
            i += 1
    return -1


def _name(text: str) -> str:
    """A header's path (after "--- ", "+++ ", "rename from " ...): unquoted, up to a tab."""
    if text.startswith('"') and (end := _quoted_end(text)) > 0:
        return unquote(text[:end])
    return text.split("\t")[0].strip()


def _strip(name: str) -> str:
    name = _name(name)
    return name[2:] if name[:2] in ("a/", "b/") else name


def parse_patch(patch: str) -> list[FileChange]:
    """The files of a git-style unified diff, in order."""
    files: list[FileChange] = []
    current: FileChange | None = None
    new_line = 0
    old_left = new_left = 0  # the current hunk's lines still to come, by its header
    named = False  # the current file had its "+++" line: a "---" line starts the next one
    for line in patch.split("\n"):
        if line.endswith("\r"):
            line = line[:-1]
        if current is not None and (old_left > 0 or new_left > 0):
            tag = line[:1]
            if tag == "+":
                current.added[new_line] = line[1:]
                new_line += 1
                new_left -= 1
            elif tag == "-":
                current.removed.append(line[1:])
                old_left -= 1
            elif tag == " " or line == "":
                new_line += 1
                old_left -= 1
                new_left -= 1
            elif tag != "\\":  # not "\ No newline at end of file": git refuses the patch
                old_left = new_left = 0
            continue
        if line.startswith("diff --git "):
            parts = line.split(" ")
            current = FileChange(path=_strip(parts[-1]), old_path=_strip(parts[-2]))
            files.append(current)
            named = False
            continue
        if line.startswith("--- ") and (current is None or named):
            # a plain diff without git's header: each file starts at its "---" line
            current = FileChange(path="", old_path=_strip(line[4:]))
            files.append(current)
            named = False
        if current is None:
            continue
        if line.startswith(("rename from ", "copy from ")):
            current.old_path = _name(line.split(" ", 2)[2])
        elif line.startswith(("rename to ", "copy to ")):
            current.path = _name(line.split(" ", 2)[2])
        elif line.startswith("new file mode"):
            current.created = True
        elif line.startswith("deleted file mode"):
            current.deleted = True
        elif line.startswith(("Binary files", "GIT binary patch")):
            current.binary = True
        elif line.startswith("--- "):
            if line[4:].strip() == "/dev/null":  # a new file, also in a diff without git's modes
                current.created = True
            current.old_path = _strip(line[4:]) if line[4:] != "/dev/null" else current.old_path
        elif line.startswith("+++ "):
            named = True
            name = line[4:]
            if name.strip() != "/dev/null":
                current.path = _strip(name)
        elif m := _HUNK.match(line):
            old_left = int(m.group(1)) if m.group(1) is not None else 1
            new_line = int(m.group(2))
            new_left = int(m.group(3)) if m.group(3) is not None else 1
            if line.startswith("@@ -0,0 "):  # a hunk from nothing: the file is new
                current.created = True
    for f in files:
        if not f.path:
            f.path = f.old_path
    return files
