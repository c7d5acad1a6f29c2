"""`ResultStore`: verdicts in one SQLite file, keyed by content, machine and calibration epoch."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from perfgym import __version__
from perfgym.judge.verdict import Verdict
from perfgym.machine import fingerprint
from perfgym.store import schema
from perfgym.store.jsontext import dump_json, load_json
from perfgym.store.sqlite import connect, write

#: Lookups with this machine accept a verdict measured on any host.
ANY_MACHINE = "*"

#: SQLite's default cap on `?` parameters in one statement is 32766; stay far below.
_CHUNK = 500


class StoreConfig(BaseModel):
    """Where the store lives and which calibration epoch new results belong to."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field("results/perfgym.sqlite", description="SQLite file (created on first use).")
    epoch: str = Field(
        "0",
        description="Calibration epoch of the timings written now: results from different "
        "epochs of one machine are never mixed (the timing layer bumps it on recalibration).",
    )
    busy_timeout_s: float = Field(
        60.0, gt=0, description="How long a writer waits for another process's lock."
    )


def _col(text: str) -> str:
    """A text column's value: SQLite stores UTF-8, so a lone surrogate is kept as its escape
    (`\\ud800`; the verdict's JSON keeps the string itself)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@dataclass(frozen=True)
class StoredVerdict:
    """One row of the verdicts table."""

    key: str
    machine: str
    epoch: str
    run: str
    created: float
    verdict: Verdict


class ResultStore:
    """Thread-safe handle on one store file; several processes may write the same file."""

    def __init__(self, config: StoreConfig | str | Path | None = None) -> None:
        if config is None:
            config = StoreConfig()
        elif not isinstance(config, StoreConfig):
            config = StoreConfig(path=str(config))
        self.config = config
        self.path = Path(config.path)
        self.machine = fingerprint()
        self._lock = threading.Lock()
        self._conn = connect(self.path, busy_timeout_s=config.busy_timeout_s)
        schema.migrate(self._conn)

    # -- lifecycle ------------------------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- verdicts -------------------------------------------------------------------------------
    def put_verdicts(
        self,
        items: Sequence[tuple[str, Verdict]],
        *,
        run: str = "",
        machine: str | None = None,
        epoch: str | None = None,
    ) -> int:
        """Store (key, verdict) pairs; a later verdict for the same key, machine and epoch
        replaces the earlier one (the newest measurement is the one replay reproduces).
        `machine` defaults to each verdict's own, then to this host's fingerprint."""
        epoch = epoch if epoch is not None else self.config.epoch
        now = time.time()
        # A verdict is filed under the machine that measured it (a service or Ray node may be
        # another host than the one writing the store).
        rows = [
            (key, machine or v.machine or self.machine, epoch, _col(v.task_id), _col(v.suite),
             _col(v.language), v.stage.value, int(v.infra_error), now, __version__, dump_json(v),
             _col(run))
            for key, v in items
        ]  # fmt: skip

        def insert(conn: sqlite3.Connection) -> None:
            conn.executemany(
                """INSERT INTO verdicts (key, machine, epoch, task_id, suite, language, stage,
                       infra_error, created, perfgym_version, verdict, run)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT (key, machine, epoch) DO UPDATE SET
                       task_id = excluded.task_id, suite = excluded.suite,
                       language = excluded.language, stage = excluded.stage,
                       infra_error = excluded.infra_error, created = excluded.created,
                       perfgym_version = excluded.perfgym_version,
                       verdict = excluded.verdict, run = excluded.run""",
                rows,
            )

        with self._lock:
            write(self._conn, insert)
        return len(rows)

    def get_verdicts(
        self,
        keys: Sequence[str],
        *,
        machine: str | None = None,
        epoch: str | None = None,
        run: str | None = None,
        problems: list[str] | None = None,
    ) -> dict[str, Verdict]:
        """key -> stored verdict for every key found (the newest when `machine` is ANY_MACHINE).

        run: only verdicts that run wrote (an interrupted run's, to resume it).
        problems: where a stored verdict that no longer reads as one is noted (it is skipped,
        as if missing); without it such a row is an error.
        """
        machine = machine or self.machine
        epoch = epoch if epoch is not None else self.config.epoch
        found: dict[str, Verdict] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), _CHUNK):
            chunk = unique[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT key, verdict FROM verdicts WHERE key IN ({marks}) AND epoch = ?"
            params: list[Any] = [*chunk, epoch]
            if machine != ANY_MACHINE:
                sql += " AND machine = ?"
                params.append(machine)
            if run is not None:
                sql += " AND run = ?"
                params.append(_col(run))
            sql += " ORDER BY created"
            with self._lock:
                rows = self._conn.execute(sql, params).fetchall()
            for row in rows:  # newest last, so it wins
                try:
                    found[row["key"]] = load_json(Verdict, row["verdict"])
                except (ValueError, TypeError) as exc:
                    if problems is None:
                        raise
                    found.pop(row["key"], None)
                    why = (str(exc).splitlines() or [type(exc).__name__])[0]
                    problems.append(f"stored verdict {row['key'][:12]} unreadable ({why})")
        return found

    def iter_verdicts(self, *, task_id: str | None = None) -> Iterator[StoredVerdict]:
        """Every stored verdict (optionally of one task), oldest first."""
        sql = "SELECT key, machine, epoch, run, created, verdict FROM verdicts"
        params: list[Any] = []
        if task_id is not None:
            sql += " WHERE task_id = ?"
            params.append(_col(task_id))
        sql += " ORDER BY id"
        with self._lock:
            rows = self._conn.execute(sql, params).fetchall()
        for r in rows:
            yield StoredVerdict(
                key=r["key"],
                machine=r["machine"],
                epoch=r["epoch"],
                run=r["run"],
                created=r["created"],
                verdict=load_json(Verdict, r["verdict"]),
            )

    def count_verdicts(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0])

    def schema_version(self) -> int:
        with self._lock:
            return schema.version_of(self._conn)
