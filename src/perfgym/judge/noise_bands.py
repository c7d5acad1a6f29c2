"""`NoiseBands`: each task's A/A noise bands, measured once per judge when its measurements have
too few rounds for a test (repeats < 3, RLPF's training setting), and stamped on the baseline's
and the reference's timings.

The A/A measurement is the baseline and the reference each against a copy of itself,
`JudgeConfig.noise_rounds` interleaved rounds of the task's workloads, pinned as every
measurement is: it costs 4 × noise_rounds × workloads runs, once per task (and clock) for the
judge's lifetime. Each role gets its own band because a run's relative noise depends on its
length (a reference ten times faster is relatively noisier); a candidate is compared against
a role with that role's band, which is the noise of runs as long as the ones it ties with.

One A/A draw, kept for the judge's life, is not the noise its later batches meet: 5 rounds
taken at one moment drew py-lis-dp's baseline band anywhere from 0.055 to 0.77 minutes apart
on a loaded 2-core VM, and there a batch's equal-work copies of the baseline spread 0.99-1.37x
around its one run; a judge that drew 0.12 paid 5 of 8 such copies as faster (red team rt103).
So every single-round batch also runs the baseline once more as a candidate runs (a twin,
`twin_label`, at a random place in the batch's order): its log ratio to the baseline's run is
an equal-work copy's, met in that batch. The ratios form the task's history (the last
`RATIO_WINDOW`; not the A/A rounds, whose copies run side by side and drew it too narrow: fresh
judges still paid 6 of 48 copies in their first batch, red team rt104's script), and until it
holds `MIN_AA_ROUNDS` ratios a batch runs as many twins as it lacks. The baseline's band for a
batch is the widest of what the history predicts for one more ratio (`history_band`), the
batch's own twins (a twin far from the baseline says this batch's baseline run is off before
the history can show it: go-sort-records' copies were paid in clusters of batches whose
baseline run landed slow) and, until the history holds the 19 ratios of its conformal bound,
the A/A band. Past that the history alone speaks for the baseline's single runs: a 5-round
A/A draw kept as a floor for the judge's life drew py-lis-dp's band anywhere from 0.1 to 1.18
(median 0.44 over 19 judges), and a judge that drew 1.09 paid an honest 1.6x as the baseline
in 118 of 120 calls where its settled history (0.38) paid it in 33 of 40 (red team rt105).
Only the baseline's: a wider band there withholds "faster than the baseline"; a wider
reference band would pay more programs "as fast as the reference".
"""

from __future__ import annotations

import collections
import dataclasses
import math
import threading

from perfgym.judge.config import JudgeConfig
from perfgym.judge.measure import measure
from perfgym.judge.plan import TaskPlan
from perfgym.judge.references import References
from perfgym.judge.twins import ROLE_TIMING, role_timing
from perfgym.judge.verdict import Timing
from perfgym.timing.estimators import geometric_mean
from perfgym.timing.noise_band import (
    MIN_AA_ROUNDS,
    aa_noise_band,
    conformal_ready,
    history_band,
)

#: Fewer measured rounds than this, and `speed_call` has no test: the band decides.
MIN_TESTED_ROUNDS = 3
#: Twin-to-baseline ratios a task's history keeps: the machine's noise of the last this many
#: batches (a machine that quietens narrows the band again).
RATIO_WINDOW = 64
#: What the baseline's extra runs in a single-round batch are labelled (`twin_label`).
TWIN_PREFIX = "baseline-batch-twin"


def twin_label(k: int) -> str:
    """The label of a batch's k-th extra run of the baseline (`perfgym.judge.stages`)."""
    return f"{TWIN_PREFIX}-{k}"


def needs_band(config: JudgeConfig) -> bool:
    """Too few rounds for a test on a clock with noise (instruction counts are exact)."""
    few = config.repeats < MIN_TESTED_ROUNDS and config.noise_rounds >= MIN_AA_ROUNDS
    return few and config.clock != "instructions"


Bands = dict[str, float]


class NoiseBands:
    """Task (`TaskPlan.key`) and clock -> role ('baseline', 'reference') -> band (absent: not
    measurable), and each task's history of twin-to-baseline log ratios."""

    def __init__(self) -> None:
        self._bands: dict[tuple[str, str], Bands] = {}
        self._ratios: dict[tuple[str, str], collections.deque[float]] = {}
        self._lock = threading.Lock()

    def of(self, plan: TaskPlan, refs: References, config: JudgeConfig) -> Bands:
        """The task's A/A bands (measured at the first call)."""
        key = (plan.key, plan.clock)
        with self._lock:
            if key in self._bands:
                return self._bands[key]
        bands = self._measure(plan, refs, config)
        with self._lock:
            if key not in self._bands:
                self._bands[key] = bands
                self._ratios[key] = collections.deque(maxlen=RATIO_WINDOW)
            return self._bands[key]

    def twins_wanted(self, plan: TaskPlan) -> int:
        """How many twins the task's next single-round batch runs: one, or as many as its
        history lacks of `MIN_AA_ROUNDS` ratios."""
        with self._lock:
            have = len(self._ratios.get((plan.key, plan.clock), ()))
        return max(1, MIN_AA_ROUNDS - have)

    def for_batch(self, plan: TaskPlan, refs: References, config: JudgeConfig,
                  timings: dict[str, Timing]) -> Bands:  # fmt: skip
        """The bands this batch's calls use: the A/A bands, the baseline's set by what the
        task's history of twin-to-baseline ratios (this batch's included) predicts and widened
        to this batch's own ratios; its A/A band is a floor only until the history's bound is
        conformal."""
        bands = dict(self.of(plan, refs, config))
        key = (plan.key, plan.clock)
        ratios = batch_log_ratios(timings)
        with self._lock:
            history = self._ratios[key]
            history.extend(ratios)
            logs = list(history)
        if "baseline" in bands:
            widest = 0.0 if conformal_ready(len(logs)) else bands["baseline"]
            if len(logs) >= MIN_AA_ROUNDS:
                widest = max(widest, history_band(logs))
            # this batch's own twins: its baseline run is at least this far off
            widest = max([widest, *(math.expm1(abs(r)) for r in ratios)])
            bands["baseline"] = widest
        return bands

    @staticmethod
    def _measure(plan: TaskPlan, refs: References, config: JudgeConfig) -> Bands:
        pairs = [(role, v, dataclasses.replace(v, label=f"{role}-aa"))
                 for role, v in refs.items() if v is not None and v.ready]  # fmt: skip
        if not pairs:
            return {}
        aa = config.model_copy(update={"repeats": config.noise_rounds, "max_repeats": None,
                                       "warmup": 0, "first_call": None})  # fmt: skip
        variants = [x for _role, v, twin in pairs for x in (v, twin)]
        timings = measure(variants, plan.workloads or plan.tests, aa, plan.runner(), plan.clock,
                          task=plan.task, sandbox=plan.sandbox, limits=plan.limits,
                          cores=plan.cores)  # fmt: skip
        bands: Bands = {}
        for role, v, twin in pairs:
            a, b = timings.get(twin.label), timings.get(v.label)
            if a is None or b is None or not a.ok or not b.ok:
                continue
            if len(a.samples_s) != len(b.samples_s) or len(a.samples_s) < MIN_AA_ROUNDS:
                continue
            bands[role] = aa_noise_band(a.samples_s, b.samples_s)
        return bands


def batch_log_ratios(timings: dict[str, Timing]) -> list[float]:
    """log(twin / baseline) of each of one batch's twins (`twin_label`) measured afresh in it
    with the baseline (a reused baseline timing is an earlier batch's: none then)."""
    base = timings.get("baseline")
    if base is None or not base.ok or "reused_timing" in base.flags:
        return []
    b = base.estimate_s
    if b is None or not (b > 0 and math.isfinite(b)):
        return []
    out = []
    for label, twin in timings.items():
        if not label.startswith(TWIN_PREFIX) or not twin.ok:
            continue
        t = twin.estimate_s
        if t is not None and t > 0 and math.isfinite(t):
            out.append(math.log(t / b))
    return out


def pool_twins(timings: dict[str, Timing]) -> None:
    """The baseline's timing in a batch with twins becomes the geometric mean of its run and its
    twins' (round by round, workload by workload): every candidate of the batch is compared with
    the baseline measured at two or more places in the batch's order, not at one. A baseline run
    that landed in a slow moment made every equal-work copy of that batch look faster together
    (red teams rt105, rt107: paid copies came in clusters of batches); pooled, an equal-work
    copy's log ratio has about three quarters of the variance of the twin ratios the band is set
    from. A candidate that is the baseline's program gets the pooled timing too (it has the
    baseline's timing, `twins.role_timing`). Left as it is when the baseline's timing was reused
    or any run is not OK, or the rounds do not line up."""
    base = timings.get("baseline")
    twins = [t for label, t in timings.items() if label.startswith(TWIN_PREFIX)]
    if base is None or not twins or not base.ok or "reused_timing" in base.flags:
        return
    runs = [base, *twins]
    if not all(t.ok and _positive(t.estimate_s) for t in runs):
        return
    n = len(base.samples_s)
    if any(len(t.samples_s) != n or not all(map(_positive, t.samples_s)) for t in runs):
        return
    workloads = base.per_workload_samples_s
    if any(t.per_workload_samples_s.keys() != workloads.keys() for t in twins):
        return
    if any(
        len(t.per_workload_samples_s[w]) != len(xs) for t in twins for w, xs in workloads.items()
    ):
        return
    if any(t.per_workload_s.keys() != base.per_workload_s.keys() for t in twins) or not all(
        _positive(x) for t in runs for x in t.per_workload_s.values()
    ):
        return
    estimate = geometric_mean([t.estimate_s for t in runs])  # type: ignore[misc]
    k = estimate / base.estimate_s  # type: ignore[operator]
    pooled = base.model_copy(
        update={
            "estimate_s": estimate,
            "samples_s": [geometric_mean([t.samples_s[i] for t in runs]) for i in range(n)],
            "per_workload_s": {
                w: geometric_mean([t.per_workload_s[w] for t in runs]) for w in base.per_workload_s
            },
            "per_workload_samples_s": {
                w: [
                    geometric_mean([t.per_workload_samples_s[w][i] for t in runs])
                    for i in range(len(xs))
                ]
                for w, xs in workloads.items()
            },
            "ci_s": None if base.ci_s is None else (base.ci_s[0] * k, base.ci_s[1] * k),
        }
    )
    timings["baseline"] = pooled
    # A candidate that is the baseline's program has the baseline's timing (`twins.role_timing`).
    for label, t in list(timings.items()):
        if (
            ROLE_TIMING in t.flags
            and t.samples_s == base.samples_s
            and t.estimate_s == base.estimate_s
        ):
            # its own band stays its own (none): the baseline's is stamped on the baseline
            timings[label] = role_timing(pooled).model_copy(update={"noise_band": t.noise_band})


def _positive(x: float | None) -> bool:
    return x is not None and x > 0 and math.isfinite(x)


def drop_twins(timings: dict[str, Timing]) -> None:
    """The twins' timings are the band's, not any verdict's."""
    for label in [k for k in timings if k.startswith(TWIN_PREFIX)]:
        del timings[label]


def stamp(timings: dict[str, Timing], bands: Bands) -> None:
    """The baseline's and the reference's timings carry their bands; decisions against them
    use the band of the role compared with."""
    for role, band in bands.items():
        t = timings.get(role)
        if t is not None:
            t.noise_band = band
