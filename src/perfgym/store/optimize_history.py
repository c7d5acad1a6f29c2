"""`OptimizeHistory`: every step of `perfgym optimize`, per run and task, in a SQLite file.

Its tables sit beside the result store's (the same file by default) and are created when first
opened (`CREATE TABLE IF NOT EXISTS`): they are additive, the store's migrations never read them.
A step is one proposal: written when the model's answer arrives (no verdict yet), then again
with its verdict and the acceptance decision. A rerun (`--resume`) reads the steps back and
replays them, so a run killed at any point continues where it stopped.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perfgym.errors import ConfigError
from perfgym.store.sqlite import connect, write

_TABLES = (
    """CREATE TABLE IF NOT EXISTS optimize_runs (
        run TEXT PRIMARY KEY,
        created REAL NOT NULL,
        config TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'running',
        summary TEXT NOT NULL DEFAULT '{}'
    )""",
    """CREATE TABLE IF NOT EXISTS optimize_steps (
        run TEXT NOT NULL,
        task_id TEXT NOT NULL,
        iteration INTEGER NOT NULL,
        slot INTEGER NOT NULL,
        purpose TEXT NOT NULL,
        parent TEXT NOT NULL DEFAULT '',
        template_id TEXT NOT NULL DEFAULT '',
        template_hash TEXT NOT NULL DEFAULT '',
        call_key TEXT NOT NULL DEFAULT '',
        answer TEXT,
        model_error TEXT NOT NULL DEFAULT '',
        tokens INTEGER NOT NULL DEFAULT 0,
        cost_usd REAL NOT NULL DEFAULT 0,
        verdict TEXT,
        stage TEXT NOT NULL DEFAULT '',
        accepted INTEGER,
        why TEXT NOT NULL DEFAULT '',
        ratio REAL,
        ci_low REAL,
        ci_high REAL,
        extra TEXT NOT NULL DEFAULT '{}',
        created REAL NOT NULL,
        judged REAL,
        PRIMARY KEY (run, task_id, iteration, slot)
    )""",
)


@dataclass
class Step:
    """One proposal of one task in one iteration (slot: its index among the round's)."""

    task_id: str
    iteration: int
    slot: int
    purpose: str
    parent: str = ""
    template_id: str = ""
    template_hash: str = ""
    call_key: str = ""
    answer: str | None = None
    model_error: str = ""
    tokens: int = 0
    cost_usd: float = 0.0
    verdict: dict[str, Any] | None = None
    stage: str = ""
    accepted: bool | None = None
    why: str = ""
    ratio: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def judged(self) -> bool:
        return self.accepted is not None


_COLUMNS = ("task_id", "iteration", "slot", "purpose", "parent", "template_id", "template_hash",
            "call_key", "answer", "model_error", "tokens", "cost_usd", "verdict", "stage",
            "accepted", "why", "ratio", "ci_low", "ci_high", "extra")  # fmt: skip


def _row(step: Step) -> tuple[Any, ...]:
    values = []
    for name in _COLUMNS:
        v = getattr(step, name)
        if name in ("verdict", "extra"):
            v = None if v is None else json.dumps(v, sort_keys=True)
        elif name == "accepted":
            v = None if v is None else int(v)
        values.append(v)
    return tuple(values)


class OptimizeHistory:
    """The history of optimisation runs in one SQLite file (WAL: a killed writer loses nothing
    it committed)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._conn = connect(self.path)
        except Exception as exc:  # sqlite3.DatabaseError, OSError: not a store we can open
            raise ConfigError(f"cannot open the history store {self.path}: {exc}") from exc

        def create(c: Any) -> None:
            for statement in _TABLES:
                c.execute(statement)

        write(self._conn, create)

    def close(self) -> None:
        self._conn.close()

    # -- runs -----------------------------------------------------------------------------------
    def run_config(self, run: str) -> dict[str, Any] | None:
        row = self._conn.execute(
            "SELECT config FROM optimize_runs WHERE run = ?", (run,)
        ).fetchone()
        return None if row is None else dict(json.loads(row["config"]))

    def start_run(self, run: str, config: dict[str, Any]) -> None:
        text = json.dumps(config, sort_keys=True)
        write(self._conn, lambda c: c.execute(
            "INSERT OR IGNORE INTO optimize_runs (run, created, config) VALUES (?, ?, ?)",
            (run, time.time(), text)))  # fmt: skip

    def finish_run(self, run: str, state: str, summary: dict[str, Any]) -> None:
        text = json.dumps(summary, sort_keys=True)
        write(self._conn, lambda c: c.execute(
            "UPDATE optimize_runs SET state = ?, summary = ? WHERE run = ?", (state, text, run)))  # fmt: skip

    def run_state(self, run: str) -> tuple[str, dict[str, Any]] | None:
        row = self._conn.execute(
            "SELECT state, summary FROM optimize_runs WHERE run = ?", (run,)
        ).fetchone()
        return None if row is None else (str(row["state"]), dict(json.loads(row["summary"])))

    # -- steps ----------------------------------------------------------------------------------
    def put(self, run: str, steps: list[Step]) -> None:
        """Write (or overwrite) steps in one transaction."""
        if not steps:
            return
        now = time.time()
        marks = ", ".join("?" for _ in _COLUMNS)
        sql = (f"INSERT OR REPLACE INTO optimize_steps (run, {', '.join(_COLUMNS)}, created, judged) "
               f"VALUES (?, {marks}, ?, ?)")  # fmt: skip
        rows = [(run, *_row(s), now, now if s.judged else None) for s in steps]
        write(self._conn, lambda c: c.executemany(sql, rows))

    def steps(self, run: str, task_id: str | None = None) -> list[Step]:
        """The run's steps (one task's when given), in task, iteration, slot order."""
        sql = "SELECT * FROM optimize_steps WHERE run = ?"
        args: tuple[Any, ...] = (run,)
        if task_id is not None:
            sql += " AND task_id = ?"
            args = (run, task_id)
        rows = self._conn.execute(sql + " ORDER BY task_id, iteration, slot", args).fetchall()
        out = []
        for r in rows:
            values = {name: r[name] for name in _COLUMNS}
            values["verdict"] = None if r["verdict"] is None else json.loads(r["verdict"])
            values["extra"] = json.loads(r["extra"] or "{}")
            values["accepted"] = None if r["accepted"] is None else bool(r["accepted"])
            out.append(Step(**values))
        return out

    def count(self, run: str) -> tuple[int, int]:
        """(steps, judged steps) of a run."""
        row = self._conn.execute(
            "SELECT COUNT(*), COUNT(accepted) FROM optimize_steps WHERE run = ?", (run,)
        ).fetchone()
        return int(row[0]), int(row[1])
