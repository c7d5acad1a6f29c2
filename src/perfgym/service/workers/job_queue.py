"""`JobQueue`: the service's bounded queue of judge/exec items, persisted in SQLite.

Item states: queued -> running -> ok | infra_error | deadline. Every transition is one committed
transaction, so a killed service restarts with every job it accepted: running items go back to
the queue (an infrastructure interruption, counted as a retry), finished ones keep their result.
Each result is written at most once: a completion must name the lease that ran the item.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfgym.errors import ConfigError, PerfgymError
from perfgym.service.status import ItemStatus
from perfgym.service.workers.output_budget import cut_to_fit
from perfgym.store.sqlite import connect, write

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS jobs (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        digest TEXT NOT NULL,
        created REAL NOT NULL,
        deadline REAL NOT NULL,
        spec TEXT NOT NULL,
        n_items INTEGER NOT NULL,
        n_done INTEGER NOT NULL DEFAULT 0,
        retried INTEGER NOT NULL DEFAULT 0,
        completed REAL,
        rewards TEXT,
        out_bytes INTEGER NOT NULL DEFAULT 0
    )""",
    """CREATE TABLE IF NOT EXISTS tasks (digest TEXT PRIMARY KEY, task TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS items (
        job_id TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        task_digest TEXT,
        payload TEXT NOT NULL,
        result TEXT,
        enqueued REAL NOT NULL,
        started REAL,
        finished REAL,
        lease INTEGER,
        PRIMARY KEY (job_id, idx)
    )""",
    "CREATE INDEX IF NOT EXISTS items_state ON items (state, enqueued)",
    "CREATE INDEX IF NOT EXISTS jobs_completed ON jobs (completed)",
)

TERMINAL = ("ok", "infra_error", "deadline")


class QueueFull(PerfgymError):
    """The queue cannot take the request now; retry after `retry_after_s`."""

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class JobConflict(PerfgymError):
    """A job id was reused for a different request."""


@dataclass
class NewItem:
    payload: dict[str, Any]
    task_digest: str | None = None
    result: dict[str, Any] | None = None  # already answered (e.g. from the result store)


@dataclass
class Leased:
    job_id: str
    idx: int
    kind: str
    attempts: int
    task_digest: str | None
    payload: dict[str, Any]
    enqueued: float


@dataclass
class Completed:
    """What `complete` did with a result."""

    accepted: bool  # False: stale lease (the item was already answered or re-leased)
    retried: bool = False  # an infrastructure failure put it back in the queue
    job_done: bool = False  # every item of its job has its result now


class JobQueue:
    """The one writer of the queue file is the service process; calls are thread-safe."""

    def __init__(self, path: str | Path, *, max_queue: int, max_attempts: int,
                 max_job_output_bytes: int = 64 << 20,
                 max_stored_output_bytes: int = 4 << 30) -> None:  # fmt: skip
        self.path = Path(path)
        self.max_queue = max_queue
        self.max_attempts = max_attempts
        self.max_job_output_bytes = max_job_output_bytes
        self.max_stored_output_bytes = max_stored_output_bytes
        self._lock = threading.Lock()
        self._conn = connect(self.path)

        def create(c: sqlite3.Connection) -> None:
            for statement in _SCHEMA:
                c.execute(statement)
            columns = {r["name"] for r in c.execute("PRAGMA table_info(jobs)")}
            if "out_bytes" not in columns:  # a queue written before output budgets
                c.execute("ALTER TABLE jobs ADD COLUMN out_bytes INTEGER NOT NULL DEFAULT 0")

        write(self._conn, create)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _write(self, fn: Any) -> Any:
        with self._lock:
            return write(self._conn, fn)

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    # -- startup --------------------------------------------------------------------------------
    def recover(self) -> tuple[int, list[str]]:
        """After a restart: running items go back to the queue (or fail after too many tries).

        Returns (items re-queued, ids of jobs whose items are all answered but whose rewards were
        never computed because the service died in between).
        """

        def fix(c: sqlite3.Connection) -> tuple[int, list[str]]:
            rows = c.execute("SELECT job_id, idx FROM items WHERE state = 'running'").fetchall()
            n = 0
            for r in rows:
                if self._requeue_or_fail(c, r["job_id"], r["idx"], "the service restarted"):
                    n += 1
            pending = c.execute(
                "SELECT id FROM jobs WHERE completed IS NULL AND n_done >= n_items"
            ).fetchall()
            return n, [p["id"] for p in pending]

        result: tuple[int, list[str]] = self._write(fix)
        return result

    # -- submission -----------------------------------------------------------------------------
    def queued(self) -> int:
        """Items waiting for a worker."""
        return int(self._read("SELECT COUNT(*) FROM items WHERE state = 'queued'")[0][0])

    def active(self) -> int:
        """Items not yet answered (queued or running)."""
        rows = self._read("SELECT COUNT(*) FROM items WHERE state IN ('queued', 'running')")
        return int(rows[0][0])

    def submit(
        self,
        job_id: str,
        kind: str,
        digest: str,
        deadline: float,
        spec: dict[str, Any],
        items: list[NewItem],
        tasks: dict[str, str],
        *,
        retry_after_s: int = 1,
    ) -> bool:
        """Enqueue a whole job atomically. False: the same job was already there (nothing is
        added, nothing runs twice). Raises JobConflict for a reused id, QueueFull when it does
        not fit."""
        now = time.time()

        def insert(c: sqlite3.Connection) -> bool:
            old = c.execute("SELECT digest FROM jobs WHERE id = ?", (job_id,)).fetchone()
            if old is not None:
                if old["digest"] != digest:
                    raise JobConflict(
                        f"job id {job_id!r} was already used for a different request; "
                        "choose a new id for new work"
                    )
                return False
            waiting = sum(1 for it in items if it.result is None)
            if waiting > self.max_queue:  # never fits: no retry can help (red team helper-79)
                raise ConfigError(
                    f"this request adds {waiting} items to judge, more than the queue ever "
                    f"holds ({self.max_queue}); split it"
                )
            active = c.execute(
                "SELECT COUNT(*) FROM items WHERE state IN ('queued', 'running')"
            ).fetchone()[0]
            if waiting and active + waiting > self.max_queue:
                raise QueueFull(
                    f"queue full: {active} items waiting, this request adds {waiting}, "
                    f"capacity {self.max_queue}",
                    retry_after_s,
                )
            done = len(items) - waiting
            answered = [json.dumps(it.result) for it in items if it.result is not None]
            c.execute(
                "INSERT INTO jobs (id, kind, digest, created, deadline, spec, n_items, n_done, "
                "out_bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (job_id, kind, digest, now, deadline, json.dumps(spec), len(items), done,
                 sum(map(len, answered))),
            )  # fmt: skip
            c.executemany(
                "INSERT OR IGNORE INTO tasks (digest, task) VALUES (?, ?)", list(tasks.items())
            )
            c.executemany(
                "INSERT INTO items (job_id, idx, state, task_digest, payload, result, enqueued, "
                "finished) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (job_id, i, "queued" if it.result is None else "ok", it.task_digest,
                     json.dumps(it.payload), None if it.result is None else json.dumps(it.result),
                     now, None if it.result is None else now)
                    for i, it in enumerate(items)
                ],
            )  # fmt: skip
            return True

        created: bool = self._write(insert)
        return created

    # -- workers --------------------------------------------------------------------------------
    def lease(self, n: int, lease: int) -> list[Leased]:
        """Take up to `n` of the oldest queued items of one kind whose job is still in time."""
        now = time.time()

        def take(c: sqlite3.Connection) -> list[Leased]:
            rows = c.execute(
                "SELECT i.job_id, i.idx, i.attempts, i.task_digest, i.payload, i.enqueued, j.kind "
                "FROM items i JOIN jobs j ON j.id = i.job_id "
                "WHERE i.state = 'queued' AND j.deadline > ? ORDER BY i.enqueued, i.rowid LIMIT ?",
                (now, n),
            ).fetchall()
            if not rows:
                return []
            kind = rows[0]["kind"]
            if rows[0]["attempts"] > 0:
                # A retried item runs alone: if it is what kills workers, it takes no other
                # item's tries with it, and items merely caught in a crash are not charged again.
                rows = rows[:1]
            rows = [r for r in rows if r["kind"] == kind]
            c.executemany(
                "UPDATE items SET state = 'running', attempts = attempts + 1, lease = ?, "
                "started = ? WHERE job_id = ? AND idx = ?",
                [(lease, now, r["job_id"], r["idx"]) for r in rows],
            )
            return [
                Leased(r["job_id"], r["idx"], kind, r["attempts"] + 1, r["task_digest"],
                       json.loads(r["payload"]), r["enqueued"])
                for r in rows
            ]  # fmt: skip

        leased: list[Leased] = self._write(take)
        return leased

    def task_json(self, digest: str) -> str:
        rows = self._read("SELECT task FROM tasks WHERE digest = ?", (digest,))
        if not rows:
            raise KeyError(f"task {digest} is not in the queue database")
        return str(rows[0]["task"])

    def complete(
        self, job_id: str, idx: int, lease: int, status: str, result: dict[str, Any]
    ) -> Completed:
        """Record a worker's result. An infrastructure failure with tries left is re-queued."""

        def finish(c: sqlite3.Connection) -> Completed:
            row = c.execute(
                "SELECT state, lease, attempts FROM items WHERE job_id = ? AND idx = ?",
                (job_id, idx),
            ).fetchone()
            if row is None or row["state"] != "running" or row["lease"] != lease:
                return Completed(accepted=False)
            if status == ItemStatus.INFRA_ERROR and row["attempts"] < self.max_attempts:
                self._requeue_or_fail(c, job_id, idx, str(result.get("reason", "")))
                return Completed(accepted=True, retried=True)
            return Completed(True, job_done=self._answer(c, job_id, idx, status, result))

        done: Completed = self._write(finish)
        return done

    def release(self, lease: int, reason: str) -> list[tuple[str, int, bool, bool]]:
        """The worker holding `lease` died: re-queue its unanswered items, or fail those out of
        tries. Returns (job_id, idx, requeued, job_done) for each item touched."""

        def back(c: sqlite3.Connection) -> list[tuple[str, int, bool, bool]]:
            rows = c.execute(
                "SELECT job_id, idx FROM items WHERE state = 'running' AND lease = ?", (lease,)
            ).fetchall()
            out = []
            for r in rows:
                requeued = self._requeue_or_fail(c, r["job_id"], r["idx"], reason)
                done = not requeued and self._job_done(c, r["job_id"])
                out.append((r["job_id"], r["idx"], requeued, done))
            return out

        touched: list[tuple[str, int, bool, bool]] = self._write(back)
        return touched

    def _requeue_or_fail(self, c: sqlite3.Connection, job_id: str, idx: int, reason: str) -> bool:
        attempts = c.execute(
            "SELECT attempts FROM items WHERE job_id = ? AND idx = ?", (job_id, idx)
        ).fetchone()["attempts"]
        if attempts < self.max_attempts:
            c.execute("UPDATE jobs SET retried = retried + 1 WHERE id = ?", (job_id,))
            c.execute(
                "UPDATE items SET state = 'queued', lease = NULL WHERE job_id = ? AND idx = ?",
                (job_id, idx),
            )
            return True
        self._answer(c, job_id, idx, "infra_error",
                     {"reason": f"infrastructure failed on all {attempts} tries; last: {reason}"})  # fmt: skip
        return False

    def _answer(
        self, c: sqlite3.Connection, job_id: str, idx: int, status: str, result: dict[str, Any]
    ) -> bool:
        """Store an item's result, its run's output cut to what is left of its job's output
        budget (`output_budget`)."""
        spent = c.execute("SELECT out_bytes FROM jobs WHERE id = ?", (job_id,)).fetchone()[0]
        room = max(0, self.max_job_output_bytes - int(spent))
        text = json.dumps(cut_to_fit(result, room, self.max_job_output_bytes))
        c.execute(
            "UPDATE items SET state = ?, result = ?, finished = ? WHERE job_id = ? AND idx = ?",
            (status, text, time.time(), job_id, idx),
        )
        c.execute("UPDATE jobs SET n_done = n_done + 1, out_bytes = out_bytes + ? WHERE id = ?",
                  (len(text), job_id))  # fmt: skip
        return self._job_done(c, job_id)

    @staticmethod
    def _job_done(c: sqlite3.Connection, job_id: str) -> bool:
        row = c.execute("SELECT n_done, n_items FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return bool(row["n_done"] >= row["n_items"])

    # -- deadlines and completion ------------------------------------------------------------------
    def expire(self, now: float | None = None) -> tuple[list[str], int]:
        """Answer 'deadline' for every unanswered item of an overdue job; returns the jobs now
        done and how many items were answered so."""
        now = time.time() if now is None else now

        def cut(c: sqlite3.Connection) -> tuple[list[str], int]:
            rows = c.execute(
                "SELECT i.job_id, i.idx, i.state FROM items i JOIN jobs j ON j.id = i.job_id "
                "WHERE i.state IN ('queued', 'running') AND j.deadline <= ?",
                (now,),
            ).fetchall()
            done = set()
            for r in rows:
                why = "running" if r["state"] == "running" else "still queued"
                if self._answer(c, r["job_id"], r["idx"], "deadline",
                                {"reason": f"the deadline passed while {why}"}):  # fmt: skip
                    done.add(r["job_id"])
            return sorted(done), len(rows)

        expired: tuple[list[str], int] = self._write(cut)
        return expired

    def finish_job(self, job_id: str, rewards: dict[str, Any] | None) -> None:
        def mark(c: sqlite3.Connection) -> None:
            c.execute(
                "UPDATE jobs SET completed = ?, rewards = ? WHERE id = ? AND completed IS NULL",
                (time.time(), None if rewards is None else json.dumps(rewards), job_id),
            )

        self._write(mark)

    def gc(self, retention_s: float) -> int:
        """Forget finished jobs older than the retention period, then the oldest finished jobs
        while the results of all jobs take more than `max_stored_output_bytes` (a GET of one
        is then 404, as of an expired job), and the inline tasks no item names any more."""
        cutoff = time.time() - retention_s

        def drop(c: sqlite3.Connection) -> int:
            n = c.execute("DELETE FROM jobs WHERE completed IS NOT NULL AND completed < ?",
                          (cutoff,)).rowcount  # fmt: skip
            total = int(c.execute("SELECT COALESCE(SUM(out_bytes), 0) FROM jobs").fetchone()[0])
            if total > self.max_stored_output_bytes:
                rows = c.execute("SELECT id, out_bytes FROM jobs WHERE completed IS NOT NULL "
                                 "ORDER BY completed").fetchall()  # fmt: skip
                for r in rows:
                    if total <= self.max_stored_output_bytes:
                        break
                    c.execute("DELETE FROM jobs WHERE id = ?", (r["id"],))
                    total -= int(r["out_bytes"])
                    n += 1
            if n:
                c.execute("DELETE FROM tasks WHERE digest NOT IN "
                          "(SELECT task_digest FROM items WHERE task_digest IS NOT NULL)")  # fmt: skip
            return n

        n: int = self._write(drop)
        return n

    # -- reading --------------------------------------------------------------------------------
    def job(self, job_id: str) -> sqlite3.Row | None:
        rows = self._read("SELECT * FROM jobs WHERE id = ?", (job_id,))
        return rows[0] if rows else None

    def items(self, job_id: str, *, answered_only: bool = False) -> list[sqlite3.Row]:
        sql = "SELECT * FROM items WHERE job_id = ?"
        if answered_only:
            sql += " AND state IN ('ok', 'infra_error', 'deadline')"
        return self._read(sql + " ORDER BY idx", (job_id,))

    def counts(self) -> dict[str, int]:
        rows = self._read("SELECT state, COUNT(*) AS n FROM items GROUP BY state")
        return {r["state"]: int(r["n"]) for r in rows}
