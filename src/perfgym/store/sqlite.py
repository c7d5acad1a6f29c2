"""Opening SQLite the one way perfgym uses it: WAL, a busy timeout, and retried write transactions."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def connect(path: str | Path, *, busy_timeout_s: float = 60.0) -> sqlite3.Connection:
    """A connection in WAL mode (readers never block the writer; writers queue on the lock).

    Autocommit mode: every write goes through `write()`, which opens `BEGIN IMMEDIATE` so that
    two processes never both read-then-upgrade and deadlock on the write lock.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(
        str(path), timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
    )
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        conn.close()
        raise sqlite3.OperationalError(f"{path}: WAL mode refused (journal_mode={mode})")
    # NORMAL is durable across a killed process in WAL mode (only an OS crash can lose the
    # last transactions), and several times faster than FULL.
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One IMMEDIATE transaction: committed on success, rolled back on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def write(
    conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T], *, deadline_s: float = 120.0
) -> T:
    """Run `fn` in a write transaction, retrying while another process holds the lock.

    The busy timeout already waits inside SQLite; this loop covers the cases it does not
    (SQLITE_BUSY returned at once on a WAL checkpoint or snapshot conflict).
    """
    end = time.monotonic() + deadline_s
    delay = 0.005
    while True:
        try:
            with transaction(conn):
                return fn(conn)
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if time.monotonic() > end:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)
