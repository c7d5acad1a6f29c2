"""Outputs a command created and holds no result yet: removed when the command fails.

`check_writable` records every file and folder that did not exist before the command made
room for its outputs; when the command then fails (`fail`, exit 2), each one that holds no
result (an empty file, a results file with only its header, an SQLite store with no row, a
folder left empty) is removed, so a failed command leaves the working folder as it found
it. Anything holding a result stays: a rerun resumes from it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

#: Tables that record a run's settings, not its results: a store holding rows only there (an
#: optimize run that stopped before its first step) holds no result.
BOOKKEEPING = frozenset({"optimize_runs"})

#: Paths this command created, in creation order (folders before the files inside them).
_created: list[Path] = []


def reset() -> None:
    """Forget what an earlier command in this process created (each command starts afresh)."""
    _created.clear()


def note_missing(path: Path) -> None:
    """Record `path` and each of its missing parent folders, before they are created."""
    missing = []
    for p in [path, *path.parents]:
        if p.exists() or p.is_symlink():
            break
        missing.append(p.absolute())
    _created.extend(reversed(missing))


def holds_no_result(path: Path) -> bool:
    """Whether a file this command created is still without a result."""
    try:
        if path.stat().st_size == 0:
            return True
        with path.open("rb") as f:
            head = f.read(16)
        if head.startswith(b"SQLite format 3"):
            return _empty_store(path)
        return _only_header(path)
    except OSError:
        return False


def _empty_store(path: Path) -> bool:
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = con.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()
            tables = [r[0] for r in rows if r[0] not in BOOKKEEPING]
            return all(
                con.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] == 0 for t in tables
            )
        finally:
            con.close()
    except sqlite3.Error:
        return False


def _only_header(path: Path) -> bool:
    """A JSONL file whose lines are all a results header (no verdict, no sample)."""
    from perfgym.store.results_file import HEADER_KEY

    with path.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                return False
            header = isinstance(obj, dict) and (
                set(obj) == {HEADER_KEY} or obj.get("kind") == "header"  # eval's; the agent's
            )
            if not header:
                return False
    return True


def remove_unfinished() -> None:
    """Remove what this command created and holds no result (called on failure)."""
    for p in reversed(_created):
        if p.is_dir() and not p.is_symlink():
            for side in p.glob(".*.probe"):  # a probe left by a check killed mid-way
                side.unlink(missing_ok=True)
            try:
                p.rmdir()  # only when empty
            except OSError:
                pass
        elif p.is_file() and holds_no_result(p):
            for extra in (p, Path(f"{p}-wal"), Path(f"{p}-shm"), Path(f"{p}-journal")):
                extra.unlink(missing_ok=True)
    _created.clear()
