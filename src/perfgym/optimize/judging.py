"""`JudgeQueue`: one judge, fed from many tasks' rounds; the requests waiting when it frees up are
judged together in one `judge_many` call (each task's candidates beside its baseline and
reference, measured once per call), on a daemon thread so Ctrl-C never waits for it. Each task's
round gets its verdicts as soon as the judge has them, not at the end of the batch."""

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
        owner: list[tuple[int, int]] = [(k, i) for k, j in enumerate(jobs)
                                        for i in range(len(j.candidates))]  # fmt: skip
        got: list[list[Verdict | None]] = [[None] * len(j.candidates) for j in jobs]
        left = [len(j.candidates) for j in jobs]

        def finished(indices: Sequence[int], verdicts: Sequence[Verdict]) -> None:
            # A task's verdicts are ready: its round goes on (asks the model) while the judge
            # measures the next task of the batch.
            for at, v in zip(indices, verdicts, strict=True):
                k, i = owner[at]
                got[k][i] = v
                left[k] -= 1
                if left[k] == 0:
                    loop.call_soon_threadsafe(self._resolve, jobs[k], list(got[k]))

        def work() -> None:
            start = time.perf_counter()
            error: BaseException | None = None
            try:
                self.judge.judge_many(flat, finished=finished)
            except BaseException as exc:  # handed to the rounds still waiting
                error = exc
            self.busy_s += time.perf_counter() - start  # one judge thread at a time
            self.batches += 1
            try:
                loop.call_soon_threadsafe(self._done, loop, jobs, error)
            except RuntimeError:  # the loop is closed: every round got its verdicts already
                pass

        threading.Thread(target=work, name="perfgym-optimize-judge", daemon=True).start()

    def _resolve(self, job: _Job, verdicts: list[Verdict | None]) -> None:
        if not job.future.done():  # else its round was cancelled (an interrupt)
            job.future.set_result([v for v in verdicts if v is not None])
            self.judged += len(verdicts)

    def _done(self, loop: asyncio.AbstractEventLoop, jobs: list[_Job],
              error: BaseException | None) -> None:  # fmt: skip
        for j in jobs:
            if not j.future.done():
                j.future.set_exception(error or RuntimeError("the judge returned no verdict"))
        self._next(loop)
