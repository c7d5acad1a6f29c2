"""Measurability probes: whether a task's timings can tell what it claims, read from the
judge's own timings of the baseline and reference measured together in the probes' batch."""

from __future__ import annotations

import math
from collections.abc import Sequence

from perfgym.audit.context import AuditContext, ProbeRun
from perfgym.audit.registry import Probe, register_probe
from perfgym.audit.results import Outcome, ProbeKind, ProbeResult, Severity
from perfgym.judge.verdict import Timing
from perfgym.tasks.timed import is_timed

M = ProbeKind.MEASURABILITY
#: The change a task must resolve, and with what power, at the judge's default repeats.
TARGET_RATIO, POWER, ALPHA = 1.2, 0.95, 0.05
#: A limit this many times the baseline's slowest workload run (below: a slower machine's
#: correct programs fail).
LIMIT_MARGIN = 2.0
#: A timed run is this many times the clock's resolution at least (quantisation < 0.1 %).
RESOLUTION_FACTOR = 1000
#: A timed run must cost this much more than an empty program's start-up (1.0: twice it).
FLOOR_SHARE = 1.0
#: The clocks' resolution: the sandbox's wall and cgroup CPU times are in microseconds.
RESOLUTION_S = {"wall": 1e-6, "cpu": 1e-6, "harness": 1e-9, "instructions": 1.0}


def _na(name: str, why: str) -> ProbeResult:
    return ProbeResult(probe=name, kind=M, outcome=Outcome.NOT_APPLICABLE, severity=Severity.INFO,
                       detail=why)  # fmt: skip


def _timings(name: str, ctx: AuditContext, need_reference: bool
             ) -> tuple[Timing, Timing | None] | ProbeResult:  # fmt: skip
    """The baseline's and reference's timings of one measurement, or why there are none."""
    if not is_timed(ctx.task):
        return _na(name, "a correctness-only task: nothing of it is timed")
    if need_reference and ctx.task.reference is None:
        return _na(name, "the task has no reference")
    run = ctx.baseline
    if run is None:
        return _na(name, "the baseline was not judged")
    v = run.verdict
    if v.infra_error:
        return ProbeResult(probe=name, kind=M, outcome=Outcome.INFRA_ERROR, severity=Severity.INFO,
                           detail=f"the sandbox failed: {v.reason or v.detail}")  # fmt: skip
    base = v.baseline
    if base is None or base.usable_s is None:
        why = base.unusable_reason if base is not None else "no timing"
        return ProbeResult(probe=name, kind=M, outcome=Outcome.WEAK, severity=Severity.HIGH,
                           detail=f"the baseline has no usable timing: {why}")  # fmt: skip
    ref = v.reference
    if need_reference and (ref is None or ref.usable_s is None):
        why = ref.unusable_reason if ref is not None else "no timing"
        return ProbeResult(probe=name, kind=M, outcome=Outcome.WEAK, severity=Severity.HIGH,
                           detail=f"the reference has no usable timing: {why}")  # fmt: skip
    return base, ref


# -- headroom -----------------------------------------------------------------------------------
def _headroom(ctx: AuditContext, _runs: Sequence[ProbeRun]) -> ProbeResult:
    from perfgym.timing.compare import compare_timings

    got = _timings("headroom", ctx, need_reference=True)
    if isinstance(got, ProbeResult):
        return got
    base, ref = got
    assert ref is not None
    c = compare_timings(ref, base, paired=len(ref.samples_s) == len(base.samples_s))
    ratio = base.usable_s / ref.usable_s  # type: ignore[operator]
    figures: dict[str, object] = {
        "baseline_s": base.usable_s,
        "reference_s": ref.usable_s,
        "rounds": len(base.samples_s),
    }
    if c is not None:
        figures.update({"ci": c.ci, "p_value": c.p_value, "method": c.method})
    if c is None or c.faster != "a":
        return ProbeResult(probe="headroom", kind=M, outcome=Outcome.WEAK, severity=Severity.HIGH,
                           value=ratio, figures=figures,
                           detail=f"the reference is not significantly faster than the baseline "
                           f"here ({ratio:.2f}x)")  # fmt: skip
    weak = ratio < TARGET_RATIO
    return ProbeResult(
        probe="headroom", kind=M, outcome=Outcome.WEAK if weak else Outcome.SOUND,
        severity=Severity.MEDIUM if weak else Severity.NONE, value=ratio, figures=figures,
        detail=f"the reference is {ratio:.2f}x faster than the baseline (significant)",
    )  # fmt: skip


@register_probe("headroom", M)
def headroom() -> Probe:
    return Probe("headroom", M, "Is the reference significantly faster than the baseline here, "
                 "and by how much.", _headroom)  # fmt: skip


# -- the minimum detectable effect --------------------------------------------------------------
def detectable_ratio(log_sd: float, repeats: int, margin: float) -> float:
    """The smallest speed ratio a paired test over `repeats` interleaved rounds finds at level
    ALPHA with power POWER, when per-round log ratios spread with `log_sd`, and its CI must
    also clear the practical margin (`perfgym.timing.compare`)."""
    from scipy.stats import t

    if repeats < 2:
        return math.inf
    df = repeats - 1
    effect = (t.ppf(1 - ALPHA / 2, df) + t.ppf(POWER, df)) * log_sd / math.sqrt(repeats)
    return float(math.exp(effect) * (1 + margin))


def _log_sd(base: Timing, ref: Timing | None) -> tuple[float, str]:
    """The spread of a paired round's log ratio: from the baseline and reference rounds (their
    real difference cancels), or from the baseline alone (x sqrt 2: two noisy sides)."""
    import numpy as np

    b = np.log(np.asarray(base.samples_s, dtype=float))
    if ref is not None and ref.ok and len(ref.samples_s) == len(b) and len(b) >= 3:
        d = b - np.log(np.asarray(ref.samples_s, dtype=float))
        return float(d.std(ddof=1)), "paired baseline/reference rounds"
    return float(b.std(ddof=1) * math.sqrt(2)), "baseline rounds x sqrt 2"


def _mde(ctx: AuditContext, _runs: Sequence[ProbeRun]) -> ProbeResult:
    from perfgym.timing.compare import timing_margin

    got = _timings("mde", ctx, need_reference=False)
    if isinstance(got, ProbeResult):
        return got
    base, ref = got
    if len(base.samples_s) < 3:
        return _na("mde", f"{len(base.samples_s)} measured rounds: too few to estimate a spread "
                   "(audit with --repeats 3 or more)")  # fmt: skip
    sd, how = _log_sd(base, ref)
    ratio = detectable_ratio(sd, ctx.mde_repeats, timing_margin(base.clock))
    weak = ratio > TARGET_RATIO
    figures = {"log_sd": sd, "spread_from": how, "repeats": ctx.mde_repeats,
               "rounds_seen": len(base.samples_s), "cv": base.cv}  # fmt: skip
    return ProbeResult(
        probe="mde", kind=M, outcome=Outcome.WEAK if weak else Outcome.SOUND,
        severity=Severity.MEDIUM if weak else Severity.NONE, value=ratio, figures=figures,
        detail=f"at {ctx.mde_repeats} repeats the smallest change found with {POWER:.0%} power "
        f"is {ratio:.2f}x" + (f" (cannot resolve {TARGET_RATIO}x)" if weak else ""),
    )  # fmt: skip


@register_probe("mde", M)
def mde() -> Probe:
    return Probe("mde", M, f"Can the task tell a {TARGET_RATIO}x change with {POWER:.0%} power at "
                 "the default repeats (from the measured spread).", _mde)  # fmt: skip


# -- time above the clock's resolution and the start-up floor -----------------------------------
def _resolution(ctx: AuditContext, _runs: Sequence[ProbeRun]) -> ProbeResult:
    got = _timings("resolution", ctx, need_reference=False)
    if isinstance(got, ProbeResult):
        return got
    base, ref = got
    res = RESOLUTION_S.get(base.clock, 1e-6)
    runs = {f"{label}:{w}": s for label, t in (("baseline", base), ("reference", ref))
            if t is not None and t.ok for w, s in t.per_workload_s.items()}  # fmt: skip
    if not runs:
        runs = {"baseline": float(base.usable_s or 0.0)}
    shortest = min(runs, key=lambda k: runs[k])
    value = runs[shortest]
    unit = "instructions" if base.clock == "instructions" else "s"
    floor, why = ctx.floor
    figures = {"clock": base.clock, "resolution": res, "shortest": shortest,
               "shortest_value": value, "floor_s": floor, "floor_note": why}  # fmt: skip
    over_res = value / res
    over_floor = value / floor if floor else None
    detail = (
        f"shortest timed run {shortest} = {value:.3g} {unit}: {over_res:.3g}x the "
        f"{base.clock} clock's resolution ({res:g} {unit})"
    )
    if over_floor is not None:
        detail += f", {over_floor:.3g}x the start-up of an empty program ({floor:.3g} s)"
    else:
        detail += f" (no start-up floor: {why})"
    severity = Severity.NONE
    if over_res < RESOLUTION_FACTOR / 10 or (
        over_floor is not None and over_floor < 1 + FLOOR_SHARE / 5
    ):
        severity = Severity.HIGH
    elif over_res < RESOLUTION_FACTOR or (over_floor is not None and over_floor < 1 + FLOOR_SHARE):
        severity = Severity.MEDIUM
    weak = severity is not Severity.NONE
    return ProbeResult(probe="resolution", kind=M, outcome=Outcome.WEAK if weak else Outcome.SOUND,
                       severity=severity, value=over_floor if over_floor is not None else over_res,
                       figures=figures, detail=detail)  # fmt: skip


@register_probe("resolution", M)
def resolution() -> Probe:
    return Probe("resolution", M, f"Every timed run lasts {RESOLUTION_FACTOR}x the clock's "
                 f"resolution or more, and its work outweighs the start-up of an empty program "
                 f"(at least {1 + FLOOR_SHARE:g}x it).", _resolution)  # fmt: skip


# -- outputs the same from run to run -----------------------------------------------------------
def _determinism(ctx: AuditContext, _runs: Sequence[ProbeRun]) -> ProbeResult:
    bad = []
    for label, run in (("reference", ctx.reference), ("baseline", ctx.baseline)):
        if run is None:
            continue
        v = run.verdict
        if v.infra_error:
            return ProbeResult(probe="determinism", kind=M, outcome=Outcome.INFRA_ERROR,
                               severity=Severity.INFO, detail=f"the sandbox failed on the {label}")  # fmt: skip
        if not v.correct:
            bad.append(f"the {label} judged as a candidate is {v.stage.value} "
                       f"{v.detail or v.reason}".strip()[:200])  # fmt: skip
    if ctx.baseline is None:
        return _na("determinism", "the baseline was not judged")
    if bad:
        return ProbeResult(probe="determinism", kind=M, outcome=Outcome.WEAK,
                           severity=Severity.HIGH, detail="; ".join(bad))  # fmt: skip
    timed = is_timed(ctx.task)
    return ProbeResult(probe="determinism", kind=M, outcome=Outcome.SOUND, severity=Severity.NONE,
                       detail="the reference and baseline give the accepted output in every run"
                       + (" (each measured round checked)" if timed else ""))  # fmt: skip


@register_probe("determinism", M)
def determinism() -> Probe:
    return Probe("determinism", M, "The reference's and baseline's outputs are accepted in every "
                 "run (tests and each measured round).", _determinism)  # fmt: skip


# -- margin between the baseline's time and the limit -------------------------------------------
def _limit_margin(ctx: AuditContext, _runs: Sequence[ProbeRun]) -> ProbeResult:
    got = _timings("limit-margin", ctx, need_reference=False)
    if isinstance(got, ProbeResult):
        return got
    base, _ref = got
    if base.clock == "instructions":
        return _na("limit-margin", "timed by instruction counts, not seconds")
    limit = ctx.task.time_limit_s or ctx.judge.config.time_limit_s
    runs = {w: max(s) for w, s in base.per_workload_samples_s.items() if s}
    if not runs:
        runs = {"all": max(base.samples_s)}
    slowest = max(runs, key=lambda k: runs[k])
    margin = limit / runs[slowest] if runs[slowest] > 0 else math.inf
    weak = margin < LIMIT_MARGIN
    return ProbeResult(
        probe="limit-margin", kind=M, outcome=Outcome.WEAK if weak else Outcome.SOUND,
        severity=(Severity.HIGH if margin < 1.2 else Severity.MEDIUM) if weak else Severity.NONE,
        value=margin, figures={"limit_s": limit, "slowest": slowest, "slowest_s": runs[slowest],
                               "clock": base.clock},
        detail=f"limit {limit:g} s is {margin:.3g}x the baseline's slowest run ({slowest}: "
        f"{runs[slowest]:.3g} s {base.clock})",
    )  # fmt: skip


@register_probe("limit-margin", M)
def limit_margin() -> Probe:
    return Probe("limit-margin", M, f"The time limit is {LIMIT_MARGIN:g}x the baseline's slowest "
                 "run or more.", _limit_margin)  # fmt: skip
