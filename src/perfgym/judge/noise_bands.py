"""`NoiseBands`: each task's A/A noise bands, measured once per judge when its measurements have
too few rounds for a test (repeats < 3, RLPF's training setting), and stamped on the baseline's
and the reference's timings.

The A/A measurement is the baseline and the reference each against a copy of itself,
`JudgeConfig.noise_rounds` interleaved rounds of the task's workloads, pinned as every
measurement is: it costs 4 × noise_rounds × workloads runs, once per task (and clock) for the
judge's lifetime. Each role gets its own band because a run's relative noise depends on its
length (a reference ten times faster is relatively noisier); a candidate is compared against
a role with that role's band, which is the noise of runs as long as the ones it ties with."""

from __future__ import annotations

import dataclasses
import threading

from perfgym.judge.config import JudgeConfig
from perfgym.judge.measure import measure
from perfgym.judge.plan import TaskPlan
from perfgym.judge.references import References
from perfgym.judge.verdict import Timing
from perfgym.timing.noise_band import MIN_AA_ROUNDS, aa_noise_band

#: Fewer measured rounds than this, and `speed_call` has no test: the band decides.
MIN_TESTED_ROUNDS = 3


def needs_band(config: JudgeConfig) -> bool:
    """Too few rounds for a test on a clock with noise (instruction counts are exact)."""
    few = config.repeats < MIN_TESTED_ROUNDS and config.noise_rounds >= MIN_AA_ROUNDS
    return few and config.clock != "instructions"


Bands = dict[str, float]


class NoiseBands:
    """Task (`TaskPlan.key`) and clock -> role ('baseline', 'reference') -> band (absent: not measurable)."""

    def __init__(self) -> None:
        self._bands: dict[tuple[str, str], Bands] = {}
        self._lock = threading.Lock()

    def of(self, plan: TaskPlan, refs: References, config: JudgeConfig) -> Bands:
        key = (plan.key, plan.clock)
        with self._lock:
            if key in self._bands:
                return self._bands[key]
        bands = self._measure(plan, refs, config)
        with self._lock:
            self._bands[key] = bands
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


def stamp(timings: dict[str, Timing], bands: Bands) -> None:
    """The baseline's and the reference's timings carry their bands; decisions against them
    use the band of the role compared with."""
    for role, band in bands.items():
        t = timings.get(role)
        if t is not None:
            t.noise_band = band
