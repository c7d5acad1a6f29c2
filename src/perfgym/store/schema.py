"""The store's schema and its migrations, tracked by SQLite's `user_version`."""

from __future__ import annotations

import sqlite3

from perfgym.errors import ConfigError
from perfgym.store.sqlite import write

# Each entry takes a database at version i to version i+1. Never edit a released step:
# append a new one, so every existing store file can be brought forward.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 1: verdicts keyed by content, machine and calibration epoch.
    (
        """CREATE TABLE verdicts (
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL,
            machine TEXT NOT NULL,
            epoch TEXT NOT NULL,
            task_id TEXT NOT NULL,
            suite TEXT NOT NULL DEFAULT '',
            language TEXT NOT NULL DEFAULT '',
            stage TEXT NOT NULL,
            infra_error INTEGER NOT NULL,
            created REAL NOT NULL,
            perfgym_version TEXT NOT NULL,
            verdict TEXT NOT NULL,
            UNIQUE (key, machine, epoch)
        )""",
        "CREATE INDEX verdicts_task ON verdicts (task_id)",
    ),
    # 2: a table for raw sandbox executions, which nothing writes; step 4 drops it.
    (
        """CREATE TABLE executions (
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL,
            machine TEXT NOT NULL,
            epoch TEXT NOT NULL,
            status TEXT NOT NULL,
            created REAL NOT NULL,
            perfgym_version TEXT NOT NULL,
            request TEXT NOT NULL,
            execution TEXT NOT NULL
        )""",
        "CREATE INDEX executions_key ON executions (key, machine, epoch)",
    ),
    # 3: which run (evaluation, service job) wrote a verdict, for export and audits.
    ("ALTER TABLE verdicts ADD COLUMN run TEXT NOT NULL DEFAULT ''",),
    # 4: the store keeps verdicts only (a raw run is not a result): step 2's table goes.
    ("DROP INDEX executions_key", "DROP TABLE executions"),
)

VERSION = len(MIGRATIONS)


def version_of(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, target: int = VERSION) -> int:
    """Bring the database to `target` (default: the newest); returns the version it had.

    Each step runs in its own transaction with the version bump, so concurrent openers either
    see the old version and wait, or the new one; a step is never applied twice.
    """
    start = version_of(conn)
    if start > VERSION:
        raise ConfigError(
            f"the store has schema version {start}, newer than this perfgym's {VERSION}; "
            "upgrade perfgym to read it"
        )
    for step in range(start, target):

        def apply(c: sqlite3.Connection, step: int = step) -> None:
            if version_of(c) != step:  # another process migrated meanwhile
                return
            for statement in MIGRATIONS[step]:
                c.execute(statement)
            c.execute(f"PRAGMA user_version = {step + 1}")

        write(conn, apply)
    return start
