"""Validating a suite: every baseline, reference and pool solution builds and passes its own
tests, and the reference is faster than the baseline with statistical confidence."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import ConfigError
from perfgym.judge.agreement import Direction, direction, published_speedup
from perfgym.judge.candidate import Candidate
from perfgym.judge.config import JudgeConfig
from perfgym.judge.validate_rerun import Rerun, RerunPolicy, rerun_undecided
from perfgym.judge.verdict import Stage, Timing, Verdict
from perfgym.tasks.task import Task
from perfgym.timing.compare import Comparison, compare
from perfgym.timing.filterability import duration_filterability

if TYPE_CHECKING:
    from perfgym.judge.backend import JudgeBackend
    from perfgym.judge.judge import Judge


class SolutionCheck(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str
    stage: Stage
    detail: str = ""
    reason: str = ""
    estimate_s: float | None = None
    infra_error: bool = False
    run_s: float = Field(
        0.0,
        ge=0,
        description="Core-seconds of its sandboxed runs: each run's wall time (tests and "
        "measured rounds) times the cores it held; the floor of a validation sums them.",
    )


class TaskValidation(BaseModel):
    """One task's validation row."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    language: str
    family: str
    split: str
    solutions: list[SolutionCheck]
    speedup: float | None = Field(None, description="baseline / reference duration.")
    comparison: Comparison | None = None
    problems: list[str] = Field(default_factory=list)
    skipped: str = Field("", description="Why the task could not be validated here (e.g. no GPU).")
    duration_robust_cv: float | None = Field(
        None, description="Robust CV of the representative per-workload durations (DMC-Optim B.7)."
    )
    duration_filterable: bool | None = Field(
        None, description="duration_robust_cv >= 0.3: the workloads are timing-informative."
    )
    cores: int | None = Field(
        None, description="Cores each measured run held (None: unpinned or nothing measured)."
    )
    cores_wanted: int = Field(1, description="Cores the task asks for (`Task.cores`).")
    published_speedup: float | None = Field(
        None, description="Published Tb/Tr (stored medians, e.g. PerfCodeBench's results)."
    )
    direction: Direction | None = Field(
        None, description="This validation against the published ordering (judge/agreement.py)."
    )
    task_key: str = Field(
        "", description="The task's content as validated (a rerun reuses the row when equal)."
    )
    wall_s: float | None = Field(
        None, description="Seconds this row took to validate (its batch's, on a batched backend)."
    )
    repeats: int | None = Field(
        None, description="Measured runs per workload of the session whose verdicts the row holds."
    )
    rerun: Rerun | None = Field(
        None, description="The row is a rerun's (its first session was undecided): how it came."
    )

    @property
    def ok(self) -> bool:
        return not self.problems and not self.skipped


def validation_config(config: JudgeConfig) -> JudgeConfig:
    """`config` for validating: the solutions are the candidates, so the baseline and reference
    are not measured beside them again (that would only double the time). A backend that
    validates (`validate_batch`) is built with it."""
    return config.model_copy(update={"measure_baseline": False, "measure_reference": False})


def solution_candidates(task: Task) -> list[Candidate]:
    """The task's baseline, references and pool as candidates of their own task."""
    sols = [task.baseline, *task.references, *task.pool]
    return [Candidate(task, source=s.source, model=s.label) for s in sols]


def validate_task(judge: Judge, task: Task, min_speedup: float = 1.0,
                  rerun: RerunPolicy | None = None) -> TaskValidation:  # fmt: skip
    """Judge the baseline, references and pool as candidates of their own task and compare;
    where the task has a published ordering, say whether this run agrees with it. With
    `rerun`, an undecided comparison is validated again at more repeats (`validate_rerun`)."""
    saved = judge.config
    judge.config = validation_config(saved)
    try:
        judged = lambda ts: _judged_rows(judge, ts, min_speedup, catch=False)  # noqa: E731
        rows = judged([task])
        return rows[0] if rerun is None else rerun_undecided(judge, [task], rows, rerun, judged)[0]
    finally:
        judge.config = saved


def validate_batch(backend: JudgeBackend, tasks: Sequence[Task], min_speedup: float = 1.0,
                   rerun: RerunPolicy | None = None) -> list[TaskValidation]:  # fmt: skip
    """The rows of `tasks`, their solutions judged in one `judge_many` on `backend` (a Ray
    cluster spreads the tasks over its nodes), which must be built with `validation_config`.
    A batch that cannot be judged is a row per task saying why, never the end. With `rerun`,
    the undecided rows are validated again at more repeats, where cheap (`validate_rerun`)."""
    rows = _judged_rows(backend, tasks, min_speedup)
    if rerun is None:
        return rows
    return rerun_undecided(backend, tasks, rows, rerun,
                           lambda again: _judged_rows(backend, again, min_speedup))  # fmt: skip


def _judged_rows(backend: JudgeBackend, tasks: Sequence[Task], min_speedup: float,
                 catch: bool = True) -> list[TaskValidation]:  # fmt: skip
    """One `judge_many` of the tasks' solutions; each row says the repeats it was judged at.
    `catch`: a batch that raises is a row per task saying why."""
    config = getattr(backend, "config", None)
    cands = [solution_candidates(t) for t in tasks]
    try:
        verdicts = backend.judge_many([c for cs in cands for c in cs])
    except Exception as exc:  # noqa: BLE001 - one batch's failure must not lose the others' rows
        if not catch:
            raise
        return [unjudged(t, exc) for t in tasks]
    rows, i = [], 0
    for task, cs in zip(tasks, cands, strict=True):
        rows.append(task_row(task, verdicts[i : i + len(cs)], min_speedup))
        rows[-1].repeats = config.repeats if config is not None else None
        i += len(cs)
    return rows


def unjudged(task: Task, exc: BaseException) -> TaskValidation:
    """The row of a task that could not be judged: why."""
    return TaskValidation(task_id=task.id, language=task.language.value, family=task.family,
                          split=task.split.value, solutions=[], cores_wanted=task.cores,
                          problems=[f"could not be judged: {exc}"])  # fmt: skip


def task_row(task: Task, verdicts: Sequence[Verdict], min_speedup: float = 1.0) -> TaskValidation:
    """A task's row from its solutions' verdicts (in `solution_candidates`' order)."""
    row = _validate(task, list(verdicts), min_speedup)
    if not row.skipped:
        row.published_speedup = published_speedup(task)
        faster = row.comparison.faster if row.comparison is not None else None
        row.direction = direction(row.published_speedup, faster)
    return row


def _validate(task: Task, verdicts: list[Verdict], min_speedup: float) -> TaskValidation:
    checks = [_check(v) for v in verdicts]
    row = TaskValidation(task_id=task.id, language=task.language.value, family=task.family,
                         split=task.split.value, solutions=checks,
                         cores_wanted=task.cores)  # fmt: skip
    row.cores = next((v.candidate.cores for v in verdicts if v.candidate is not None), None)
    timed = [v.candidate.per_workload_s for v in verdicts
             if v.candidate and v.candidate.ok]  # fmt: skip
    if timed:
        fil = duration_filterability(timed)
        row.duration_robust_cv, row.duration_filterable = fil.robust_cv, fil.filterable
    needs_gpu = [v for v in verdicts if v.detail == "NEEDS_GPU"]
    if needs_gpu:
        row.skipped = needs_gpu[0].reason
        return row
    for c in checks:
        if c.stage is not Stage.OK:
            row.problems.append(
                f"{c.label} is {c.stage.value}: {c.detail} {c.reason}".strip()[:300]
            )
    base, ref = verdicts[0], verdicts[1] if len(verdicts) > 1 else None
    if ref is None:
        row.problems.append("no reference solution")
        return row
    bt, rt = base.candidate, ref.candidate
    if bt and rt and bt.ok and rt.ok:
        try:
            row.comparison = compare(rt.samples_s, bt.samples_s)
        except ConfigError as exc:  # a duration no clock could give: say so, keep the row
            row.problems.append(f"baseline and reference not comparable: {exc}")
            return row
        if bt.estimate_s and rt.estimate_s:
            row.speedup = bt.estimate_s / rt.estimate_s
        # The comparison's ratio is Tr/Tb; the table's speedup is Tb/Tr.
        speedup = row.speedup or (1 / row.comparison.ratio if row.comparison.ratio else None)
        shown = f"speedup {speedup:.2f}x, " if speedup else ""
        pv = row.comparison.p_value
        p = "no p-value" if pv is None else f"p = {pv:.3g}"
        if row.comparison.faster == "b":
            row.problems.append(f"reference significantly slower ({shown}{p})")
        elif row.comparison.faster != "a":
            row.problems.append(f"reference not significantly faster ({shown}{p})")
        elif row.speedup is not None and row.speedup < min_speedup:
            row.problems.append(f"speedup {row.speedup:.2f}x below the required {min_speedup:g}x")
    elif not row.problems:
        row.problems.append(
            "; ".join(
                _timing_problem(label, t)
                for label, t in (("baseline", bt), ("reference", rt))
                if t is None or not t.ok
            )  # fmt: skip
        )
    return row


def _timing_problem(label: str, timing: Timing | None) -> str:
    """'baseline TIMEOUT (...)' when a timed run hit its limit, else why the timing is missing."""
    if timing is None:
        return f"{label} timing unavailable"
    why = timing.status_reason or timing.status.value
    if "timeout" in why.lower():
        return f"{label} TIMEOUT ({why})"
    return f"{label} timing unavailable ({why})"


def validate_suite(
    judge: Judge,
    tasks: list[Task],
    min_speedup: float = 1.0,
    progress: Callable[[int, int], None] | None = None,
    rerun: RerunPolicy | None = None,
) -> list[TaskValidation]:
    rows = []
    for i, task in enumerate(tasks):
        rows.append(validate_task(judge, task, min_speedup, rerun))
        if progress is not None:
            progress(i + 1, len(tasks))
    return rows


def _check(v: Verdict) -> SolutionCheck:
    return SolutionCheck(
        label=v.model,
        stage=v.stage,
        detail=v.detail,
        reason=v.reason[:300],
        estimate_s=v.candidate.estimate_s if v.candidate else None,
        infra_error=v.infra_error,
        run_s=run_seconds(v),
    )


def run_seconds(v: Verdict) -> float:
    """Core-seconds of a verdict's sandboxed runs: each correctness test's wall time, and each
    measured round's sandbox wall time (the samples themselves where the clock is wall or CPU
    and no sandbox wall is recorded), times the cores each run held."""
    t = v.candidate
    held = (t.cores if t is not None else None) or 1
    total = sum(x.wall_s or 0.0 for x in v.tests)
    if t is not None:
        if t.external_walls_s:
            total += sum(t.external_walls_s)
        elif t.clock in ("wall", "cpu"):
            total += sum(t.samples_s)
    return total * held
