"""`JudgeQueue`: one judge, fed from many tasks' rounds; the requests waiting when it frees up are
judged together in one `judge_many` call (each task's candidates beside its baseline and
reference, measured once per call), on a daemon thread so Ctrl-C never waits for it. Each task's
round gets its verdicts as soon as the judge has them, not at the end of the batch.

A check (`check_round`) asks only whether a program is right on a fresh draw of its task's
hidden inputs: it is judged under `check_config` (four inputs per workload, each run once,
nothing measured beside it; a third of a round's judge call on py-lis-dp), in a `judge_many`
call of its own on the same thread, so no check runs beside a timed run."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from perfgym.judge.candidate import Candidate
from perfgym.judge.config import JudgeConfig
from perfgym.judge.judge import Judge
from perfgym.judge.verdict import Verdict

#: Fresh inputs a correctness check draws per declared generated workload (a round draws one).
CHECK_INPUTS = 4


def check_config(config: JudgeConfig) -> JudgeConfig:
    """`config` for deciding correctness alone: the same tests and limits, CHECK_INPUTS hidden
    inputs per generated workload, each run once, with no baseline, reference, noise band or
    drift probe measured beside it (the reference still runs where its outputs are the
    expected ones)."""
    return config.model_copy(update={
        "repeats": 1, "max_repeats": None, "noise_rounds": 0, "warmup": 0, "fail_fast": True,
        "measure_baseline": False, "measure_reference": False, "drift": None,
        "first_call": None, "hidden_per_workload": CHECK_INPUTS})  # fmt: skip


@dataclass
class _Job:
    candidates: list[Candidate]
    future: asyncio.Future[list[Verdict]]
    check: bool = False


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
        return await self._submit(candidates, check=False)

    async def check_round(self, candidates: Sequence[Candidate]) -> list[Verdict]:
        """Verdicts on correctness alone (`check_config`), each call on a fresh draw of the
        hidden inputs; their timings are one unpaired run and decide nothing."""
        return await self._submit(candidates, check=True)

    async def _submit(self, candidates: Sequence[Candidate], check: bool) -> list[Verdict]:
        if not candidates:
            return []
        loop = asyncio.get_running_loop()
        job = _Job(list(candidates), loop.create_future(), check)
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
        got: list[list[Verdict | None]] = [[None] * len(j.candidates) for j in jobs]
        left = [len(j.candidates) for j in jobs]
        # one judge_many for the rounds, another for the checks (under check_config)
        groups = [[k for k, j in enumerate(jobs) if j.check == check] for check in (False, True)]

        def judged(ks: list[int], check: bool) -> None:
            flat = [c for k in ks for c in jobs[k].candidates]
            owner = [(k, i) for k in ks for i in range(len(jobs[k].candidates))]

            def finished(indices: Sequence[int], verdicts: Sequence[Verdict]) -> None:
                # A task's verdicts are ready: its round goes on (asks the model) while the
                # judge measures the next task of the batch.
                for at, v in zip(indices, verdicts, strict=True):
                    k, i = owner[at]
                    got[k][i] = v
                    left[k] -= 1
                    if left[k] == 0:
                        loop.call_soon_threadsafe(self._resolve, jobs[k], list(got[k]))

            saved = self.judge.config
            if check:  # only this thread calls the judge: nothing else sees the swap
                self.judge.config = check_config(saved)
            try:
                self.judge.judge_many(flat, finished=finished)
            finally:
                self.judge.config = saved

        def work() -> None:
            start = time.perf_counter()
            error: BaseException | None = None
            try:
                for check, ks in zip((False, True), groups, strict=True):
                    if ks:
                        judged(ks, check)
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
