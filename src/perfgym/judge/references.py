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


class ExpectedOutputs:
    """The expected output of a case: given, or the reference's output on it (run once per
    task id and case id)."""

    def __init__(self, references: ReferenceCache) -> None:
        self.references = references
        self._by_case: dict[tuple[str, str], Any] = {}

    def of(self, plan: TaskPlan, case: TestCase) -> tuple[bool, Any]:
        """(True, the expected output), or (False, why there is none)."""
        if case.expected is not None:
            return True, case.expected
        key = (plan.task.id, case.id)
        if key not in self._by_case:
            ref = self.references.of(plan).reference
            if ref is None or not ref.ready:
                return False, "the reference cannot run, so there is no expected output"
            out = plan.runner()(ref, case, None)
            if out.status is not Status.OK:
                return False, f"the reference failed on {case.id}: {out.status.value} {out.message}"
            self._by_case[key] = out.output
        return True, self._by_case[key]
