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
So every single-round batch also runs the baseline once as a candidate runs (`BATCH_TWIN`, at
a random place in the batch's order): its log ratio to the baseline's run is an equal-work
copy's, met in that batch. It joins the task's history (seeded with the A/A rounds; the last
`RATIO_WINDOW` batches), and the baseline's band for the batch is the widest of the A/A band,
what the history predicts for one more such ratio (`history_band`: a conformal bound once
there are 19 pairs), and the batch's own pair (a twin far from the baseline says the
baseline's one run is off, in this batch, before the history can show it: red team rt104
found go-sort-records' copies paid in clusters of batches whose baseline run landed slow).
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
from perfgym.judge.verdict import Timing
from perfgym.timing.noise_band import MIN_AA_ROUNDS, aa_noise_band, history_band

#: Fewer measured rounds than this, and `speed_call` has no test: the band decides.
MIN_TESTED_ROUNDS = 3
#: Twin-to-baseline ratios a task's history keeps: the machine's noise of the last this many
#: batches (a machine that quietens narrows the band again).
RATIO_WINDOW = 64
#: The label of the baseline's second run in a single-round batch (`perfgym.judge.stages`).
BATCH_TWIN = "baseline-batch-twin"


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
        bands, seed = self._measure(plan, refs, config)
        with self._lock:
            if key not in self._bands:
                self._bands[key] = bands
                self._ratios[key] = collections.deque(seed, maxlen=RATIO_WINDOW)
            return self._bands[key]

    def for_batch(self, plan: TaskPlan, refs: References, config: JudgeConfig,
                  timings: dict[str, Timing]) -> Bands:  # fmt: skip
        """The bands this batch's calls use: the A/A bands, the baseline's widened to what the
        task's history of twin-to-baseline ratios (this batch's included) predicts, and to this
        batch's own ratio."""
        bands = dict(self.of(plan, refs, config))
        key = (plan.key, plan.clock)
        ratio = batch_log_ratio(timings)
        with self._lock:
            history = self._ratios[key]
            if ratio is not None:
                history.append(ratio)
            logs = list(history)
        if "baseline" in bands and len(logs) >= MIN_AA_ROUNDS:
            widest = max(bands["baseline"], history_band(logs))
            # this batch's own pair: its baseline run is at least this far off
            if ratio is not None:
                widest = max(widest, math.expm1(abs(ratio)))
            bands["baseline"] = widest
        return bands

    @staticmethod
    def _measure(
        plan: TaskPlan, refs: References, config: JudgeConfig
    ) -> tuple[Bands, list[float]]:
        """The A/A bands, and the baseline's rounds' twin-to-baseline log ratios (the seed of the
        task's history)."""
        pairs = [(role, v, dataclasses.replace(v, label=f"{role}-aa"))
                 for role, v in refs.items() if v is not None and v.ready]  # fmt: skip
        if not pairs:
            return {}, []
        aa = config.model_copy(update={"repeats": config.noise_rounds, "max_repeats": None,
                                       "warmup": 0, "first_call": None})  # fmt: skip
        variants = [x for _role, v, twin in pairs for x in (v, twin)]
        timings = measure(variants, plan.workloads or plan.tests, aa, plan.runner(), plan.clock,
                          task=plan.task, sandbox=plan.sandbox, limits=plan.limits,
                          cores=plan.cores)  # fmt: skip
        bands: Bands = {}
        seed: list[float] = []
        for role, v, twin in pairs:
            a, b = timings.get(twin.label), timings.get(v.label)
            if a is None or b is None or not a.ok or not b.ok:
                continue
            if len(a.samples_s) != len(b.samples_s) or len(a.samples_s) < MIN_AA_ROUNDS:
                continue
            bands[role] = aa_noise_band(a.samples_s, b.samples_s)
            if role == "baseline":
                seed = [math.log(x / y) for x, y in zip(a.samples_s, b.samples_s, strict=True)]
        return bands, seed


def batch_log_ratio(timings: dict[str, Timing]) -> float | None:
    """log(twin / baseline) of one batch's two runs of the baseline (`BATCH_TWIN`); None unless
    both were measured afresh in it (a reused timing is an earlier batch's)."""
    base, twin = timings.get("baseline"), timings.get(BATCH_TWIN)
    if base is None or twin is None or not base.ok or not twin.ok:
        return None
    if "reused_timing" in base.flags:
        return None
    b, t = base.estimate_s, twin.estimate_s
    if b is None or t is None or not (b > 0 and t > 0 and math.isfinite(b) and math.isfinite(t)):
        return None
    return math.log(t / b)


def stamp(timings: dict[str, Timing], bands: Bands) -> None:
    """The baseline's and the reference's timings carry their bands; decisions against them
    use the band of the role compared with."""
    for role, band in bands.items():
        t = timings.get(role)
        if t is not None:
            t.noise_band = band
