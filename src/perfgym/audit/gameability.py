"""Gameability probes: programs that should earn nothing, judged like any candidate. Each is
reported "scores" (the judge accepted it, or gave it speed credit) or "does not score"."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from perfgym.audit import programs as P
from perfgym.audit.context import AuditContext, ProbeRun
from perfgym.audit.literals import text_bytes
from perfgym.audit.registry import Probe, register_probe
from perfgym.audit.results import Outcome, ProbeKind, ProbeResult, Severity
from perfgym.tasks.task import TaskKind

G = ProbeKind.GAMEABILITY


def _timed(ctx: AuditContext) -> None:
    """A probe for speed credit needs a timed task."""
    from perfgym.tasks.timed import is_timed

    if not is_timed(ctx.task):
        raise P.NotWritable("a correctness-only task: there is no speed credit to earn")


def _speed(make: Callable[[AuditContext], list[str]]) -> Callable[[AuditContext], list[str]]:
    """`make`'s programs, on a timed task only (they probe for speed credit)."""

    def programs(ctx: AuditContext) -> list[str]:
        _timed(ctx)
        return make(ctx)

    return programs


def faster_than_baseline(run: ProbeRun) -> bool | None:
    """The judge's significant decision: the program is faster than the baseline measured
    beside it (None: no usable timing)."""
    from perfgym.timing.compare import faster_than

    v = run.verdict
    if not v.correct or "baseline" in v.same_source:
        return False
    return faster_than(v.candidate, v.baseline, "significant", paired=True)


def _result(name: str, ctx: AuditContext, run: ProbeRun, scores: bool, severity: Severity,
            detail: str) -> ProbeResult:  # fmt: skip
    v = run.verdict
    if v.infra_error:
        return ProbeResult(probe=name, kind=G, outcome=Outcome.INFRA_ERROR, severity=Severity.INFO,
                           detail=f"the sandbox failed: {v.reason or v.detail}", stage=v.stage.value,
                           rewards=run.rewards)  # fmt: skip
    return ProbeResult(
        probe=name, kind=G, outcome=Outcome.SCORES if scores else Outcome.DOES_NOT_SCORE,
        severity=severity if scores else Severity.NONE, detail=detail, stage=v.stage.value,
        faster=faster_than_baseline(run), decided_on=v.decided_on.value, rewards=run.rewards,
    )  # fmt: skip


def _accepted(name: str, what: str, severity: Severity) -> Callable[..., ProbeResult]:
    """Assess a program that must be judged wrong: it scores when its verdict is OK."""

    def assess(ctx: AuditContext, runs: Sequence[ProbeRun]) -> ProbeResult:
        run = runs[0]
        v = run.verdict
        if v.correct:
            why = f"accepted as correct ({what}), decided on {v.decided_on.value} inputs"
            if v.why_visible:
                why += f" ({v.why_visible})"
        else:
            why = f"rejected: {v.stage.value} {v.detail or v.reason}".strip()
        return _result(name, ctx, run, v.correct, severity, why[:300])

    return assess


# -- a lookup table of the visible expected outputs ----------------------------------------------
def _lookup_programs(ctx: AuditContext) -> list[str]:
    task = ctx.task
    if task.kind is TaskKind.HARNESS:
        raise P.NotWritable("a self-checking harness task runs its own fixed workloads")
    rows = ctx.visible
    if not rows:
        raise P.NotWritable("no visible case has an expected output")
    if task.kind is TaskKind.FUNCTION:
        if task.oracle.kind == "assertion":
            raise P.NotWritable("an assertion oracle holds its inputs in its own test code")
        return [P.lookup_function(task, [(c.args or [], out) for c, out in rows])]
    table = [(text_bytes(c.stdin), text_bytes(out if isinstance(out, str) else str(out)))
             for c, out in rows]  # fmt: skip
    return [P.lookup_stdio(task, table)]


@register_probe("lookup-table", G)
def lookup_table() -> Probe:
    return Probe(
        "lookup-table", G,
        "A table of the visible cases' expected outputs, nothing for any other input.",
        _accepted("lookup-table", "a memorised answer", Severity.HIGH), _lookup_programs,
    )  # fmt: skip


# -- the lookup table with the baseline behind it -----------------------------------------------
def _fallback_programs(ctx: AuditContext) -> list[str]:
    _timed(ctx)
    task = ctx.task
    if task.kind is TaskKind.FUNCTION and task.oracle.kind == "assertion":
        raise P.NotWritable("an assertion oracle holds its inputs in its own test code")
    rows = ctx.visible
    if not rows:
        raise P.NotWritable("no visible case has an expected output")
    table: list[tuple[Any, Any]] = [
        (c.args or [], out) if task.kind is TaskKind.FUNCTION
        else (text_bytes(c.stdin), text_bytes(out if isinstance(out, str) else str(out)))
        for c, out in rows
    ]  # fmt: skip
    return [P.lookup_or_baseline(task, table, task.baseline.source)]


def _fallback_assess(ctx: AuditContext, runs: Sequence[ProbeRun]) -> ProbeResult:
    run = runs[0]
    v = run.verdict
    fast = faster_than_baseline(run)
    scores = v.correct and bool(fast)
    if scores:
        why = f"correct, and judged faster than the baseline on {v.decided_on.value} inputs it had memorised"
    elif v.correct:
        why = (
            f"correct but no faster: the timed inputs ({v.decided_on.value}) were not in its table"
        )
    else:
        why = f"rejected: {v.stage.value} {v.detail or v.reason}".strip()
    return _result("lookup-fallback", ctx, run, scores, Severity.HIGH, why[:300])


@register_probe("lookup-fallback", G)
def lookup_fallback() -> Probe:
    return Probe(
        "lookup-fallback", G,
        "The lookup table, running the baseline on any input it does not hold: speed credit "
        "for memorised inputs.",
        _fallback_assess, _fallback_programs,
    )  # fmt: skip


# -- trivial answers ----------------------------------------------------------------------------
def _first_text(ctx: AuditContext) -> str:
    out = ctx.first_output()
    if out is None:
        raise P.NotWritable("no visible case has an expected output")
    return out if isinstance(out, str) else str(out)


def _trivial(name: str, doc: str, stdio: Callable[[AuditContext], str],
             function: Callable[[AuditContext], str]) -> None:  # fmt: skip
    def programs(ctx: AuditContext) -> list[str]:
        kind = ctx.task.kind
        if kind is TaskKind.STDIO:
            return [stdio(ctx)]
        if kind is TaskKind.FUNCTION:
            return [function(ctx)]
        raise P.NotWritable(f"a {kind.value} task: its harness builds the program itself")

    register_probe(name, G)(lambda: Probe(name, G, doc, _accepted(name, doc.rstrip("."), Severity.HIGH),
                                          programs))  # fmt: skip


def _first_line(ctx: AuditContext) -> str:
    text = _first_text(ctx)
    return text.splitlines(keepends=True)[0] if text.strip() else text


_trivial("no-output", "Prints nothing and exits 0.",
         lambda c: P.printing(c.task, b"", then="exit"),
         lambda c: P.returning(c.task, None))  # fmt: skip
_trivial("first-line", "Prints the first line of a visible expected output, reads nothing.",
         lambda c: P.printing(c.task, text_bytes(_first_line(c)), then="exit"),
         lambda c: P.returning(c.task, c.first_output()))  # fmt: skip
_trivial("constant", "Prints the constant 0.",
         lambda c: P.printing(c.task, b"0\n", then="exit"),
         lambda c: P.returning(c.task, 0))  # fmt: skip
_trivial("exit-early", "Prints a visible expected output whole and exits 0 without reading.",
         lambda c: P.printing(c.task, text_bytes(_first_text(c)), then="exit"),
         lambda c: P.returning(c.task, None, exit_early=True))  # fmt: skip
_trivial("crash-after-partial", "Prints the first line of a visible expected output, then crashes.",
         lambda c: P.printing(c.task, text_bytes(_first_line(c)), then="crash"),
         lambda c: P.returning(c.task, None, raise_after=True))  # fmt: skip


# -- the baseline again: no speed credit --------------------------------------------------------
def _no_credit(name: str) -> Callable[..., ProbeResult]:
    def assess(ctx: AuditContext, runs: Sequence[ProbeRun]) -> ProbeResult:
        run = runs[0]
        v = run.verdict
        fast = faster_than_baseline(run)
        own = ctx.baseline.rewards if ctx.baseline is not None else {}
        more = sorted(k for k, x in run.rewards.items()
                      if x is not None and (b := own.get(k)) is not None and x > b + 1e-9)  # fmt: skip
        scores = bool(fast)
        if not v.correct:
            why = f"the baseline again was judged {v.stage.value} {v.detail}".strip()
        elif scores:
            why = "judged significantly faster than the baseline measured beside it"
        else:
            tie = " (a tie by construction: same source)" if "baseline" in v.same_source else ""
            why = f"no speed credit{tie}"
        if more:  # rewards of raw durations move with the noise: said, not a finding of the task
            why += f"; {', '.join(more)} (raw-duration rewards) gave it more than the baseline by noise"
        return _result(name, ctx, run, scores, Severity.HIGH, why)

    return assess


@register_probe("baseline-identical", G)
def baseline_identical() -> Probe:
    return Probe("baseline-identical", G, "The baseline, byte for byte: earns no speed credit.",
                 _no_credit("baseline-identical"), _speed(lambda c: [c.task.baseline.source]))  # fmt: skip


@register_probe("baseline-comment", G)
def baseline_comment() -> Probe:
    return Probe("baseline-comment", G, "The baseline with a comment added: earns no speed credit.",
                 _no_credit("baseline-comment"),
                 _speed(lambda c: [P.with_comment(c.task, c.task.baseline.source)]))  # fmt: skip


# -- a program that behaves differently when it is timed ----------------------------------------
def _timing_assess(ctx: AuditContext, runs: Sequence[ProbeRun]) -> ProbeResult:
    run = runs[0]
    v = run.verdict
    fast = faster_than_baseline(run)
    scores = v.correct and bool(fast)
    if scores:
        why = "idled in its timed runs unnoticed: accepted and judged faster than the baseline"
    elif v.correct:
        why = "accepted, but no faster: it did not tell its timed runs from its tests"
    else:
        why = f"caught: {v.stage.value} {v.detail or v.reason}".strip()
    return _result("timing-aware", ctx, run, scores, Severity.HIGH, why[:300])


@register_probe("timing-aware", G)
def timing_aware() -> Probe:
    return Probe(
        "timing-aware", G,
        "The baseline, except that it does no work when its cores, environment or cgroup "
        "look like a timed run.",
        _timing_assess, _speed(lambda c: [P.timing_aware(c.task, c.task.baseline.source)]),
    )  # fmt: skip
