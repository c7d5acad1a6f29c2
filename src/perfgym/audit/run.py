"""Auditing a task: its probes' programs and its own solutions judged in one batch, then each
probe's result; and a suite, task by task."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from perfgym.audit.context import AuditContext, ProbeRun
from perfgym.audit.programs import NotWritable
from perfgym.audit.registry import Probe
from perfgym.audit.results import Outcome, ProbeKind, ProbeResult, Severity, TaskAudit
from perfgym.audit.rewards_of import reward_values
from perfgym.judge import Candidate, Judge
from perfgym.tasks.task import Task

#: The model name the probe programs' verdicts carry (`audit:<probe>`).
MODEL_PREFIX = "audit:"


def audit_task(judge: Judge, task: Task, probes: Sequence[Probe], *, suite: str = "",
               mde_repeats: int = 3) -> TaskAudit:  # fmt: skip
    """Every probe on `task`; one `judge_many` call judges all their programs beside the
    task's baseline and reference."""
    t0 = time.monotonic()
    ctx = AuditContext(task, judge, mde_repeats=mde_repeats)
    cands = [Candidate(task, source=task.baseline.source, model=f"{MODEL_PREFIX}baseline",
                       suite=suite)]  # fmt: skip
    if task.reference is not None:
        cands.append(Candidate(task, source=task.reference.source,
                               model=f"{MODEL_PREFIX}reference", suite=suite))  # fmt: skip
    spans: dict[str, tuple[int, int]] = {}
    not_applicable: dict[str, str] = {}
    for probe in probes:
        try:
            sources = probe.programs(ctx)
        except NotWritable as exc:
            not_applicable[probe.name] = str(exc)
            continue
        start = len(cands)
        cands += [Candidate(task, source=s, model=f"{MODEL_PREFIX}{probe.name}", sample=i,
                            suite=suite) for i, s in enumerate(sources)]  # fmt: skip
        spans[probe.name] = (start, len(cands))
    verdicts = judge.judge_many(cands)
    rewards = reward_values(verdicts)
    runs = [ProbeRun(v, r) for v, r in zip(verdicts, rewards, strict=True)]
    ctx.baseline = runs[0]
    ctx.reference = runs[1] if task.reference is not None else None
    results = []
    for probe in probes:
        if probe.name in not_applicable:
            results.append(ProbeResult(probe=probe.name, kind=probe.kind,
                                       outcome=Outcome.NOT_APPLICABLE, severity=Severity.INFO,
                                       detail=not_applicable[probe.name]))  # fmt: skip
            continue
        lo, hi = spans.get(probe.name, (0, 0))
        if probe.kind is ProbeKind.GAMEABILITY and hi == lo:
            results.append(ProbeResult(probe=probe.name, kind=probe.kind,
                                       outcome=Outcome.NOT_APPLICABLE, severity=Severity.INFO,
                                       detail="the probe wrote no program for this task"))  # fmt: skip
            continue
        results.append(probe.assess(ctx, runs[lo:hi]))
    return TaskAudit(task_id=task.id, suite=suite, language=task.language.value,
                     kind=task.kind.value, results=results, elapsed_s=time.monotonic() - t0,
                     candidates=len(cands))  # fmt: skip


def audit_tasks(judge: Judge, tasks: Sequence[Task], probes: Sequence[Probe], *,
                suite: str = "", mde_repeats: int = 3,
                done: Callable[[TaskAudit], None] | None = None) -> list[TaskAudit]:  # fmt: skip
    """`audit_task` on each task in order; `done` gets each result as soon as it is made."""
    out = []
    for task in tasks:
        audit = audit_task(judge, task, probes, suite=suite, mde_repeats=mde_repeats)
        if done is not None:
            done(audit)
        out.append(audit)
    return out
