"""`NoiseBands`: each task's A/A noise band, measured once per judge when its measurements have
too few rounds for a test (repeats < 3, RLPF's training setting), and stamped on the timings.

The A/A measurement is the baseline against a copy of itself, `JudgeConfig.noise_rounds`
interleaved rounds of the task's workloads, pinned as every measurement is: it costs
2 × noise_rounds × workloads runs, once per task (and clock) for the judge's lifetime."""

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
    return config.repeats < MIN_TESTED_ROUNDS and config.noise_rounds >= MIN_AA_ROUNDS


class NoiseBands:
    """Task id and clock -> the band (None: the baseline could not be measured twice)."""

    def __init__(self) -> None:
        self._bands: dict[tuple[str, str], float | None] = {}
        self._lock = threading.Lock()

    def of(self, plan: TaskPlan, refs: References, config: JudgeConfig) -> float | None:
        key = (plan.task.id, plan.clock)
        with self._lock:
            if key in self._bands:
                return self._bands[key]
        band = self._measure(plan, refs, config)
        with self._lock:
            self._bands[key] = band
        return band

    @staticmethod
    def _measure(plan: TaskPlan, refs: References, config: JudgeConfig) -> float | None:
        base = refs.baseline
        if base is None or not base.ready:
            return None
        twin = dataclasses.replace(base, label="baseline-aa")
        aa = config.model_copy(update={"repeats": config.noise_rounds, "max_repeats": None,
                                       "warmup": 0, "first_call": None})  # fmt: skip
        timings = measure([base, twin], plan.workloads or plan.tests, aa, plan.runner(),
                          plan.clock, task=plan.task, sandbox=plan.sandbox,
                          limits=plan.limits)  # fmt: skip
        a, b = timings.get("baseline-aa"), timings.get("baseline")
        if a is None or b is None or not a.ok or not b.ok:
            return None
        if len(a.samples_s) != len(b.samples_s) or len(a.samples_s) < MIN_AA_ROUNDS:
            return None
        return aa_noise_band(a.samples_s, b.samples_s)


def stamp(timings: dict[str, Timing], band: float | None) -> None:
    """Every timing of the task's measurement carries the band its decisions will use."""
    if band is None:
        return
    for t in timings.values():
        t.noise_band = band
