"""`protected_changes`: what a patched copy's build changed among the files the tests are made
of (the test patterns and the task's protected paths), against the built original.

A patch may not touch tests (`test_edit`), but its build step runs the patch's own code in the
copy, before anything is judged: red team helper-72's `setup.py` wrote pytest's bytecode cache
for the test file with every test emptied, and pytest ran that instead of the file. The same
build could rewrite a test's data file or its source. A patched copy whose protected files
differ from the built original's after its build is refused before its tests run.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

from perfgym.repos.hacks_static import is_protected

#: Files compared at most per copy (beyond: the rest are reported as not compared).
MAX_FILES = 50_000


def _protected_files(root: Path, extra: tuple[str, ...]) -> dict[str, str]:
    """rel path -> a digest of what is there (file bytes, a link's target, 'dir' for a folder
    that is itself protected and empty)."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        base = Path(dirpath)
        for name in [*filenames, *(d for d in dirnames if (base / d).is_symlink())]:
            path = base / name
            rel = str(path.relative_to(root))
            if not is_protected(rel, extra):
                continue
            if len(out) >= MAX_FILES:
                out["..."] = "not compared"
                return out
            if path.is_symlink():
                out[rel] = "link:" + os.readlink(path)
            else:
                try:
                    out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
                except OSError as exc:
                    out[rel] = f"unreadable: {exc.strerror}"
    return out


def protected_changes(original: Path, patched: Path, extra: Iterable[str] = ()) -> list[str]:
    """The protected paths that differ between the two built copies: added, removed or
    changed (sorted)."""
    ext = tuple(extra)
    before, after = _protected_files(original, ext), _protected_files(patched, ext)
    return sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
