"""`TaskPlan`: what one task's candidates are run on and how, decided once per task."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass

from perfgym.judge.config import JudgeConfig
from perfgym.judge.decided_on import DecidedOn
from perfgym.judge.hidden import hidden_cases, same_inputs
from perfgym.judge.runner import RunFn, RunOutcome, run_case
from perfgym.judge.variant import OWN_LABELS, Variant
from perfgym.sandbox.base import Sandbox
from perfgym.sandbox.execution import Status
from perfgym.sandbox.limits import MAX_TIME_S, Limits
from perfgym.sandbox.pyworker import PythonWorkerPool
from perfgym.sandbox.run_request import Pin
from perfgym.tasks.content_hash import content_hash
from perfgym.tasks.generate import materialize_all
from perfgym.tasks.task import Language, Task, TaskKind, TestCase
from perfgym.tasks.timed import is_timed

#: The one "test" a harness task has: the harness run itself checks correctness.
HARNESS_CASE = TestCase(id="harness")


@dataclass(frozen=True)
class TaskPlan:
    """One task's cases, limits and clock, and where its runs happen.

    sandbox, workers: the judge's, seen through views that hide the task's suite directory in
                      every run (where the suite's reference solutions lie).
    checked:          the measured runs of the candidates are checked runs (see `CheckedRuns`).
    separate:         workloads whose outputs are checked apart, after the tests.
    """

    task: Task
    limits: Limits
    tests: list[TestCase]
    workloads: list[TestCase]
    clock: str
    checked: bool
    separate: list[TestCase]
    sandbox: Sandbox
    workers: PythonWorkerPool
    #: cores each measured run gets to itself (the task's `cores`; capped where measured)
    cores: int = 1
    #: whether anything of the task is measured (`perfgym.tasks.timed`): False for a
    #: correctness-only task, whose verdicts say "not timed"
    timed: bool = True
    #: which inputs the workloads are (`perfgym.judge.hidden`): hidden ones drawn for this
    #: call, or the declared (visible) ones; `why`: why a task asked for hidden ones has none
    decided_on: DecidedOn = DecidedOn.VISIBLE
    why_visible: str = ""
    #: how `limits` were set where a timeout must say more than the sandbox's clock and limit
    #: (scaled to this machine's speed: `perfgym.judge.machine_scale`)
    limit_note: str = ""

    @functools.cached_property
    def key(self) -> str:
        """What the judge's per-task caches keep this task's results under (`task_key`)."""
        return task_key(self.task)

    def limits_for(self, v: Variant, limits: Limits) -> Limits:
        """`limits` for a run of `v`: a candidate's run (any variant but the task's own) forgets
        what it brought into the host's caches (`Limits.forget_page_cache`): a page it cached,
        or a name its lookups cached as missing, is a bit a later run of that input could read.
        Every run of a candidate, its correctness runs too: a suite without workloads times its
        tests (HumanEval), and a test's input can be a workload's (red team helper-96 carried
        HumanEval/59's answer from the untimed correctness run to the timed ones: 0.036 s
        against its honest 0.205 s, unflagged, when only workload runs forgot)."""
        if v.label in OWN_LABELS or limits.forget_page_cache:
            return limits
        if limits is self.limits:
            return self._forgetting
        return limits.model_copy(update={"forget_page_cache": True})

    @functools.cached_property
    def _forgetting(self) -> Limits:
        return self.limits.model_copy(update={"forget_page_cache": True})

    def runner(self, warm: bool = False, limits: Mapping[str, Limits] | None = None) -> RunFn:
        """Runs of the task's variants; `warm`: Python stdio programs in program mode of the
        warm workers (correctness runs only; measured runs stay fresh sandboxed processes).
        `limits`: case id -> the limits of its runs (the correctness tests' relative limits);
        other cases run under the task's; a candidate's runs forget what they cached
        (`limits_for`)."""
        task = self.task
        own = limits or {}
        use_workers = task.kind is TaskKind.FUNCTION or (
            warm and task.kind is TaskKind.STDIO and task.language is Language.PYTHON
        )

        def run(v: Variant, case: TestCase, cpu: Pin) -> RunOutcome:
            lim = self.limits_for(v, own.get(case.id, self.limits))
            for _attempt in range(2):  # SANDBOX_ERROR is ours, never the program's: retry once
                out = run_case(task, v, case, sandbox=self.sandbox, workers=self.workers if
                               use_workers else None, limits=lim, cpu=cpu, warm=warm)  # fmt: skip
                if out.status is not Status.SANDBOX_ERROR:
                    break
            if out.status is Status.TIMEOUT and self.limit_note and case.id not in own:
                out.message = f"{out.message} ({self.limit_note})".strip()
            return out

        return run


def plan_task(
    task: Task,
    config: JudgeConfig,
    sandbox: Sandbox,
    workers: PythonWorkerPool,
    hidden_seed: int | None = None,
) -> TaskPlan:
    """The plan of `task` under `config` (its generated cases materialised here); with
    `config.hidden_workloads`, its workloads are the hidden ones of `hidden_seed`."""
    suite_dir = _suite_dir(task, sandbox)
    if suite_dir:
        sandbox, workers = sandbox.hiding(suite_dir), workers.hiding(suite_dir)
    tests = materialize_all(task, task.tests) or [HARNESS_CASE]
    workloads = materialize_all(task, task.workloads)
    decided_on, why = DecidedOn.VISIBLE, ""
    if config.hidden_workloads:
        assert hidden_seed is not None, "hidden workloads need the call's secret seed"
        drawn, why = hidden_cases(task, hidden_seed, config.hidden_per_workload)
        if drawn:
            drawn = materialize_all(task, drawn)
            if same_inputs(drawn, [*tests, *workloads]):
                why = "the task's generator gave only inputs its visible cases already hold"
            else:
                workloads, decided_on = drawn, DecidedOn.HIDDEN
    if task.kind is TaskKind.HARNESS:
        tests, workloads = [HARNESS_CASE], [HARNESS_CASE]
    clock = _clock(task, config)
    # Measured runs are checked runs. In deterministic mode the counted Valgrind runs are
    # checked the same way (a program can tell it is counted): a stdio program's output, a
    # function's returned value (its driver prints it), a harness's own `ok`; an assertion
    # call's counted run runs its checks.
    check = config.check_workload_outputs and task.kind is not TaskKind.HARNESS
    checked = bool(workloads) and check
    limits = task_limits(task, config)
    return TaskPlan(task=task, limits=limits, tests=tests, workloads=workloads, clock=clock,
                    checked=checked, separate=workloads if check and not checked else [],
                    sandbox=sandbox, workers=workers, cores=task.cores,
                    timed=is_timed(task), decided_on=decided_on, why_visible=why)  # fmt: skip


def task_limits(task: Task, config: JudgeConfig) -> Limits:
    """A run's limits: the task's time limit (the judge's when it sets none) on CPU time, of
    every process the run had, times the cores the task asks for; on the wall clock
    `config.wall_backstop` times the limit, a backstop that stops a program that waits
    (sleeps, blocks, waits on a child) and leaves a correct program room on a machine loaded
    that many times over, or slower by that much. Both are capped at `MAX_TIME_S` (a day): a
    task that asks for hours is judged with a backstop of a day, never refused for it."""
    limit = task.time_limit_s or config.time_limit_s
    wall = min(MAX_TIME_S, config.wall_backstop * limit)
    return Limits(cpu_s=min(MAX_TIME_S, limit * task.cores), wall_s=wall,
                  memory_mb=task.memory_limit_mb or config.memory_limit_mb,
                  max_processes=config.max_processes)  # fmt: skip


def task_key(task: Task) -> str:
    """What a judge groups a task's candidates by and keeps the task's own results under (its
    solutions built, their outputs and times, noise bands, kept timings): the id and a hash of
    everything the task says, its root included. Two tasks that share an id but not their
    content (an inline task of a service request, a task reloaded with other solutions) share
    no cached result and are never judged as one."""
    root = json.dumps(None if task.root is None else str(task.root))
    text = f"{content_hash(task)}\0{root}".encode("utf-8", "surrogatepass")
    return f"{task.id}@{hashlib.sha256(text).hexdigest()[:32]}"


def _clock(task: Task, config: JudgeConfig) -> str:
    if config.clock == "instructions":
        return "instructions"  # deterministic mode counts the harness run too
    if task.kind is TaskKind.HARNESS and config.use_harness_time:
        return "harness"
    return own_clock(config.clock, task.cores)


def own_clock(clock: str, cores: int) -> str:
    """The sandbox clock a task's runs are timed by: a multi-core task's CPU time sums over
    its threads (a perfect 2-thread speed-up costs as much CPU as the serial program), so
    such a task is timed on the wall clock of its reserved cores (docs/timing.md)."""
    return "wall" if clock == "cpu" and cores > 1 else clock


def _suite_dir(task: Task, sandbox: Sandbox) -> list[str]:
    """The directory holding the task's suite (its reference solutions), which runs must not
    read; none for a task loaded from no directory, or a sandbox on another host (one without
    a local configuration: the service's, Ray's), where this host's paths mean nothing."""
    if task.root is None or getattr(sandbox, "config", None) is None:
        return []
    return [str(task.root.parent.resolve())]
