"""A harness task's folder as its runs see it (everything but its solutions), and its digest.

A PerfCodeBench task's build and run read its folder's files (the harness, its headers, the
instance file), which the task's fields do not hold. So the task's content hash, the store's
keys and the build folder's key take them in by `folder_digest`: before, a task whose harness
changed kept the old one's stored verdicts and built programs (red team helper-92: a candidate
wrong under a fixed harness was OK from the store, and from the shared build folder, built
against the buggy one).
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

#: A task's folders that hold solutions (its baseline, its expert reference, published models'
#: candidates): never visible to a run, which gets its own variant. A candidate that could read
#: them would `#include "../reference/solution.c"` and score as the reference.
SOLUTION_DIRS = frozenset({"baseline", "reference", "candidate", "candidates"})


def visible_entries(task_root: Path) -> list[Path]:
    """The entries of `task_root` a run sees (sorted): all but `SOLUTION_DIRS`."""
    return [p for p in sorted(task_root.iterdir()) if p.name not in SOLUTION_DIRS]


#: Files larger than this enter the digest by size and modification time only.
HASHED_BYTES = 16 << 20


def folder_digest(task_root: Path) -> str:
    """SHA-256 over every file a run of the task can read in its folder, each one's path
    within the folder and its bytes (a file over `HASHED_BYTES`: its size and modification
    time). Links are followed, to files and to folders (a run reads through them: red team
    helper-94 fixed a header behind `inc -> ../shared-include` and the digest stayed), each
    real folder once. Read anew each time."""
    h = hashlib.sha256()
    seen: set[str] = set()
    for entry in visible_entries(task_root):
        for rel, path in _files(entry, entry.name, seen):
            h.update(rel.encode("utf-8", "surrogateescape") + b"\0")
            h.update(_bytes_of(path))
    return h.hexdigest()


def _files(path: Path, rel: str, seen: set[str]) -> list[tuple[str, Path]]:
    """(its path within the task's folder, the file) for `path` and everything under it,
    following links; a folder already walked (a link loop) is named, not walked again."""
    if not path.is_dir():
        return [(rel, path)]
    real = os.path.realpath(path)
    if real in seen:
        return [(rel, path)]  # named as a folder (`_bytes_of`), not walked again
    seen.add(real)
    out: list[tuple[str, Path]] = []
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return [(rel, path)]
    for name in names:
        out += _files(path / name, f"{rel}/{name}", seen)
    return out


def _bytes_of(path: Path) -> bytes:
    try:
        if path.is_dir():
            return b"folder:" + os.path.realpath(path).encode("utf-8", "surrogateescape")
        st = path.stat()
        if st.st_size > HASHED_BYTES:
            return f"large:{st.st_size}:{st.st_mtime_ns}".encode()
        return b"file:" + hashlib.sha256(path.read_bytes()).digest()
    except OSError as exc:
        return f"unreadable:{type(exc).__name__}".encode()


@functools.lru_cache(maxsize=64)
def tree_fingerprint(folder: str) -> str:
    """A cheap fingerprint of a (large) folder of libraries: every file's path, size and
    modification time; '' when there is none. Kept per process (PerfCodeBench's external/
    libraries are thousands of files, read by every harness build)."""
    root = Path(folder)
    if not root.is_dir():
        return ""
    h = hashlib.sha256()
    for top, dirs, names in os.walk(root):
        dirs.sort()
        for n in sorted(names):
            p = Path(top) / n
            try:
                st = p.stat()
            except OSError:
                continue
            rel = p.relative_to(root).as_posix().encode("utf-8", "surrogateescape")
            h.update(rel + f"\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()
