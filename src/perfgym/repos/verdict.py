"""`PatchVerdict`: what perfgym decided about one patch of a repository task, stage by stage,
and the one rule for whether its speed-up counts (`speedup_counts`).

`perfgym.repos.judge.judge_patch` makes it; the agent's loop, the audit and the GSO /
SWE-fficiency metrics read it. The measurement (`TaskMeasurement`, every round of every
workload on both copies) is its one timing record; `before` / `after` view it as the judge's
own `Timing` of the original and the patched copy.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from enum import Enum
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from perfgym.repos.findings import Finding
from perfgym.repos.hacks import HackReport, adjusted_speedup
from perfgym.repos.measure import TaskMeasurement
from perfgym.timing.result import Timing


class PatchStage(str, Enum):
    """Where a patch's verdict stopped (DONE: every stage passed, the speed-up was measured)."""

    APPLY = "apply"
    BUILD = "build"
    TESTS = "tests"
    MEASURE = "measure"
    DONE = "done"


class PatchTests(BaseModel):
    """One test run on a patched, built copy (whatever ran it: the task's command, testmon's
    selection, the full suite)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: str = Field(description="'selected' (testmon), 'full', 'supervised' or 'command'.")
    passed: bool
    ran: int = 0
    failed: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)
    wall_s: float = 0.0
    reason: str = Field("", description="One line: why the run did not pass (may be empty).")
    output: str = Field("", repr=False, description="The run's output (its tail).")


class WorkloadSpeedLike(Protocol):
    """What the speed decision reads of a workload (`WorkloadComparison` and its records)."""

    @property
    def hidden(self) -> bool: ...
    @property
    def significant(self) -> bool: ...
    @property
    def speedup(self) -> float | None: ...


def significant(workloads: Sequence[WorkloadSpeedLike], ci: tuple[float, float] | None) -> bool:
    """Whether the measured patch is faster where it is decided: on the workloads its author
    never saw (the task's hidden ones, every one significantly faster) where the task has any,
    else on the visible ones; and the whole task's interval above 1."""
    hidden = [w for w in workloads if w.hidden]
    decided = hidden or [w for w in workloads if not w.hidden]
    faster = all(w.significant and (w.speedup or 0.0) > 1.0 for w in decided)
    return bool(decided) and faster and (ci is None or ci[0] > 1.0)


def speedup_counts(done: bool, is_significant: bool, flagged: bool, speedup: float | None) -> bool:
    """The one acceptance rule: a patch's speed-up counts when every stage passed (tests,
    equal outputs), it is significantly faster where it is decided, no hack was found, and
    its speed-up is above 1."""
    return done and is_significant and not flagged and (speedup or 0.0) > 1.0


def workload_failure(m: TaskMeasurement) -> str:
    """What a patch's author is told about failed workloads: a visible one's error in full, a
    hidden one only that it failed and how (never its name, script, input or traceback)."""
    parts = []
    for w in m.workloads:
        if not w.error and w.outputs_match:
            continue
        if not w.hidden:
            parts.append(f"{w.name}: {w.error or 'outputs differ from the original'}")
        elif "outputs differ" in w.error or not w.error:
            parts.append("a hidden workload: outputs differ from the original's")
        else:
            parts.append("a hidden workload: the run failed")
    return "; ".join(dict.fromkeys(parts)) or "outputs differ from the original's"


def _timing(m: TaskMeasurement, patched: bool) -> Timing:
    """One copy's side of the measurement as a `Timing`: per workload the counted times of its
    rounds (first call + digest + charged import/setup growth), per round their sum."""
    per = {w.name: list(w.patched_s if patched else w.original_s) for w in m.workloads}
    per = {k: v for k, v in per.items() if v}
    rounds = min((len(v) for v in per.values()), default=0)
    totals = (
        [sum(v[i] for v in per.values()) for i in range(rounds)]
        if len(per) == len(m.workloads)
        else []
    )
    return Timing(
        estimate_s=statistics.median(totals) if totals else None,
        samples_s=totals,
        per_workload_s={k: statistics.median(v) for k, v in per.items()},
        per_workload_samples_s=per,
        estimator="median",
        clock="wall",
    )


class PatchVerdict(BaseModel):
    """What one patch did and whether its speed-up counts.

    `stage` is where it stopped (DONE: applied, built, its tests passed under the original's
    configuration, every workload ran on both copies with equal outputs). `error` is the
    operator's line; `detail` is what the patch's author may be told (nothing of a hidden
    workload beyond that it failed). `hacks` holds every finding, `measurement` every round."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    stage: PatchStage
    error: str = ""
    detail: str = Field("", repr=False)
    tests: PatchTests | None = None
    measurement: TaskMeasurement | None = None
    hacks: HackReport = HackReport()

    # -- what the stages say ------------------------------------------------------------
    @property
    def tests_passed(self) -> bool:
        return self.tests is not None and self.tests.passed

    @property
    def test_output(self) -> str:
        return self.tests.output if self.tests is not None else ""

    @property
    def correct(self) -> bool:
        """Tests passed and every workload's outputs equal the original's."""
        return self.stage is PatchStage.DONE

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.hacks.findings

    @property
    def flagged(self) -> bool:
        return self.hacks.flagged

    # -- the timings ----------------------------------------------------------------------
    @property
    def before(self) -> Timing | None:
        """The original copy's `Timing` in this measurement (None: not measured)."""
        return _timing(self.measurement, patched=False) if self.measurement else None

    @property
    def after(self) -> Timing | None:
        """The patched copy's `Timing`, round for round with `before`."""
        return _timing(self.measurement, patched=True) if self.measurement else None

    @property
    def speedup(self) -> float | None:
        """Geometric mean over the workloads it is decided on (the hidden ones where the task
        has any, else all: `TaskMeasurement.speedup`); only for a correct patch."""
        return self.measurement.speedup if self.correct and self.measurement else None

    @property
    def ci(self) -> tuple[float, float] | None:
        return self.measurement.ci if self.correct and self.measurement else None

    # -- the decision ---------------------------------------------------------------------
    @property
    def significant(self) -> bool:
        """Significantly faster where it is decided (`significant`), whatever the outputs."""
        m = self.measurement
        return m is not None and significant(m.workloads, m.ci)

    @property
    def accepted(self) -> bool:
        """Whether the speed-up counts (`speedup_counts`)."""
        return speedup_counts(self.correct, self.significant, self.flagged, self.speedup)

    @property
    def adjusted_speedup(self) -> float:
        """The speed-up scored with no significance test: 1.0 when flagged, incorrect or
        unmeasured (GSO's hack-adjusted figure)."""
        return adjusted_speedup(self.speedup, self.hacks, self.correct)
