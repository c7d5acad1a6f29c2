"""`CaseLimits`: each correctness test's wall limit, relative to the task's own solutions'
measured time on it (evalplus's rule), so a hung candidate is stopped in about a second, not
at the task's limit."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from perfgym.judge.config import JudgeConfig
from perfgym.judge.plan import TaskPlan
from perfgym.judge.references import ExpectedOutputs
from perfgym.sandbox.limits import Limits
from perfgym.tasks.task import TaskKind, TestCase

#: The solutions whose time a test's limit is relative to: a candidate as slow as either of
#: the task's own programs must never fail a correctness test on time.
OWN_SOLUTIONS = ("reference", "baseline")


@dataclass(frozen=True)
class CaseLimit:
    """One test's limits and how its wall limit was set (said when a run times out)."""

    limits: Limits
    why: str


class CaseLimits:
    """Correctness tests' limits: max(floor, factor x the slower of the reference's and the
    baseline's wall time on the test), at most the task's limit.

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
        found = each(lambda case: self.one(plan, case), plan.tests)
        return {c.id: lim for c, lim in zip(plan.tests, found, strict=True) if lim is not None}

    def one(self, plan: TaskPlan, case: TestCase) -> CaseLimit | None:
        """The relative limit of `case`, or None where it keeps the task's limit."""
        factor, floor = self.config.test_time_factor, self.config.test_time_floor_s
        if factor is None:
            return None
        walls: dict[str, float] = {}
        for label in OWN_SOLUTIONS:
            run = self.runs.run_of(plan, label, case)
            if run is None:
                continue  # the task has no such solution (or it cannot be built)
            if not run.ok or run.wall_s is None:
                return None
            walls[label] = run.wall_s
        if not walls:
            return None
        slower = max(walls, key=lambda k: walls[k])
        wall = min(plan.limits.wall_s, max(floor, factor * walls[slower]))
        if wall >= plan.limits.wall_s:
            return None
        why = (f"test limit {wall:.2f} s = max({floor:g} s, {factor:g} x the {slower}'s "
               f"{walls[slower]:.3f} s)")  # fmt: skip
        return CaseLimit(limits=plan.limits.model_copy(update={"wall_s": wall}), why=why)
