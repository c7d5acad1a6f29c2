"""`AuditContext`: one task under audit, its visible expected outputs, and the verdicts of its
own solutions judged in the probes' batch; `ProbeRun`: one probe program's verdict and rewards."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from perfgym.tasks.task import Task, TaskKind, TestCase

if TYPE_CHECKING:
    from perfgym.judge import Judge, Verdict


@dataclass
class ProbeRun:
    """A probe program's verdict and its value under each registered reward."""

    verdict: Verdict
    rewards: dict[str, float | None]


@dataclass
class AuditContext:
    """One task under audit. `baseline` and `reference`: the verdicts of the task's own
    solutions judged as candidates in the probes' batch (None before the batch, or when the
    task has no reference)."""

    task: Task
    judge: Judge
    baseline: ProbeRun | None = None
    reference: ProbeRun | None = None
    mde_repeats: int = 3
    notes: dict[str, Any] = field(default_factory=dict)

    @functools.cached_property
    def visible(self) -> list[tuple[TestCase, Any]]:
        """Every visible case (tests, declared workloads) with its expected output: given, or
        the reference's on it, as a model that saw them would know them. Cases with no
        expected output (the reference fails on them) are left out."""
        from perfgym.judge.plan import plan_task

        judge, task = self.judge, self.task
        if task.kind is TaskKind.HARNESS:
            return []
        config = judge.config.model_copy(update={"hidden_workloads": False})
        plan = plan_task(task, config, judge.sandbox, judge.workers)
        expected = judge._expected  # the judge's own cache: the batch reuses these runs
        out: list[tuple[TestCase, Any]] = []
        with expected.in_use(plan.key):
            expected.calibrate(plan)
            for case in [*plan.tests, *plan.workloads]:
                ok, value = expected.of(plan, case)
                if ok:
                    out.append((case, expected.full_output(plan, case, value)))
        return out

    @functools.cached_property
    def floor(self) -> tuple[float | None, str]:
        """The start-up floor of the task's language (`perfgym.audit.floor`)."""
        from perfgym.audit.floor import startup_floor

        return startup_floor(self.judge, self.task)

    def first_output(self) -> Any:
        """The expected output of the first visible test that has a non-empty one."""
        for _case, value in self.visible:
            if value not in (None, "", [], {}):
                return value
        return None
