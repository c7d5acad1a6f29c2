"""`CaseLimits`: each correctness test's time limit, relative to the task's own solutions'
measured time on it (evalplus's rule, on CPU time), so a hung candidate is stopped in about a
second, not at the task's limit."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from perfgym.judge.batched import batchable
from perfgym.judge.config import JudgeConfig
from perfgym.judge.plan import TaskPlan
from perfgym.judge.references import ExpectedOutputs, OwnRun
from perfgym.sandbox.limits import Limits
from perfgym.tasks.task import TaskKind, TestCase

#: The relative limit is on CPU time, which a loaded machine hardly inflates, so a spinning
#: candidate is stopped as fast there as on a quiet one and a correct one is not cut for the
#: machine's load; the wall limit (`JudgeConfig.wall_backstop` times the CPU limit, at most
#: the task's) stops a candidate that sleeps, with room for a machine loaded that many times
#: over its cores.

#: The solutions whose time a test's limit is relative to: a candidate as slow as either of
#: the task's own programs must never fail a correctness test on time.
OWN_SOLUTIONS = ("reference", "baseline")


@dataclass(frozen=True)
class CaseLimit:
    """One test's limits and how they were set (said when a run times out): the slower own
    solution's `base_s` of `clock`, times `factor`, at least `floor_s`."""

    limits: Limits
    slower: str
    base_s: float
    clock: str
    factor: float
    floor_s: float

    @property
    def why(self) -> str:
        cpu, wall = self.limits.cpu_s, self.limits.wall_s
        return (f"test limit {cpu:.2f} s = max({self.floor_s:g} s, {self.factor:g} x the "
                f"{self.slower}'s {self.base_s:.3f} s of {self.clock}) of CPU, {wall:.2f} s "
                "of wall")  # fmt: skip


class CaseLimits:
    """Correctness tests' limits: a CPU limit of max(floor, factor x the slower of the
    reference's and the baseline's CPU time on the test) and a wall limit
    `JudgeConfig.wall_backstop` times that, both at most the task's limits.

    The times are the sandbox's wall times of the judge's own runs of those solutions (the
    reference's run is the one that gives the expected output), made once per task and test
    for the judge's life, before any candidate of the task runs a test: no candidate can
    change its own limit, nor slow the runs that set it. A test where a solution failed, or
    has no time, keeps the task's limit; so do a harness task's one run (it is the workload)
    and every workload.
    """

    def __init__(self, runs: ExpectedOutputs, config: JudgeConfig) -> None:
        self.runs = runs
        self.config = config

    def of(
        self,
        plan: TaskPlan,
        each: Callable[[Callable[[TestCase], CaseLimit | None], Sequence[TestCase]], list],
    ) -> dict[str, CaseLimit]:
        """Test id -> its limit, for the tests whose limit is relative; `each` maps a function
        over the tests (the judge's parallel map)."""
        if self.config.test_time_factor is None or plan.task.kind is TaskKind.HARNESS:
            return {}
        made: dict[tuple[float, float], Limits] = {}  # tests with one limit share its Limits
        if batchable(plan):  # calibrated: every run is known, looked up (no pool's overhead)
            known = self.runs.known_runs(plan, OWN_SOLUTIONS)
            found = [self.one(plan, case, known.get(case.id), made) for case in plan.tests]
        else:
            found = each(lambda case: self.one(plan, case, made=made), plan.tests)
        return {c.id: lim for c, lim in zip(plan.tests, found, strict=True) if lim is not None}

    def one(self, plan: TaskPlan, case: TestCase, runs: list[OwnRun | None] | None = None,
            made: dict[tuple[float, float], Limits] | None = None) -> CaseLimit | None:  # fmt: skip
        """The relative limit of `case`, or None where it keeps the task's limit (`runs`: the
        own solutions' runs on it, in `OWN_SOLUTIONS` order, where looked up already)."""
        factor, floor = self.config.test_time_factor, self.config.test_time_floor_s
        if factor is None:
            return None
        if runs is None:
            runs = [self.runs.run_of(plan, label, case) for label in OWN_SOLUTIONS]
        slower, base, clock = "", -1.0, "wall time"
        for label, run in zip(OWN_SOLUTIONS, runs, strict=True):
            if run is None:
                continue  # the task has no such solution (or it cannot be built)
            if not run.ok or run.wall_s is None:
                return None
            # a batch metered the run's own CPU: the limit is on CPU, so is its base
            took = run.cpu_s if run.cpu_s is not None else run.wall_s
            clock = "CPU" if run.cpu_s is not None else clock
            if took > base:
                slower, base = label, took
        if not slower:
            return None
        cpu = max(floor, factor * base)
        if cpu >= plan.limits.effective_cpu_s:
            return None
        wall = min(plan.limits.wall_s, self.config.wall_backstop * cpu)
        made = {} if made is None else made
        limits = made.get((cpu, wall))
        if limits is None:
            limits = made[(cpu, wall)] = plan.limits.model_copy(
                update={"cpu_s": cpu, "wall_s": wall}
            )
        return CaseLimit(limits=limits, slower=slower, base_s=base, clock=clock,
                         factor=factor, floor_s=floor)  # fmt: skip
