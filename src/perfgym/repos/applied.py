"""`applied_diff`: what `git apply` wrote to a copy, as a unified diff read from the files.

Every static check reads a patch as a diff. The diff a patch's author wrote is what git is
asked to apply, not what it writes: git takes a hunk's line numbers as a hint (it applies the
hunk where its context matches), makes a file from a hunk of nothing whatever the header says,
applies a `GIT binary patch` of Python source, and writes a symbolic link whose target no check
reads (red team helper-109: each hid a module that forged the tests' outcomes, accepted 12 of
12 runs on textindex, peakscan and bloomc). So the checks read this diff instead: the files git
lists for the patch (`git apply --numstat`), read before and after it is applied, compared line
by line ("\n" ends a line, nothing else). A file the patch makes or leaves a symbolic link, or
anything but a regular file, is refused; so is one larger than `MAX_FILE_BYTES`.

Source is read as its compiler reads it (red team helper-111: code after a lone carriage return
in a comment, in a file declaring `coding: utf-7` or `latin-1`, or in a Python file too large
to parse, ran while every check read a comment, other text or nothing; each forged the tests'
outcomes, accepted 14 of 15 runs). A Python file is decoded by its BOM or coding cookie, and
for Python and C-family files "\r\n" and a lone "\r" end a line as they do for the interpreter
and gcc. A Python file that does not decode or is over `MAX_PYTHON_BYTES`, and a compiled
module (an extension's or bytecode's suffix: Python imports `pkg/mod.so` ahead of
`pkg/mod.py`), are refused.
"""

from __future__ import annotations

import difflib
import importlib.machinery
import io
import os
import stat
import tokenize
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath

from perfgym.errors import PerfgymError

#: The largest file a patch may write (read whole, before and after).
MAX_FILE_BYTES = 8 << 20
#: The largest Python file a patch may write: every check parses each one whole.
MAX_PYTHON_BYTES = 4 << 20
#: Files whose compiler ends a line at "\r\n" or a lone "\r" as well as at "\n".
CR_ENDS_A_LINE = (".py", ".pyi", ".pyx", ".pxd", ".pxi", ".c", ".h", ".cc", ".cpp", ".cxx", ".hh",
                  ".hpp", ".hxx")  # fmt: skip
#: What Python imports as a compiled module: an extension or bytecode.
COMPILED_SUFFIXES = tuple(sorted(
    {*importlib.machinery.EXTENSION_SUFFIXES, *importlib.machinery.BYTECODE_SUFFIXES, ".pyo", ".pyd"}
))  # fmt: skip


class UnreadableChange(PerfgymError):
    """A file of the patch that cannot be read as a plain file of the copy (why)."""


def snapshot(root: Path, paths: Iterable[str]) -> dict[str, str | None]:
    """Each path's content in the copy now, as text (bytes that are not UTF-8 kept as
    surrogates); None where there is no file."""
    return {rel: _read(root, rel) for rel in paths}


def _read(root: Path, rel: str) -> str | None:
    parts = PurePosixPath(rel).parts
    if not parts or rel.startswith("/") or ".." in parts:
        raise UnreadableChange(f"{rel!r}: not a path inside the repository")
    path = root
    st = None
    for i, part in enumerate(parts):
        path = path / part
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        if stat.S_ISLNK(st.st_mode):
            raise UnreadableChange(f"{rel}: a symbolic link")
        if i < len(parts) - 1 and not stat.S_ISDIR(st.st_mode):
            return None
    assert st is not None
    if not stat.S_ISREG(st.st_mode):
        raise UnreadableChange(f"{rel}: not a regular file")
    limit = MAX_PYTHON_BYTES if rel.endswith(".py") else MAX_FILE_BYTES
    if st.st_size > limit:
        raise UnreadableChange(f"{rel}: {st.st_size} bytes, over {limit}")
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise UnreadableChange(f"{rel}: over {limit} bytes")
    return source_text(rel, data)


def source_text(rel: str, data: bytes) -> str:
    """A file's text as its compiler reads it: a Python file decoded by its BOM or coding
    cookie, any other as UTF-8 (other bytes kept as surrogates); "\r\n" and a lone "\r" made
    "\n" where they end a line (`CR_ENDS_A_LINE`). UnreadableChange for a Python file that does
    not decode as it declares."""
    if rel.endswith(".py"):
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
            text = data.decode(encoding)
        except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
            raise UnreadableChange(f"{rel}: not Python source that decodes ({exc})") from None
    else:
        text = data.decode("utf-8", "surrogateescape")
    if rel.endswith(CR_ENDS_A_LINE):
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def compiled_module(rel: str) -> bool:
    """Whether Python would import the file as a compiled module (`COMPILED_SUFFIXES`)."""
    return rel.endswith(COMPILED_SUFFIXES)


def tree_state(root: Path) -> dict[str, tuple[int, int, int, int]]:
    """Every entry under `root` but `.git`, by relative path: (mode, size, mtime ns, inode).
    What git changed that its file list does not show is a path whose state moved
    (red team helper-110: a rename whose source the diff's header does not name)."""
    out: dict[str, tuple[int, int, int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if dirpath == str(root) and ".git" in dirnames:
            dirnames.remove(".git")
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            out[os.path.relpath(path, root)] = (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino)
    return out


def applied_diff(before: Mapping[str, str | None], after: Mapping[str, str | None]) -> str:
    """A unified diff (3 lines of context) of every file whose content changed."""
    out: list[str] = []
    for rel in sorted(set(before) | set(after)):
        old, new = before.get(rel), after.get(rel)
        if old == new:
            continue
        a = old.split("\n") if old is not None else []
        b = new.split("\n") if new is not None else []
        lines = list(difflib.unified_diff(a, b, lineterm=""))[2:]  # its own header: ours
        out.append(f"--- {'a/' + rel if old is not None else '/dev/null'}")
        out.append(f"+++ {'b/' + rel if new is not None else '/dev/null'}")
        out.extend(lines)
    return "\n".join(out) + "\n" if out else ""
