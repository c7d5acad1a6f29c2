"""`Judge`: extract → build → run → check → measure, for many candidates of many tasks."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from perfgym.judge.config import JudgeConfig
from perfgym.judge.crosscheck import crosscheck_harness
from perfgym.judge.measure import lanes_of, measure
from perfgym.judge.runner import CheckedRuns, Outcome, RunFn, judge_outcome, run_case
from perfgym.judge.variant import Variant, prepare
from perfgym.judge.verdict import Stage, TestResult, Timing, TimingStatus, Verdict
from perfgym.machine import fingerprint
from perfgym.sandbox.base import Sandbox
from perfgym.sandbox.execution import Status
from perfgym.sandbox.factory import make_sandbox
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.pool import usable_cores
from perfgym.sandbox.pyworker import PythonWorkerPool
from perfgym.tasks.generate import materialize_all
from perfgym.tasks.task import Language, Task, TaskKind, TestCase
from perfgym.timing.drift import DriftMonitor
from perfgym.toolchains import BuildCache, BuildCacheConfig

#: The one "test" a harness task has: the harness run itself checks correctness.
HARNESS_CASE = TestCase(id="harness")


@dataclass
class Candidate:
    """One thing to judge: raw model text (`completion`) or a ready `source`."""

    task: Task
    completion: str | None = None
    source: str | None = None
    model: str = ""
    sample: int = 0


Progress = Callable[[int, int], None]


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
        self._memo: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()
        self._monitor: DriftMonitor | None = None

    # -- lifecycle ------------------------------------------------------------------------------
    @property
    def workers(self) -> PythonWorkerPool:
        with self._lock:
            if self._workers is None:
                self._workers = PythonWorkerPool(config=getattr(self.sandbox, "config", None))
            return self._workers

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
              model: str = "", sample: int = 0) -> Verdict:  # fmt: skip
        """Judge one candidate (raw model text or source)."""
        return self.judge_many([Candidate(task, completion, source, model, sample)])[0]

    def judge_many(
        self, candidates: Sequence[Candidate], progress: Progress | None = None
    ) -> list[Verdict]:
        """Judge every candidate; tasks are measured one at a time, candidates of a task together."""
        by_task: dict[str, list[int]] = {}
        for i, c in enumerate(candidates):
            by_task.setdefault(c.task.id, []).append(i)
        verdicts: list[Verdict | None] = [None] * len(candidates)
        done = 0
        for indices in by_task.values():
            group = [candidates[i] for i in indices]
            for i, v in zip(indices, self._judge_task(group), strict=True):
                verdicts[i] = v
            done += len(indices)
            if progress is not None:
                progress(done, len(candidates))
        return [v for v in verdicts if v is not None]

    # -- one task ---------------------------------------------------------------------------------
    def _judge_task(self, group: list[Candidate]) -> list[Verdict]:
        task = group[0].task
        self._hide_suite_of(task)
        limits = self._limits(task)
        prepared = self._map(
            lambda c: prepare(task, f"candidate-{c.model}-{c.sample}", completion=c.completion,
                              source=c.source, sandbox=self.sandbox, cache=self.cache,
                              workers=self.workers),
            group,
        )  # fmt: skip
        tests = materialize_all(task, task.tests) or [HARNESS_CASE]
        workloads = materialize_all(task, task.workloads)
        if task.kind is TaskKind.HARNESS:
            tests, workloads = [HARNESS_CASE], [HARNESS_CASE]
        clock = self._clock(task)
        # Measured runs are checked runs (below). In deterministic mode the counted Valgrind
        # runs of a stdio program are checked the same way (a program can tell it runs under
        # Valgrind); function and harness tasks there get their workloads checked separately.
        counted_unchecked = clock == "instructions" and task.kind is not TaskKind.STDIO
        checked = bool(workloads) and self._check_workloads(task) and not counted_unchecked
        separate = workloads if self._check_workloads(task) and not checked else []
        results = self._map(lambda v: self._correctness(task, v, tests, separate, limits), prepared)
        refs = self._reference_variants(task, limits, tests, workloads)
        passed = [
            v for v, (stage, _r, _d, _m) in zip(prepared, results, strict=True) if stage is Stage.OK
        ]
        run = self._runner(task, limits)
        checks: CheckedRuns | None = None
        if checked and passed:
            checks, unknown = self._checked_runs(task, limits, workloads, passed, run)
            if checks is not None:
                run = checks
            elif unknown is not None:  # no expected output: as before, NR with the reason
                results = [r if r[0] is not Stage.OK else (*unknown[:3], r[3] + [unknown[3]])
                           for r in results]  # fmt: skip
                passed = []
        timed = list(passed)
        wanted = {
            "baseline": self.config.measure_baseline,
            "reference": self.config.measure_reference,
        }
        timed += [v for k, v in refs.items() if wanted[k] and v is not None and v.ready]
        timings = (
            measure(
                timed,
                workloads or tests,
                self.config,
                run,
                clock,
                task=task,
                sandbox=self.sandbox,
                limits=limits,
                monitor=self.monitor,
                workers=self.workers if task.kind is TaskKind.FUNCTION else None,
            )  # fmt: skip
            if timed
            else {}
        )
        ref_timing = {k: self._ref_timing(v, timings) for k, v in refs.items() if wanted[k]}
        if checks is not None:
            results = [self._after_checks(v, r, checks, workloads, timings)
                       for v, r in zip(prepared, results, strict=True)]  # fmt: skip
        out = []
        for cand, v, (stage, detail, reason, test_results) in zip(
            group, prepared, results, strict=True
        ):
            verdict = Verdict(
                task_id=task.id,
                model=cand.model,
                sample=cand.sample,
                stage=stage,
                detail=detail,
                reason=reason,
                infra_error=v.infra or detail == "SANDBOX_ERROR",
                language=task.language.value,
                source=v.source,
                extraction_rule=v.extraction_rule,
                build_log=v.build_log,
                tests=test_results,
                candidate=timings.get(v.label),
                baseline=ref_timing.get("baseline"),
                reference=ref_timing.get("reference"),
                config=self.config.model_dump(mode="json"),
                machine=fingerprint(),
            )
            if verdict.candidate is not None:
                verdict.flags += verdict.candidate.flags
            if clock == "harness":
                crosscheck_harness(verdict, self.config.harness_saving_ratio)
            out.append(verdict)
        return out

    def _check_workloads(self, task: Task) -> bool:
        """Workload outputs are checked (harness tasks check themselves on every run)."""
        return self.config.check_workload_outputs and task.kind is not TaskKind.HARNESS

    def _checked_runs(
        self, task: Task, limits: Limits, workloads: list[TestCase], passed: list[Variant],
        run: RunFn,
    ) -> tuple[CheckedRuns, None] | tuple[None, tuple[Stage, str, str, TestResult]]:  # fmt: skip
        """The checked run function, or (no expected output for a workload) the failure every
        candidate gets instead, as the separate check reported it."""
        found = self._map(lambda w: self._expected_output(task, w, limits), workloads)
        expected = {}
        for w, (known, value) in zip(workloads, found, strict=True):
            if not known:
                res = TestResult(id=w.id, passed=False, status=Status.SANDBOX_ERROR,
                                 message=str(value)[:500])  # fmt: skip
                return None, (Stage.NR, "SANDBOX_ERROR", f"{w.id}: {value}", res)
            expected[w.id] = value
        labels = {v.label for v in passed}
        return CheckedRuns(task, run, workloads, expected, labels), None

    @staticmethod
    def _after_checks(
        v: Variant,
        result: tuple[Stage, str, str, list[TestResult]],
        checks: CheckedRuns,
        workloads: list[TestCase],
        timings: dict[str, Timing],
    ) -> tuple[Stage, str, str, list[TestResult]]:
        """A candidate's result once its measured runs were checked: the workloads' results
        join the tests'; a failed run makes it NR/WO, without a timing."""
        stage, _detail, _reason, tests = result
        if stage is not Stage.OK:
            return result
        failure, ran = checks.outcome(v.label, workloads)
        if failure is None:
            return stage, "", "", tests + ran
        timings.pop(v.label, None)
        return (*failure, tests + ran)

    def _clock(self, task: Task) -> str:
        if self.config.clock == "instructions":
            return "instructions"  # deterministic mode counts the harness run too
        if task.kind is TaskKind.HARNESS and self.config.use_harness_time:
            return "harness"
        return self.config.clock

    def _limits(self, task: Task) -> Limits:
        return Limits(
            wall_s=task.time_limit_s or self.config.time_limit_s,
            memory_mb=task.memory_limit_mb or self.config.memory_limit_mb,
            max_processes=self.config.max_processes,
        )

    def _runner(self, task: Task, limits: Limits, warm: bool = False) -> RunFn:
        """Runs of `task`'s variants; `warm`: Python stdio programs in program mode of the warm
        workers (correctness runs only; measured runs stay fresh sandboxed processes)."""
        use_workers = task.kind is TaskKind.FUNCTION or (
            warm and task.kind is TaskKind.STDIO and task.language is Language.PYTHON
        )

        def run(v: Variant, case: TestCase, cpu: int | None) -> Outcome:
            for _attempt in range(2):  # SANDBOX_ERROR is ours, never the program's: retry once
                out = run_case(task, v, case, sandbox=self.sandbox, workers=self.workers if
                               use_workers else None, limits=limits, cpu=cpu, warm=warm)  # fmt: skip
                if out.status is not Status.SANDBOX_ERROR:
                    break
            return out

        return run

    def _map(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
        n = self.config.concurrency or len(usable_cores())
        if len(items) <= 1 or n <= 1:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(max_workers=n) as pool:
            return list(pool.map(fn, items))

    def _hide_suite_of(self, task: Task) -> None:
        """Runs must not read the suite's reference solutions (a task dir's parent)."""
        config = getattr(self.sandbox, "config", None)
        if config is None or task.root is None:
            return
        suite_dir = str(task.root.parent.resolve())
        if suite_dir not in config.hide_paths:
            config.hide_paths.append(suite_dir)

    # -- correctness --------------------------------------------------------------------------------
    def _expected_output(self, task: Task, case: TestCase, limits: Limits) -> tuple[bool, Any]:
        """The expected output of `case`: given, or the reference's (computed once)."""
        if case.expected is not None:
            return True, case.expected
        key = (task.id, case.id)
        if key not in self._memo:
            ref = self._reference_variants(task, limits, [], [])["reference"]
            if ref is None or not ref.ready:
                return False, "the reference cannot run, so there is no expected output"
            out = self._runner(task, limits)(ref, case, None)
            if out.status is not Status.OK:
                return False, f"the reference failed on {case.id}: {out.status.value} {out.message}"
            self._memo[key] = out.output
        return True, self._memo[key]

    def _correctness(
        self,
        task: Task,
        v: Variant,
        tests: list[TestCase],
        workloads: list[TestCase],
        limits: Limits,
    ) -> tuple[Stage, str, str, list[TestResult]]:
        """Run the tests, then `workloads`' output checks (when they are not checked in the
        measurement); stop at the first failure."""
        if v.stage is not None:
            return v.stage, v.detail, v.reason, []
        results: list[TestResult] = []
        warm = self._runner(task, limits, warm=True)
        run = self._runner(task, limits)
        # Tests in warm workers; a separate workload check runs as the measurement would.
        for case, how in [(t, warm) for t in tests] + [(w, run) for w in workloads]:
            out = how(v, case, None)
            res, failure = judge_outcome(task, case, out, self._expected_of(task, case, limits))
            results.append(res)
            if failure is not None:
                return (*failure, results)
        return Stage.OK, "", "", results

    def _expected_of(
        self, task: Task, case: TestCase, limits: Limits
    ) -> Callable[[], tuple[bool, Any]]:
        return lambda: self._expected_output(task, case, limits)

    # -- baseline and reference ---------------------------------------------------------------------
    def _reference_variants(
        self, task: Task, limits: Limits, tests: list[TestCase], workloads: list[TestCase]
    ) -> dict[str, Variant | None]:
        key = ("variants", task.id)
        with self._lock:
            cached = self._memo.get(key)
        if cached is not None:
            return dict(cached)
        variants: dict[str, Variant | None] = {}
        for label, sol in (("baseline", task.baseline), ("reference", task.reference)):
            variants[label] = None if sol is None else prepare(
                task, label, source=sol.source, sandbox=self.sandbox, cache=self.cache,
                workers=self.workers,
            )  # fmt: skip
        with self._lock:
            self._memo[key] = variants
        return dict(variants)

    @staticmethod
    def _ref_timing(v: Variant | None, timings: dict[str, Timing]) -> Timing | None:
        if v is None:
            return None
        if not v.ready:
            return Timing(status=TimingStatus.UNAVAILABLE, status_reason=f"{v.label}: {v.reason}")
        return timings.get(v.label)
