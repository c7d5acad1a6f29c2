"""`MachineScale`: a task's time limit scaled to this machine's measured speed on the task, for
tasks whose limit was set on another machine beside published times (PerfCodeBench's
`benchmark_timeout_sec`, next to its stored baseline and reference medians).

A limit written for a faster machine cuts a correct baseline on a slower one: PerfCodeBench's
`bitmap_filter_sum_v600_d` has an 18 s limit for a baseline published at 10.8 s, which runs
~2.9x that here, while its reference runs only ~1.7x its published time: a machine is not
uniformly slower (this one loses most on memory-bound loops). The task's CPU and wall limits
are multiplied by the largest of here / published over the task's own solutions (baseline and
reference), at least 1, at most `JudgeConfig.machine_scale_cap`. `here` is the harness time
(the metric the published medians are of), or the run's CPU time where less (one-thread tasks:
the harness time is wall time, which load inflates), of the judge's own runs of those solutions
(`ExpectedOutputs.run_of`, the runs that give the harness's agreed answer), made once per task
under the limit times the cap, before any candidate of the task runs: no candidate can change
its task's scale, and each candidate gets its task's scaled limit, never more. A run that times
out under a scaled limit says so (`why`): the clock, the published limit, the factor and the
times it came from.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from perfgym.ceilings import MAX_TIME_S
from perfgym.judge.plan import TaskPlan
from perfgym.judge.references import OwnRun
from perfgym.tasks.task import StoredStatus, Task, TaskKind

#: The task's own solutions whose published and measured times set the scale.
OWN = ("reference", "baseline")


@dataclass(frozen=True)
class OwnSpeed:
    """One own solution's published time and its time here (None: its run did not finish)."""

    label: str
    published_s: float
    here_s: float | None
    why: str = ""

    @property
    def ratio(self) -> float | None:
        return None if self.here_s is None else self.here_s / self.published_s

    @property
    def said(self) -> str:
        if self.here_s is None:
            return f"the {self.label} gave no time here ({self.why})"
        return (f"the {self.label} {self.here_s:.3g} s here, published {self.published_s:.3g} s "
                f"(x{self.ratio:.2f})")  # fmt: skip


@dataclass(frozen=True)
class MachineScale:
    """How a task's limits were scaled: the factor, the published limit, the cap, and the own
    solutions' times it came from."""

    factor: float
    limit_s: float
    cap: float
    speeds: tuple[OwnSpeed, ...]

    @property
    def why(self) -> str:
        """What a timeout under these limits adds to its message."""
        times = "; ".join(s.said for s in self.speeds)
        if not any(s.here_s is not None for s in self.speeds):
            return f"the task's published limit {self.limit_s:g} s, not scaled: {times}"
        return (f"the task's published limit {self.limit_s:g} s x {self.factor:.2f} = "
                f"{self.limit_s * self.factor:.1f} s, from its own solutions' times (harness "
                f"time, or CPU time where less): {times}; factor the largest ratio, at least 1, "
                f"at most {self.cap:g}")  # fmt: skip


def published_times(task: Task) -> dict[str, float]:
    """The own solutions' published medians (harness time, seconds), where the task's limit
    comes with them: a harness task whose limit is still the one published beside its times
    (the loader's `metadata["published_limit_s"]`; a limit given by the user, `--time-limit`,
    is not scaled); {} where there is nothing to scale by."""
    published_limit = task.metadata.get("published_limit_s")
    if task.kind is not TaskKind.HARNESS or task.time_limit_s is None:
        return {}
    if published_limit is None or float(published_limit) != task.time_limit_s:
        return {}
    sols = {"reference": task.references[0] if task.references else None,
            "baseline": task.baseline}  # fmt: skip
    out = {}
    for label in OWN:
        s = sols[label].stored if sols[label] is not None else None  # type: ignore[union-attr]
        if s is None or s.status != StoredStatus.OK or s.all_ok is False:
            continue
        if s.median_s and s.median_s > 0:
            out[label] = s.median_s
    return out


def time_here(task: Task, run: OwnRun | None) -> tuple[float | None, str]:
    """An own solution's time on the published metric here, or None and why."""
    if run is None:
        return None, "it could not run"
    if not run.ok:
        return None, f"it did not finish: {run.why}"
    if run.reported_s is None:
        return None, "its run reported no harness time"
    if run.cpu_s is not None and task.cores == 1:
        # The harness time is wall time, which a loaded machine inflates; a one-thread run's
        # CPU time (its whole process: set-up included) bounds the timed part's CPU too. The
        # lesser of the two is the closer to this machine's speed on the limit's clock.
        return min(run.reported_s, run.cpu_s), ""
    return run.reported_s, ""


def machine_scale(task: Task, runs: dict[str, OwnRun | None], cap: float) -> MachineScale | None:
    """The scale of `task`'s limits from the judge's own runs of its solutions (by label);
    None where the task has no published time to scale by."""
    published = published_times(task)
    if not published or task.time_limit_s is None:
        return None
    speeds = []
    for label, p in published.items():
        here, why = time_here(task, runs.get(label))
        speeds.append(OwnSpeed(label=label, published_s=p, here_s=here, why=why))
    ratios = [s.ratio for s in speeds if s.ratio is not None]
    factor = min(cap, max([1.0, *ratios]))
    return MachineScale(factor=factor, limit_s=task.time_limit_s, cap=cap, speeds=tuple(speeds))


def scaled(plan: TaskPlan, factor: float, note: str) -> TaskPlan:
    """`plan` under its task's limits times `factor` (at most a day), saying why (`note`)."""
    lim = plan.limits
    cpu = min(MAX_TIME_S, lim.effective_cpu_s * factor)
    wall = min(MAX_TIME_S, lim.wall_s * factor)
    limits = lim.model_copy(update={"cpu_s": cpu, "wall_s": wall})
    out = dataclasses.replace(plan, limits=limits, limit_note=note)
    if "key" in plan.__dict__:  # the cached key: the same task
        out.__dict__["key"] = plan.__dict__["key"]
    return out
