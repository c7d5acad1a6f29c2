"""`CallLog`: every model call's answer, content-addressed, in the result store's SQLite file.

A row is written as soon as its answer arrives (one transaction each), so a rerun after a crash
or `kill -9` replays every stored answer and requests only the calls that were in flight. The
key is the call's content address (model, messages, sampling parameters, seed, sample index),
computed by the caller; the table lives beside the verdicts in the same file, created on first
use (`CREATE TABLE IF NOT EXISTS`: the verdict schema's version is not touched).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from perfgym import __version__
from perfgym.store.sqlite import connect, write

_CREATE = (
    """CREATE TABLE IF NOT EXISTS model_calls (
        key TEXT PRIMARY KEY,
        model TEXT NOT NULL,
        purpose TEXT NOT NULL DEFAULT '',
        created REAL NOT NULL,
        perfgym_version TEXT NOT NULL,
        request TEXT NOT NULL,
        answer TEXT NOT NULL
    )""",
)


class CallLog:
    """Thread-safe handle on the call table of one SQLite file (several processes may share it)."""

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 60.0) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn = connect(self.path, busy_timeout_s=busy_timeout_s)

        def create(conn: sqlite3.Connection) -> None:
            for statement in _CREATE:
                conn.execute(statement)

        write(self._conn, create)

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored answer of call `key`, or None."""
        with self._lock:
            row = self._conn.execute(
                "SELECT answer FROM model_calls WHERE key = ?", (key,)
            ).fetchone()
        return None if row is None else dict(json.loads(row["answer"]))

    def put(
        self, key: str, *, model: str, purpose: str, request: dict[str, Any], answer: dict[str, Any]
    ) -> bool:
        """Store one call's answer; False (and nothing changed) if the key was already stored."""
        row = (key, model, purpose, time.time(), __version__,
               json.dumps(request, sort_keys=True, ensure_ascii=False),
               json.dumps(answer, sort_keys=True, ensure_ascii=False))  # fmt: skip

        def insert(conn: sqlite3.Connection) -> int:
            cur = conn.execute(
                """INSERT INTO model_calls (key, model, purpose, created, perfgym_version,
                       request, answer) VALUES (?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT (key) DO NOTHING""",
                row,
            )
            return cur.rowcount

        with self._lock:
            return write(self._conn, insert) == 1

    def count(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM model_calls").fetchone()[0])

    def rows(self, *, model: str | None = None) -> Iterator[dict[str, Any]]:
        """Every stored call (key, model, purpose, created, request, answer), oldest first."""
        sql = "SELECT key, model, purpose, created, request, answer FROM model_calls"
        args: tuple[str, ...] = ()
        if model is not None:
            sql, args = sql + " WHERE model = ?", (model,)
        with self._lock:
            fetched = self._conn.execute(sql + " ORDER BY created, key", args).fetchall()
        for r in fetched:
            yield {"key": r["key"], "model": r["model"], "purpose": r["purpose"],
                   "created": r["created"], "request": json.loads(r["request"]),
                   "answer": json.loads(r["answer"])}  # fmt: skip

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> CallLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
