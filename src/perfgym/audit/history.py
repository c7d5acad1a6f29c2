"""`AuditHistory`: `perfgym audit` results in the SQLite store, one row per audited task.

An audit run is named by construction: the sha256 of its header (suite, probes, repeats, hidden,
machine, time limit), so a rerun of the same audit on the same machine finds the tasks it
finished, and a different audit never reads them. Tables sit beside the result store's
(`CREATE TABLE IF NOT EXISTS`: additive, the store's migrations never read them).
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from perfgym.audit.results import TaskAudit
from perfgym.errors import ConfigError
from perfgym.store.sqlite import connect, write

_TABLES = (
    """CREATE TABLE IF NOT EXISTS audit_runs (
        run TEXT PRIMARY KEY,
        suite TEXT NOT NULL,
        created REAL NOT NULL,
        header TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS audit_tasks (
        run TEXT NOT NULL,
        task_id TEXT NOT NULL,
        worst TEXT NOT NULL,
        audit TEXT NOT NULL,
        created REAL NOT NULL,
        PRIMARY KEY (run, task_id)
    )""",
)


def run_key(header: dict[str, Any]) -> str:
    """The audit's name: a digest of what was asked and where."""
    return hashlib.sha256(json.dumps(header, sort_keys=True).encode()).hexdigest()[:32]


class AuditHistory:
    """Audit runs and their finished tasks in one SQLite file (WAL: a killed writer loses
    nothing it committed)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._conn = connect(self.path)

            def create(c: Any) -> None:
                for statement in _TABLES:
                    c.execute(statement)

            write(self._conn, create)
        except Exception as exc:  # sqlite3.DatabaseError, OSError: not a store we can open
            raise ConfigError(f"cannot open the store {self.path}: {exc}") from exc

    def close(self) -> None:
        self._conn.close()

    def start(self, header: dict[str, Any]) -> str:
        run = run_key(header)
        text = json.dumps(header, sort_keys=True)
        write(self._conn, lambda c: c.execute(
            "INSERT OR IGNORE INTO audit_runs (run, suite, created, header) VALUES (?, ?, ?, ?)",
            (run, str(header.get("suite", "")), time.time(), text)))  # fmt: skip
        return run

    def put(self, run: str, audit: TaskAudit) -> None:
        row = (run, audit.task_id, audit.worst().value, audit.model_dump_json(), time.time())
        write(self._conn, lambda c: c.execute(
            "INSERT OR REPLACE INTO audit_tasks (run, task_id, worst, audit, created) "
            "VALUES (?, ?, ?, ?, ?)", row))  # fmt: skip

    def done(self, run: str) -> dict[str, TaskAudit]:
        """The run's finished tasks (a row that no longer reads as a `TaskAudit` is skipped:
        that task is audited again)."""
        rows = self._conn.execute(
            "SELECT task_id, audit FROM audit_tasks WHERE run = ? ORDER BY task_id", (run,)
        ).fetchall()
        out: dict[str, TaskAudit] = {}
        for r in rows:
            try:
                out[str(r["task_id"])] = TaskAudit.model_validate_json(r["audit"])
            except ValidationError:
                continue
        return out

    def forget(self, run: str) -> None:
        write(self._conn, lambda c: c.execute("DELETE FROM audit_tasks WHERE run = ?", (run,)))

    def runs(self, suite: str | None = None) -> list[tuple[str, dict[str, Any]]]:
        """(run, header) of every stored audit (of `suite`), newest first."""
        sql = "SELECT run, header FROM audit_runs"
        args: tuple[str, ...] = ()
        if suite is not None:
            sql, args = sql + " WHERE suite = ?", (suite,)
        rows = self._conn.execute(sql + " ORDER BY created DESC", args).fetchall()
        return [(str(r["run"]), dict(json.loads(r["header"]))) for r in rows]
