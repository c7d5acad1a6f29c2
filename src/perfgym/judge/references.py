"""The judge's two caches: each task's baseline and reference, and the expected outputs the
reference gives where a case names none."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from perfgym.judge.plan import TaskPlan
from perfgym.judge.variant import Variant, prepare
from perfgym.sandbox.execution import Status
from perfgym.tasks.task import TestCase
from perfgym.toolchains import BuildCache


@dataclass(frozen=True)
class References:
    """A task's own solutions, prepared: None where the task has none."""

    baseline: Variant | None
    reference: Variant | None

    def items(self) -> list[tuple[str, Variant | None]]:
        return [("baseline", self.baseline), ("reference", self.reference)]


class ReferenceCache:
    """Each task's `References`, prepared (built) once per task id."""

    def __init__(self, cache: BuildCache) -> None:
        self.cache = cache
        self._by_task: dict[str, References] = {}
        self._lock = threading.Lock()

    def of(self, plan: TaskPlan) -> References:
        task = plan.task
        with self._lock:
            known = self._by_task.get(task.id)
        if known is not None:
            return known

        def made(label: str, sol: Any) -> Variant | None:
            return None if sol is None else prepare(
                task, label, source=sol.source, sandbox=plan.sandbox, cache=self.cache,
                workers=plan.workers,
            )  # fmt: skip

        refs = References(made("baseline", task.baseline), made("reference", task.reference))
        with self._lock:
            self._by_task[task.id] = refs
        return refs


@dataclass(frozen=True)
class OwnRun:
    """One run of a task's own solution (baseline or reference) on a case: whether it ended
    cleanly, its output (the reference's only) and the sandbox's wall time of the run."""

    ok: bool
    output: Any
    wall_s: float | None
    why: str


class ExpectedOutputs:
    """The expected output of a case: given, or the reference's output on it; and every run of
    the task's own solutions on a case, run once per task id, solution and case id (their wall
    times set the correctness tests' limits: `perfgym.judge.case_limits`)."""

    def __init__(self, references: ReferenceCache) -> None:
        self.references = references
        self._runs: dict[tuple[str, str, str], OwnRun] = {}
        self._lock = threading.Lock()

    def run_of(self, plan: TaskPlan, label: str, case: TestCase) -> OwnRun | None:
        """The run of the task's `label` solution on `case` (None: the task has no such
        solution, or it cannot run). Run under the task's own limits, in a fresh process."""
        key = (plan.task.id, label, case.id)
        with self._lock:
            known = self._runs.get(key)
        if known is not None:
            return known
        variant = getattr(self.references.of(plan), label)
        if variant is None or not variant.ready:
            return None
        out = plan.runner()(variant, case, None)
        run = OwnRun(ok=out.status is Status.OK,
                     output=out.output if label == "reference" else None, wall_s=out.wall_s,
                     why=f"{out.status.value} {out.message}".strip())  # fmt: skip
        if out.status is not Status.SANDBOX_ERROR:  # ours, not the program's: ask again later
            with self._lock:
                self._runs[key] = run
        return run

    def of(self, plan: TaskPlan, case: TestCase) -> tuple[bool, Any]:
        """(True, the expected output), or (False, why there is none)."""
        if case.expected is not None:
            return True, case.expected
        run = self.run_of(plan, "reference", case)
        if run is None:
            return False, "the reference cannot run, so there is no expected output"
        if not run.ok:
            return False, f"the reference failed on {case.id}: {run.why}"
        return True, run.output
