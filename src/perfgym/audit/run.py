"""Auditing tasks: each task's probe programs and its own solutions judged in one batch (the
judge groups them per task), then each probe's result. Whatever fails inside one task (a probe
writer, the judge on that task's candidates, an assessment) is that task's error result, never
the end of the audit."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pydantic import ValidationError

from perfgym.audit.content import content_key
from perfgym.audit.context import AuditContext, ProbeRun
from perfgym.audit.programs import NotWritable
from perfgym.audit.registry import Probe
from perfgym.audit.results import Outcome, ProbeKind, ProbeResult, Severity, TaskAudit
from perfgym.audit.rewards_of import reward_values
from perfgym.errors import PerfgymError
from perfgym.judge import Candidate, Judge, Verdict
from perfgym.tasks.task import Task

#: The model name the probe programs' verdicts carry (`audit:<probe>`).
MODEL_PREFIX = "audit:"
#: Tasks whose candidates go to the judge together: it tests them side by side (one per
#: core) and measures them one task at a time, as `perfgym eval` does.
TASKS_PER_CALL = 8


@dataclass
class _Planned:
    """One task's candidates (its baseline, its reference, then the probes' programs), which
    of them each probe wrote, and the probes that wrote none (with why)."""

    ctx: AuditContext
    probes: Sequence[Probe]
    cands: list[Candidate]
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)
    not_applicable: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    t0: float = field(default_factory=time.monotonic)


def _plan(judge: Judge, task: Task, probes: Sequence[Probe], suite: str, mde_repeats: int
          ) -> _Planned:  # fmt: skip
    ctx = AuditContext(task, judge, mde_repeats=mde_repeats)
    own = [("baseline", task.baseline), ("reference", task.reference)]
    plan = _Planned(ctx, probes, [Candidate(task, source=s.source, model=f"{MODEL_PREFIX}{label}",
                                            suite=suite) for label, s in own if s is not None])  # fmt: skip
    for probe in probes:
        try:
            sources = probe.programs(ctx)
        except NotWritable as exc:
            plan.not_applicable[probe.name] = str(exc)
            continue
        except Exception as exc:  # a writer's bug on this task's data: that probe's error
            plan.errors[probe.name] = f"the probe could not write its program: {_line(exc)}"
            continue
        start = len(plan.cands)
        plan.cands += [Candidate(task, source=s, model=f"{MODEL_PREFIX}{probe.name}", sample=i,
                                 suite=suite) for i, s in enumerate(sources)]  # fmt: skip
        plan.spans[probe.name] = (start, len(plan.cands))
    return plan


def _finish(plan: _Planned, verdicts: Sequence[Verdict]) -> TaskAudit:
    ctx, task = plan.ctx, plan.ctx.task
    rewards = reward_values(verdicts)
    runs = [ProbeRun(v, r) for v, r in zip(verdicts, rewards, strict=True)]
    ctx.baseline = runs[0]
    ctx.reference = runs[1] if task.reference is not None else None
    results = []
    for probe in plan.probes:
        lo, hi = plan.spans.get(probe.name, (0, 0))
        if probe.name in plan.errors:
            results.append(_error(probe, plan.errors[probe.name]))
            continue
        why = plan.not_applicable.get(probe.name)
        if (
            why is None
            and probe.kind is ProbeKind.GAMEABILITY
            and hi == lo
            and probe.writes_programs
        ):
            why = "the probe wrote no program for this task"
        if why is not None:
            results.append(ProbeResult(probe=probe.name, kind=probe.kind,
                                       outcome=Outcome.NOT_APPLICABLE, severity=Severity.INFO,
                                       detail=why))  # fmt: skip
            continue
        try:
            results.append(probe.assess(ctx, runs[lo:hi]))
        except Exception as exc:
            plan.errors[probe.name] = f"the probe could not assess its runs: {_line(exc)}"
            results.append(_error(probe, plan.errors[probe.name]))
    error = next((f"{name}: {why}" for name, why in plan.errors.items()), None)
    return TaskAudit(task_id=task.id, task_key=content_key(task), suite=plan.cands[0].suite,
                     language=task.language.value, kind=task.kind.value, results=results,
                     elapsed_s=time.monotonic() - plan.t0, candidates=len(plan.cands),
                     error=error)  # fmt: skip


def _line(exc: BaseException) -> str:
    """An exception in one line: its type and its message's first line, at most 300 chars."""
    if isinstance(exc, ValidationError):  # its first line names only the model
        text = ["; ".join(e["msg"] for e in exc.errors())]
    else:
        text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


def _error(probe: Probe, detail: str) -> ProbeResult:
    return ProbeResult(probe=probe.name, kind=probe.kind, outcome=Outcome.INFRA_ERROR,
                       severity=Severity.INFO, detail=detail)  # fmt: skip


def failed_task(task: Task, probes: Sequence[Probe], suite: str, exc: BaseException,
                t0: float | None = None) -> TaskAudit:  # fmt: skip
    """The result of a task whose audit failed: every probe an infra error saying why (a
    resumed audit does such a task again)."""
    detail = f"the task could not be audited: {_line(exc)}"
    return TaskAudit(task_id=task.id, task_key=content_key(task), suite=suite,
                     language=task.language.value, kind=task.kind.value,
                     results=[_error(p, detail) for p in probes], error=detail,
                     elapsed_s=0.0 if t0 is None else time.monotonic() - t0)  # fmt: skip


def audit_task(judge: Judge, task: Task, probes: Sequence[Probe], *, suite: str = "",
               mde_repeats: int = 3) -> TaskAudit:  # fmt: skip
    """Every probe on `task`: one `judge_many` call judges all their programs beside the
    task's baseline and reference."""
    plan = _plan(judge, task, probes, suite, mde_repeats)
    return _finish(plan, judge.judge_many(plan.cands))


def audit_tasks(judge: Judge, tasks: Sequence[Task], probes: Sequence[Probe], *,
                suite: str = "", mde_repeats: int = 3,
                done: Callable[[TaskAudit], None] | None = None) -> list[TaskAudit]:  # fmt: skip
    """`audit_task` on every task, TASKS_PER_CALL tasks per judge call; `done` gets each
    task's result as soon as its verdicts are in (to write it at once)."""
    out: list[TaskAudit] = []
    for start in range(0, len(tasks), TASKS_PER_CALL):
        group: list[_Planned | TaskAudit] = []
        for t in tasks[start : start + TASKS_PER_CALL]:
            try:
                group.append(_plan(judge, t, probes, suite, mde_repeats))
            except Exception as exc:
                group.append(failed_task(t, probes, suite, exc))
                if done is not None:
                    done(group[-1])  # type: ignore[arg-type]
        judged = iter(_judged_together(judge, [g for g in group if isinstance(g, _Planned)], done))
        out += [next(judged) if isinstance(g, _Planned) else g for g in group]
    return out


class _Unwritten(PerfgymError):  # noqa: N818 - a carrier, never seen outside this module
    """`done` raised (a result could not be written): the run's failure, not the task's."""


def _judged_together(judge: Judge, plans: Sequence[_Planned],
                     done: Callable[[TaskAudit], None] | None) -> list[TaskAudit]:  # fmt: skip
    try:
        return _judged(judge, plans, done)
    except _Unwritten as exc:
        assert exc.__cause__ is not None
        raise exc.__cause__ from None


def _judged(judge: Judge, plans: Sequence[_Planned],
            done: Callable[[TaskAudit], None] | None) -> list[TaskAudit]:  # fmt: skip
    """The tasks' candidates in one judge call; each task finished as its verdicts arrive.
    When the call fails, the tasks it had not finished are judged one by one, and a task
    whose own call fails gets its error result."""
    owner = [(k, j) for k, p in enumerate(plans) for j in range(len(p.cands))]
    got: list[dict[int, Verdict]] = [{} for _ in plans]
    finished: dict[int, TaskAudit] = {}

    def arrived(indices: Sequence[int], verdicts: Sequence[Verdict]) -> None:
        for i, v in zip(indices, verdicts, strict=True):
            k, j = owner[i]
            got[k][j] = v
        for k, p in enumerate(plans):
            if k not in finished and len(got[k]) == len(p.cands):
                try:
                    finished[k] = _finish(p, [got[k][j] for j in range(len(p.cands))])
                except Exception as exc:
                    finished[k] = failed_task(p.ctx.task, p.probes, p.cands[0].suite, exc, p.t0)
                _write(finished[k])

    def _write(audit: TaskAudit) -> None:
        try:
            if done is not None:
                done(audit)
        except Exception as exc:
            raise _Unwritten() from exc

    try:
        judge.judge_many([c for p in plans for c in p.cands], finished=arrived)
    except _Unwritten:
        raise
    except Exception as exc:
        left = [k for k in range(len(plans)) if k not in finished]
        if len(plans) == 1 and left:
            p = plans[0]
            finished[0] = failed_task(p.ctx.task, p.probes, p.cands[0].suite, exc, p.t0)
            _write(finished[0])
        else:
            for k in left:
                (finished[k],) = _judged(judge, [plans[k]], done)
    return [finished[k] for k in range(len(plans))]
