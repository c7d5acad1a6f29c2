"""The suite summary of an audit ("N % of tasks accept a memorised answer", ...) and the
`--fail-on` gate."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from perfgym.audit.results import AuditSummary, Outcome, Severity, TaskAudit

#: Headline sentences: (probes, what a flagged task does). A task counts once per line.
HEADLINES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("lookup-table",), "accept a memorised answer"),
    (("lookup-fallback",), "give speed credit to memorised inputs"),
    (("no-output", "first-line", "constant", "exit-early", "crash-after-partial"),
     "accept a trivial answer"),
    (("baseline-identical", "baseline-comment"), "give the baseline again speed credit"),
    (("timing-aware",), "reward a program that idles when timed"),
    (("hidden-draws",), "draw hidden inputs from too few seeds to keep them hidden"),
    (("headroom",), "have a reference no faster than the baseline here (or < 1.2x)"),
    (("mde",), "cannot resolve a 1.2x change"),
    (("resolution",), "time runs under twice an empty program's start-up (or 1000x the clock's resolution)"),
    (("determinism",), "have a reference or baseline not accepted in every run"),
    (("limit-margin",), "have < 2x limit margin"),
    (("honest-copies",), "reject or flag as hiding time a copy of their own baseline or reference"),
    (("repo-setup-shift",), "credit work moved into the untimed setup"),
    (("repo-caching",), "credit results cached across timed runs"),
    (("repo-test-config",), "believe forged test outcomes or a patch's test configuration"),
    (("repo-headroom",), "have an expert patch not significantly faster (or < 1.2x)"),
    (("repo-setup-cover",), "leave half the expert's call or more uncharged in import + setup noise"),
)  # fmt: skip

_FLAGGED = (Outcome.SCORES, Outcome.WEAK)
_APPLIED = (Outcome.SCORES, Outcome.WEAK, Outcome.DOES_NOT_SCORE, Outcome.SOUND)


def summarise(audits: Sequence[TaskAudit], probes: Sequence[str]) -> AuditSummary:
    """Per probe: tasks flagged of those where it applied; the headline lines over those."""
    shares: dict[str, dict[str, int]] = {}
    for name in probes:
        got = [a.result(name) for a in audits]
        rows = [r for r in got if r is not None]
        shares[name] = {
            "flagged": sum(r.outcome in _FLAGGED for r in rows),
            "applicable": sum(r.outcome in _APPLIED for r in rows),
            "not_applicable": sum(r.outcome is Outcome.NOT_APPLICABLE for r in rows),
            "errors": sum(r.outcome is Outcome.INFRA_ERROR for r in rows),
        }
    lines = []
    for names, what in HEADLINES:
        names = tuple(n for n in names if n in probes)
        if not names:
            continue
        applied = [a for a in audits if any((r := a.result(n)) is not None and r.outcome in _APPLIED
                                            for n in names)]  # fmt: skip
        flagged = [a for a in applied if any((r := a.result(n)) is not None and r.outcome in _FLAGGED
                                             for n in names)]  # fmt: skip
        errors = sum(a not in applied and any((r := a.result(n)) is not None
                                               and r.outcome is Outcome.INFRA_ERROR
                                               for n in names) for a in audits)  # fmt: skip
        na = len(audits) - len(applied) - errors
        pct = 100.0 * len(flagged) / len(applied) if applied else 0.0
        tail = ", ".join(([f"{na} not applicable"] if na else [])
                         + ([f"{errors} could not be run"] if errors else []))  # fmt: skip
        if applied:
            tail = f" ({tail})" if tail else ""
            lines.append(f"{pct:.0f} % of tasks {what} ({len(flagged)}/{len(applied)}){tail}")
        else:
            lines.append(f"n/a: {what} (none of the {len(audits)} tasks: {tail})")
    failed = [(a.task_id, r.detail) for a in audits for r in a.results
              if r.outcome is Outcome.INFRA_ERROR]  # fmt: skip
    if failed:
        tasks = len({t for t, _ in failed})
        lines.append(f"errors: {tasks} task(s) had a probe perfgym could not run, e.g. "
                     f"{failed[0][0]}: {failed[0][1]}")  # fmt: skip
    worst = Counter(a.worst().value for a in audits)
    return AuditSummary(tasks=len(audits), lines=lines, shares=shares,
                        severities={s.value: worst.get(s.value, 0) for s in Severity})  # fmt: skip


def gate(audits: Sequence[TaskAudit], threshold: Severity) -> list[str]:
    """'task: probe (severity)' for each finding at or above `threshold`, then 'task: not
    audited (why)' for each task whose audit could not run, at any threshold: a suite that
    makes the audit fail does not pass the gate (empty: passes)."""
    found = [f"{a.task_id}: {r.probe} ({r.severity.value})" for a in audits for r in a.results
             if r.severity.rank >= threshold.rank and r.outcome in _FLAGGED]  # fmt: skip
    return found + [f"{a.task_id}: not audited ({a.error})" for a in audits if a.error]
