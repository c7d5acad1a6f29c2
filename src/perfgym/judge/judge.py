"""`Judge`: extract → build → run → check → measure, for many candidates of many tasks."""

from __future__ import annotations

import collections
import itertools
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from perfgym.judge import stages
from perfgym.judge.candidate import Candidate, Finished, Progress
from perfgym.judge.case_limits import CaseLimits
from perfgym.judge.config import JudgeConfig
from perfgym.judge.hidden import fresh_seed
from perfgym.judge.machine_scale import machine_scale, published_times, scaled
from perfgym.judge.measure import lanes_of
from perfgym.judge.noise_bands import NoiseBands, drop_twins, needs_band, pool_twins, stamp
from perfgym.judge.plan import HARNESS_CASE, TaskPlan, plan_task, task_key
from perfgym.judge.record import Entry
from perfgym.judge.reference_context import runtime_context
from perfgym.judge.reference_disk import ReferenceDisk, root_from
from perfgym.judge.references import ExpectedOutputs, ReferenceCache
from perfgym.judge.reuse import ReusedTimings
from perfgym.judge.runner import CheckedRuns
from perfgym.judge.twins import representatives, twin_verdict
from perfgym.judge.verdict import Verdict
from perfgym.sandbox.base import Sandbox, SandboxConfig
from perfgym.sandbox.factory import make_sandbox
from perfgym.sandbox.pool import usable_cores
from perfgym.sandbox.pyworker import PythonWorkerPool
from perfgym.tasks.task import Task
from perfgym.tasks.timed import NOT_TIMED, is_timed
from perfgym.timing.drift import DriftMonitor
from perfgym.toolchains import BuildCache, BuildCacheConfig

__all__ = ["HARNESS_CASE", "Candidate", "Finished", "Judge", "Progress"]

#: Correctness-only tasks submitted ahead of the one whose verdicts are due next (they run
#: `Judge.parallel` at a time): a long task at the head does not leave the others idle.
JUDGED_AHEAD = 64
#: Measured tasks tested side by side before any of them is measured, at most this many at a
#: time (the first verdicts wait for this many tasks' tests).
TESTED_AHEAD = 16
_In = TypeVar("_In")
_Out = TypeVar("_Out")


class Judge:
    """Judges candidates against their task's tests, and measures them beside the baseline and
    the reference in the same batch, on the same machine."""

    def __init__(
        self,
        config: JudgeConfig | None = None,
        *,
        sandbox: Sandbox | None = None,
        cache: BuildCache | None = None,
    ) -> None:
        self.config = config or JudgeConfig()
        if cache is None:
            root = self.config.build_cache
            cache = BuildCache(BuildCacheConfig(root=root) if root else None)
        self.cache = cache
        self._own_sandbox = sandbox is None
        self.sandbox = sandbox or make_sandbox(self.config.sandbox, cache.hiding())
        self._workers: PythonWorkerPool | None = None
        self._references = ReferenceCache(cache)
        root = root_from(self.config.reference_cache)
        # the runs' interpreter and packages are the sandbox's (and its workers'), not ours
        sandbox_config = getattr(self.sandbox, "config", None) or SandboxConfig()
        context = (
            None if root is None
            else runtime_context(sandbox_config.python, sandbox_config.site_hooks)
        )  # fmt: skip
        disk = ReferenceDisk.open(root, context)
        self._expected = ExpectedOutputs(self._references, disk)
        self._case_limits = CaseLimits(self._expected, self.config)
        self._reused = ReusedTimings(self.config)
        self._lock = threading.Lock()
        self._monitor: DriftMonitor | None = None
        self._bands = NoiseBands()
        #: id of a task object being judged -> (the task, its `task_key`), so that its plan
        #: does not hash the whole task again (a HumanEval+ task's 1,000 tests: ms each)
        self._keys: dict[int, tuple[Task, str]] = {}

    # -- lifecycle ------------------------------------------------------------------------------
    @property
    def workers(self) -> PythonWorkerPool:
        with self._lock:
            if self._workers is None:
                self._workers = PythonWorkerPool(self.parallel,
                                                 config=getattr(self.sandbox, "config", None))  # fmt: skip
            return self._workers

    @property
    def parallel(self) -> int:
        """Correctness runs at once (config.concurrency; default one per core: a test batch's
        asking parent and answering child share their core, and two batches on one core ran
        the 164 HumanEval+ solutions 14 % slower than one)."""
        return self.config.concurrency or len(usable_cores())

    @property
    def monitor(self) -> DriftMonitor | None:
        """Drift probes (config.drift), started on first use, pinned to a measuring core."""
        if self.config.drift is None:
            return None
        with self._lock:
            if self._monitor is None:
                self._monitor = DriftMonitor(self.sandbox, self.config.drift, self.config.clock,
                                             core=lanes_of(self.config)[0])  # fmt: skip
            return self._monitor

    def close(self) -> None:
        if self._workers is not None:
            self._workers.close()
        if self._own_sandbox:
            self.sandbox.close()

    def __enter__(self) -> Judge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- public API -----------------------------------------------------------------------------
    def judge(self, task: Task, completion: str | None = None, *, source: str | None = None,
              model: str = "", sample: int = 0, suite: str = "") -> Verdict:  # fmt: skip
        """Judge one candidate (raw model text or source)."""
        return self.judge_many([Candidate(task, completion, source, model, sample, suite)])[0]

    def judge_many(
        self,
        candidates: Sequence[Candidate],
        progress: Progress | None = None,
        finished: Finished | None = None,
    ) -> list[Verdict]:
        """Judge every candidate; tasks are measured one at a time, candidates of a task together
        (a task: its id and content, `task_key`; two tasks sharing an id are judged apart).
        `finished` receives each task's verdicts as they are ready (to write them at once).
        With `config.hidden_workloads`, the call's hidden inputs come from `config.hidden_seed`,
        or from a fresh secret seed of this call's own when it is None."""
        seed = None
        if self.config.hidden_workloads:
            seed = self.config.hidden_seed
            if seed is None:
                seed = fresh_seed()
        by_task: dict[str, list[int]] = {}
        keys: dict[int, str] = {}  # one task object's key, computed once
        for i, c in enumerate(candidates):
            key = keys.get(id(c.task))
            if key is None:
                key = keys[id(c.task)] = task_key(c.task)
                with self._lock:
                    self._keys.setdefault(id(c.task), (c.task, key))
            by_task.setdefault(key, []).append(i)
        verdicts: list[Verdict | None] = [None] * len(candidates)
        done = 0
        try:
            for indices, judged in self._tasks_judged(candidates, list(by_task.values()), seed):
                for i, v in zip(indices, judged, strict=True):
                    verdicts[i] = v
                if finished is not None:
                    finished(indices, judged)
                done += len(indices)
                if progress is not None:
                    progress(done, len(candidates))
        finally:
            with self._lock:
                for c in candidates:
                    known = self._keys.get(id(c.task))
                    if known is not None and known[0] is c.task:
                        del self._keys[id(c.task)]
        return [v for v in verdicts if v is not None]

    def _tasks_judged(
        self, candidates: Sequence[Candidate], groups: list[list[int]], seed: int | None = None
    ) -> Iterator[tuple[list[int], list[Verdict]]]:
        """Each task's candidates (indices) and their verdicts, task by task in order. Tasks
        where nothing is measured (correctness only) are judged side by side, one per core, a
        few ahead. With any measured task, the tasks are taken TESTED_AHEAD at a time: their
        candidates are tested side by side (one per core; nothing is measured meanwhile), then
        measured one task at a time (its measured runs have their cores to themselves), so no
        core idles while a task's slowest candidate finishes its tests."""
        n = self.parallel
        if n <= 1 or len(groups) <= 1:
            for g in groups:
                yield g, self._judge_task([candidates[i] for i in g], seed)
            return
        if any(is_timed(candidates[g[0]].task) for g in groups):
            yield from self._tested_then_measured(candidates, groups, n, seed)
            return
        pool = ThreadPoolExecutor(max_workers=n)
        try:
            todo = iter(groups)
            ahead: collections.deque[tuple[list[int], Future[list[Verdict]]]] = collections.deque()
            for g in itertools.islice(todo, max(2 * n, JUDGED_AHEAD)):
                ahead.append((g, pool.submit(self._judge_task, [candidates[i] for i in g],
                                             seed)))  # fmt: skip
            while ahead:
                g, job = ahead.popleft()
                more = next(todo, None)
                if more is not None:
                    ahead.append((more, pool.submit(self._judge_task,
                                                    [candidates[i] for i in more], seed)))  # fmt: skip
                yield g, job.result()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _tested_then_measured(
        self,
        candidates: Sequence[Candidate],
        groups: list[list[int]],
        n: int,
        seed: int | None = None,
    ) -> Iterator[tuple[list[int], list[Verdict]]]:
        for start in range(0, len(groups), TESTED_AHEAD):
            chunk = groups[start : start + TESTED_AHEAD]
            pool = ThreadPoolExecutor(max_workers=n)
            try:
                jobs = [pool.submit(self._checked, [candidates[i] for i in g], seed)
                        for g in chunk]  # fmt: skip
                tested = [job.result() for job in jobs]
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
            for g, done in zip(chunk, tested, strict=True):
                yield g, self._measured(done)

    # -- one task ---------------------------------------------------------------------------------
    def _judge_task(self, group: list[Candidate], seed: int | None = None) -> list[Verdict]:
        """The stages, in order, for the candidates of one task (see `perfgym.judge.stages`)."""
        return self._measured(self._checked(group, seed))

    def _checked(self, group: list[Candidate], seed: int | None = None) -> _Checked:
        """Stages 1-3 for one task's candidates: extracted, built and tested (nothing measured
        yet). Twins (`perfgym.judge.twins`) are judged once, as their representative."""
        task = group[0].task
        plan = plan_task(task, self.config, self.sandbox, self.workers, seed)
        with self._lock:
            known = self._keys.get(id(task))
        if known is not None and known[0] is task:
            plan.__dict__["key"] = known[1]  # the cached property, computed already
        with self._expected.in_use(plan.key):
            return self._tested(plan, group)

    def _tested(self, plan: TaskPlan, group: list[Candidate]) -> _Checked:
        labels = stages.candidate_labels(group)
        extracted = [stages.extract(plan, c, lb) for c, lb in zip(group, labels, strict=True)]
        judged: list[int] = list(range(len(extracted)))
        twin_of: dict[int, int] = {}
        if self.config.same_program_once:
            judged, twin_of = representatives(plan.task, extracted)
        entries = self._map(lambda e: stages.build(plan, e, self.cache),
                            [extracted[i] for i in judged])  # fmt: skip
        if any(e.going for e in entries):
            plan = self._machine_scaled(plan)  # before any candidate runs under its limits
            self._expected.calibrate(plan)  # the task's own solutions: one batch each
            limits = self._case_limits.of(plan, self._map)  # before any candidate runs a test
            how = {"fail_fast": False} if not self.config.fail_fast else {}
            how.update({"isolate": True} if self.config.isolate_tests else {})
            self._map(lambda e: stages.run_tests(plan, e, self._expected, limits, **how), entries)
        checks = None
        if plan.timed and plan.checked and any(e.going for e in entries):
            expected = self._map(lambda w: self._expected.of(plan, w), plan.workloads)
            checks = stages.checked_runs(plan, entries, expected)
        return _Checked(plan, extracted, judged, twin_of, entries, checks)

    def _machine_scaled(self, plan: TaskPlan) -> TaskPlan:
        """`plan` under its task's published limit scaled to this machine's speed, from the
        judge's own (kept) runs of the baseline and reference, made under the limit times the
        cap (`perfgym.judge.machine_scale`)."""
        cap = self.config.machine_scale_cap
        published = published_times(plan.task)
        if cap is None or not published:
            return plan
        wide = scaled(plan, cap, f"the judge's own run, under the published limit x {cap:g}")
        runs = {label: self._expected.run_of(wide, label, HARNESS_CASE) for label in published}
        scale = machine_scale(plan.task, runs, cap)
        return plan if scale is None else scaled(plan, scale.factor, scale.why)

    def _measured(self, done: _Checked) -> list[Verdict]:
        """Stages 4-5 for a tested task: its passing candidates measured beside the baseline and
        reference (nothing when the task is correctness-only), and every candidate's verdict."""
        plan, entries, checks = done.plan, done.entries, done.checks
        if not plan.timed:  # correctness only: nothing is measured, the verdicts say so
            judged = [stages.verdict_of(plan, e, {}, self.config) for e in entries]
            for v in judged:
                v.flags.append(NOT_TIMED)
            return done.verdicts(judged)
        refs = self._references.of(plan)
        run = checks if checks is not None else plan.runner()
        timings = stages.measure_all(
            plan,
            entries,
            refs,
            run,
            self.config,
            lambda: self.monitor,
            self._reused,
            baseline_twins=self._bands.twins_wanted(plan),
        )
        # The A/A band is measured only for a speed decision: a batch whose candidates all
        # failed before measurement has none to make (4 x noise_rounds runs per workload saved;
        # a later batch of the same task measures it when it needs it).
        if timings and needs_band(self.config) and any(e.going for e in entries):
            stamp(timings, self._bands.for_batch(plan, refs, self.config, timings))
            run_alone = timings.get("baseline")
            pool_twins(timings)
            if run_alone is not None and timings["baseline"] is not run_alone:
                own = stages.measured_roles(refs, self.config)
                self._reused.pooled(plan, own, run_alone, timings["baseline"])
        drop_twins(timings)
        ref_timings = stages.reference_timings(refs, timings, self.config)

        def verdict(e: Entry) -> Verdict:
            return stages.verdict_of(plan, stages.settle(e, checks, plan.workloads, timings),
                                     ref_timings, self.config, own=(refs.baseline, refs.reference),
                                     memo=self.cache.root / ".build-work")  # fmt: skip

        # side by side: a build over `build_work`'s bound is built again there (helper-124: four
        # heavy candidates' looks one after another took 46 s beside 29 s of their first builds)
        return done.verdicts(self._map(verdict, entries))

    def _map(self, fn: Callable[[_In], _Out], items: Sequence[_In]) -> list[_Out]:
        n = self.parallel
        if len(items) <= 1 or n <= 1:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(max_workers=n) as pool:
            return list(pool.map(fn, items))


@dataclass
class _Checked:
    """A task between its tests and its measurement: the candidates' entries as extracted, which
    of them are judged (the others are their representatives' twins) and the judged ones'
    entries, tested; `checks`: the run function checking their measured runs' outputs."""

    plan: TaskPlan
    extracted: list[Entry]
    judged: list[int]
    twin_of: dict[int, int]
    entries: list[Entry]
    checks: CheckedRuns | None

    def verdicts(self, judged: list[Verdict]) -> list[Verdict]:
        """Every candidate's verdict, in order, from the judged ones' (`judged`)."""
        by_index = dict(zip(self.judged, judged, strict=True))
        for i, rep in self.twin_of.items():
            by_index[i] = twin_verdict(by_index[rep], self.extracted[i])
        return [by_index[i] for i in range(len(self.extracted))]
