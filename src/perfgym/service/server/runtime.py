"""`ServiceRuntime`: the queue, store, dispatcher and job watchers one service instance runs."""

from __future__ import annotations

import asyncio
import math
import os
import threading
import time
from pathlib import Path

from perfgym.machine import fingerprint
from perfgym.sandbox.view import PRIVATE_ENV
from perfgym.service.config import ServiceConfig
from perfgym.service.models import JobView
from perfgym.service.server.intake import Intake
from perfgym.service.server.rendered_jobs import RenderedJobs
from perfgym.service.server.views import job_view
from perfgym.service.workers.dispatcher import Dispatcher
from perfgym.service.workers.job_queue import JobQueue
from perfgym.service.workers.stats import ServiceStats
from perfgym.store.result_store import ResultStore, StoreConfig


def private_state(state: Path, databases: list[Path]) -> None:
    """The state directory 0700 and each SQLite database 0600, created so before SQLite opens
    them: they hold every client's submissions. SQLite gives a database's -wal, -shm and
    -journal files the database file's own mode; any left by an earlier run are fixed too."""
    state.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(state, 0o700)
    for db in databases:
        db.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.close(os.open(db, os.O_WRONLY | os.O_CREAT, 0o600))
        for path in (db, *(db.with_name(db.name + s) for s in ("-wal", "-shm", "-journal"))):
            try:
                os.chmod(path, 0o600)
            except FileNotFoundError:
                pass


def hide_from_runs(paths: list[Path]) -> None:
    """Name the state directory and store in $PERFGYM_PRIVATE_PATHS, which the worker
    processes inherit: no run they start sees them, wherever they lie (`sandbox.view`)."""
    have = [p for p in os.environ.get(PRIVATE_ENV, "").split(os.pathsep) if p]
    for path in paths:
        real = os.path.realpath(path)
        if real not in have:
            have.append(real)
    os.environ[PRIVATE_ENV] = os.pathsep.join(have)


class JobWatch:
    """Wakes the request handlers waiting on a job when the dispatcher thread moves it."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._events: dict[str, set[asyncio.Event]] = {}
        self._lock = threading.Lock()

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def notify(self, job_id: str) -> None:
        loop = self._loop
        with self._lock:
            events = list(self._events.get(job_id, ()))
        if loop is None or not events:
            return
        for ev in events:
            try:
                loop.call_soon_threadsafe(ev.set)
            except RuntimeError:  # the loop is closing
                return

    async def wait(self, job_id: str, timeout: float) -> None:
        ev = asyncio.Event()
        with self._lock:
            self._events.setdefault(job_id, set()).add(ev)
        try:
            await asyncio.wait_for(ev.wait(), max(timeout, 0.0))
        except TimeoutError:
            pass
        finally:
            with self._lock:
                waiting = self._events.get(job_id)
                if waiting is not None:
                    waiting.discard(ev)
                    if not waiting:
                        del self._events[job_id]


#: Bytes of finished jobs' answers kept rendered (`RenderedJobs`).
RENDERED_BYTES = 256 << 20


class ServiceRuntime:
    """Everything behind the HTTP routes; started and stopped by the app's lifespan."""

    def __init__(self, config: ServiceConfig) -> None:
        config.check_bind()
        self.config = config
        self.machine = fingerprint()
        self.stats = ServiceStats()
        self.watch = JobWatch()
        state = Path(config.state_dir)
        private_state(state, [state / "queue.sqlite", Path(config.store_path())])
        hide_from_runs([state, Path(config.store_path())])
        self.queue = JobQueue(state / "queue.sqlite", max_queue=config.max_queue,
                              max_attempts=config.max_attempts,
                              max_job_output_bytes=config.max_job_output_bytes,
                              max_stored_output_bytes=config.max_stored_output_bytes)  # fmt: skip
        self.store = ResultStore(StoreConfig(path=config.store_path(), epoch=config.epoch))
        self.intake = Intake(config, self.store)
        self.dispatcher = Dispatcher(self.queue, config, self.stats, self.store, self.watch.notify)
        self.rendered = RenderedJobs(RENDERED_BYTES)
        self.started = time.time()

    def start(self) -> None:
        self.dispatcher.start()

    def stop(self) -> None:
        self.dispatcher.stop()
        self.queue.close()
        self.store.close()

    def view(self, job_id: str) -> JobView | None:
        job = self.queue.job(job_id)
        if job is None:
            return None
        return job_view(job, self.queue.items(job_id))

    def finished_body(self, job_id: str) -> bytes | None:
        """A finished job's JSON answer, rendered once and kept; None for a job unknown or
        still running."""
        job = self.queue.job(job_id)
        if job is None:
            self.rendered.forget(job_id)  # forgotten by the queue (retention, the stored cap)
            return None
        if job["completed"] is None:
            return None
        return self.rendered.get(job_id, lambda: job_view(job, self.queue.items(job_id)))

    def retry_after_s(self) -> int:
        """When the queue will probably have room: its backlog over the recent throughput."""
        rate = self.stats.throughput()
        backlog = self.queue.active()
        if rate <= 0:
            return 5
        return int(min(60, max(1, math.ceil(backlog / rate / 4))))
