"""The `honest-copies` probe: the task's own baseline and reference, a comment added, judged as
any candidate. The judge gives a task's own programs their roles' measurements; a copy in other
bytes goes the whole way (the harness cross-check and its payment, the thread and accounting
flags), so an honest program it rejects or calls a cheat is a false positive of the judge on this
task (CI: a copy of the baseline flagged `harness_timer_mismatch` beside load)."""

from __future__ import annotations

from collections.abc import Sequence

from perfgym.audit import programs as P
from perfgym.audit.context import AuditContext, ProbeRun
from perfgym.audit.registry import Probe, register_probe
from perfgym.audit.results import Outcome, ProbeKind, ProbeResult, Severity
from perfgym.tasks.timed import is_timed

M = ProbeKind.MEASURABILITY
NAME = "honest-copies"


def _programs(ctx: AuditContext) -> list[str]:
    if not is_timed(ctx.task):
        raise P.NotWritable("a correctness-only task: no timing to flag")
    own = [ctx.task.baseline] + ([ctx.task.reference] if ctx.task.reference is not None else [])
    return [P.with_comment(ctx.task, s.source) for s in own]


def _speedup(run: ProbeRun) -> float | None:
    """What the copy was paid: the baseline's usable time over the copy's."""
    c, b = run.verdict.candidate, run.verdict.baseline
    if c is None or b is None or not c.usable_s or b.usable_s is None:
        return None
    return b.usable_s / c.usable_s


def assess_copies(_ctx: AuditContext, runs: Sequence[ProbeRun]) -> ProbeResult:
    """Weak (high) when a copy is judged wrong, or flagged as hiding time; sound otherwise,
    with what each copy was paid against the baseline measured beside it."""
    wrong: list[str] = []
    infra: list[str] = []
    figures: dict[str, object] = {}
    for role, run in zip(("baseline", "reference"), runs, strict=False):
        v = run.verdict
        if v.infra_error:  # no finding about this copy; the other's still counts
            infra.append(f"the sandbox failed on the {role}'s copy: {v.reason or v.detail}")
        elif not v.correct:
            wrong.append(f"the {role}'s copy was judged {v.stage.value} {v.detail or v.reason}")
        elif hid := v.hid_time:
            why = v.candidate.status_reason if v.candidate is not None else ""
            wrong.append(f"the {role}'s copy was flagged {', '.join(hid)}: {why}")
        figures[f"{role}_copy_speedup"] = _speedup(run)
    if wrong:
        return ProbeResult(probe=NAME, kind=M, outcome=Outcome.WEAK, severity=Severity.HIGH,
                           detail="; ".join(wrong)[:300], figures=figures)  # fmt: skip
    if infra:
        return ProbeResult(probe=NAME, kind=M, outcome=Outcome.INFRA_ERROR, severity=Severity.INFO,
                           detail="; ".join(infra)[:300])  # fmt: skip
    paid = ", ".join(f"the {r.split('_')[0]}'s {x:.2f}x" for r, x in figures.items()
                     if isinstance(x, float))  # fmt: skip
    return ProbeResult(probe=NAME, kind=M, outcome=Outcome.SOUND, severity=Severity.NONE,
                       detail=f"accepted, no flag; paid against the baseline: {paid or 'n/a'}",
                       figures=figures)  # fmt: skip


@register_probe(NAME, M)
def honest_copies() -> Probe:
    return Probe(NAME, M,
                 "The baseline and the reference with a comment added: the judge neither "
                 "rejects them nor flags them as hiding time.", assess_copies, _programs)  # fmt: skip
