"""`JudgeQueue`: one judge, fed from many tasks' rounds; the requests waiting when it frees up are
judged together in one `judge_many` call (each task's candidates beside its baseline and
reference, measured once per call), on a daemon thread so Ctrl-C never waits for it."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from perfgym.judge.candidate import Candidate
from perfgym.judge.judge import Judge
from perfgym.judge.verdict import Verdict


@dataclass
class _Job:
    candidates: list[Candidate]
    future: asyncio.Future[list[Verdict]]


@dataclass
class JudgeQueue:
    judge: Judge
    busy_s: float = 0.0  # wall time the judge spent judging
    batches: int = 0
    judged: int = 0
    _pending: list[_Job] = field(default_factory=list)
    _running: bool = False

    async def judge_round(self, candidates: Sequence[Candidate]) -> list[Verdict]:
        """The verdicts of one task's round (all of them; any order of tasks)."""
        if not candidates:
            return []
        loop = asyncio.get_running_loop()
        job = _Job(list(candidates), loop.create_future())
        self._pending.append(job)
        if not self._running:
            self._running = True
            loop.call_soon(self._next, loop)
        return await job.future

    def _next(self, loop: asyncio.AbstractEventLoop) -> None:
        jobs, self._pending = self._pending, []
        if not jobs:
            self._running = False
            return
        flat = [c for j in jobs for c in j.candidates]

        def work() -> None:
            start = time.perf_counter()
            try:
                verdicts: list[Verdict] | BaseException = self.judge.judge_many(flat)
            except BaseException as exc:  # handed to the awaiting rounds
                verdicts = exc
            took = time.perf_counter() - start
            loop.call_soon_threadsafe(self._done, loop, jobs, verdicts, took)

        threading.Thread(target=work, name="perfgym-optimize-judge", daemon=True).start()

    def _done(self, loop: asyncio.AbstractEventLoop, jobs: list[_Job],
              verdicts: list[Verdict] | BaseException, took: float) -> None:  # fmt: skip
        self.busy_s += took
        self.batches += 1
        at = 0
        for j in jobs:
            mine = (
                [] if isinstance(verdicts, BaseException) else verdicts[at : at + len(j.candidates)]
            )
            at += len(j.candidates)
            if j.future.done():  # its round was cancelled (an interrupt)
                continue
            if isinstance(verdicts, BaseException):
                j.future.set_exception(verdicts)
                continue
            j.future.set_result(mine)
            self.judged += len(mine)
        self._next(loop)
