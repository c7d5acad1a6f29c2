"""`PythonWorkerPool`: warm workers serving calls concurrently, each call on the next free one."""

from __future__ import annotations

import collections
import copy
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from perfgym.sandbox.base import SandboxConfig
from perfgym.sandbox.batch_messages import BatchResult
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.pyworker.worker import PythonWorker
from perfgym.sandbox.worker_messages import (
    DEFAULT_CALL_LIMITS,
    CallResult,
    ProgramResult,
    call_request,
    call_result,
)


class PythonWorkerPool:
    """`size` warm workers (default: one per core) serving calls concurrently.

    `hide`: host paths every call of this pool must not see, beyond the configured ones (see
    `hiding`)."""

    def __init__(self, size: int | None = None, config: SandboxConfig | None = None) -> None:
        self.size = size or len(os.sched_getaffinity(0))
        self.workers = [PythonWorker(config) for _ in range(self.size)]
        cores = sorted(os.sched_getaffinity(0))
        for i, w in enumerate(self.workers):
            w.home_core = cores[i % len(cores)]
        self._free: list[PythonWorker] = list(self.workers)
        self._freed = threading.Condition()
        self._executor = ThreadPoolExecutor(max_workers=self.size)
        self.hide: tuple[str, ...] = ()

    def _take(self, core: int | Sequence[int] | None = None) -> PythonWorker:
        """A free worker, waiting for one. For a call on one `core`, a free worker whose home
        core it is: its zygote already sits there, and a call forked right after the zygote
        moved cores costs more than one after a call on the same core (red team helper-68:
        +0.05-0.11 ms of a trivial call's CPU, +0.3-0.5 ms of its wall time), so calls on
        chosen cores keep each worker on one. Otherwise one whose home core the fewest busy
        workers share (two batches on one core while another idles would halve their speed)."""
        with self._freed:
            while not self._free:
                self._freed.wait()
            if isinstance(core, int):
                for worker in self._free:
                    if worker.home_core == core:
                        self._free.remove(worker)
                        return worker
            busy = collections.Counter(w.home_core for w in self.workers if w not in self._free)
            worker = min(self._free, key=lambda w: busy[w.home_core])
            self._free.remove(worker)
            return worker

    def _give(self, worker: PythonWorker) -> None:
        with self._freed:
            self._free.append(worker)
            self._freed.notify()

    def hiding(self, paths: Sequence[str]) -> PythonWorkerPool:
        """A view of this pool, on the same workers, whose calls also hide `paths` (a worker
        that shows one is restarted hiding it). Nothing of this pool changes; close the pool,
        not its views."""
        view = copy.copy(self)
        view.hide = tuple(dict.fromkeys([*self.hide, *map(str, paths)]))
        return view

    def call(self, source: str, entry: str | None, args: Sequence[Any] = (),
             limits: Limits | None = None, *,
             core: int | Sequence[int] | None = None) -> CallResult:  # fmt: skip
        """`PythonWorker.call` on the next free worker, one whose home core `core` is if one is
        free (`core`: see there)."""
        worker = self._take(core)
        try:
            return worker.call(source, entry, args, limits, hide=self.hide, core=core)
        finally:
            self._give(worker)

    def check_call(self, source: str, checker: str, entry: str,
                   limits: Limits | None = None, *,
                   core: int | Sequence[int] | None = None) -> CallResult:  # fmt: skip
        """`PythonWorker.check_call` on the next free worker, as `call` chooses it."""
        worker = self._take(core)
        try:
            return worker.check_call(source, checker, entry, limits, hide=self.hide, core=core)
        finally:
            self._give(worker)

    def batch(self, source: str, entry: str, tests: Sequence[tuple[Sequence[Any], Limits]],
              limits: Limits, *, fail_fast: bool = False) -> BatchResult:  # fmt: skip
        """`PythonWorker.batch` on the next free worker."""
        worker = self._take()
        try:
            return worker.batch(source, entry, tests, limits, fail_fast=fail_fast, hide=self.hide)
        finally:
            self._give(worker)

    def stats(self) -> dict[str, int]:
        """The workers' counters summed (for a health check): `calls`, `restarts` (a worker
        started again: a failed cleanup, a crash) and `failed_cleanups`."""
        total = {"workers": self.size, "calls": 0, "restarts": 0, "failed_cleanups": 0}
        for w in self.workers:
            for k, v in w.stats().items():
                total[k] += v
        return total

    def run_program(
        self,
        source: str,
        *,
        stdin: bytes | str = b"",
        argv: Sequence[str] = ("/tmp/main.py",),
        limits: Limits | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ProgramResult:
        """`PythonWorker.run_program` on the next free worker."""
        worker = self._take()
        try:
            return worker.run_program(source, stdin=stdin, argv=argv, limits=limits, env=env,
                                      hide=self.hide)  # fmt: skip
        finally:
            self._give(worker)

    def map(self, calls: Iterable[tuple[str, str | None, Sequence[Any]]],
            limits: Limits | None = None) -> list[CallResult]:  # fmt: skip
        """Every call, in order, spread over the workers as they free up (pipelined: see
        `PythonWorker.stream`)."""
        limits = limits or DEFAULT_CALL_LIMITS
        reqs = [call_request(s, e, a, limits) for s, e, a in calls]
        jobs = iter(enumerate(reqs))
        lock = threading.Lock()

        def take() -> tuple[int, dict[str, Any]] | None:
            with lock:
                return next(jobs, None)

        def drive() -> dict[int, dict[str, Any]]:
            worker = self._take()
            try:
                return worker.stream(take, hide=self.hide)
            finally:
                self._give(worker)

        replies: dict[int, dict[str, Any]] = {}
        for f in [self._executor.submit(drive) for _ in range(min(self.size, len(reqs)))]:
            replies.update(f.result())
        why = self.workers[0].cgroup_unavailable if self.workers else ""
        return [call_result(replies[i], limits, why) for i in range(len(reqs))]

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        for w in self.workers:
            w.close()

    def __enter__(self) -> PythonWorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
