"""ENAMEL's sample timed paired with its reference: the correction's arithmetic, the calls'
interleaving order, and a machine faster than when T was fixed cancelled by the correction."""

import dataclasses

import pytest

from perfgym.enamel.pairing import (
    ENAMEL_TOLERANCE_S,
    EnamelTiming,
    corrected_time,
    correction,
    raw_limit,
    reference_first,
)
from perfgym.enamel.sample import TIMEOUT_RETRIED, evaluate_sample
from perfgym.errors import ConfigError
from perfgym.metrics.enamel import level_efficiencies
from perfgym.metrics.enamel_levels import EnamelProblem, enamel_level_limits
from perfgym.sandbox.pyworker import PythonWorkerPool


def test_the_correction_is_enamels_stored_over_now_on_the_hl_of_the_paired_calls():
    # HL of (1, 2, 3, 10) ms: the median of the 10 Walsh averages, (2.5 + 3) / 2 = 2.75 ms.
    assert correction(0.0055, [0.001, 0.002, 0.003, 0.010]) == pytest.approx(2.0)
    assert correction(0.005, []) == 1.0  # no paired call yet: uncorrected
    with pytest.raises(ConfigError):
        correction(0.0, [0.001])
    # The sample's time: its HL times c; the limit on a raw call: T / min(c, 1) + 0.01 s.
    assert corrected_time([0.002, 0.002, 0.004], 0.5) == pytest.approx(0.0025 * 0.5)
    assert raw_limit(0.004, 2.0) == pytest.approx(0.004 + ENAMEL_TOLERANCE_S)  # never tighter
    assert raw_limit(0.004, 0.5) == pytest.approx(0.008 + ENAMEL_TOLERANCE_S)  # slower now
    # T from fixed reference times: 2 x the largest weighted level's (level 0 has weight 0).
    assert enamel_level_limits([9.0, 0.1, 0.3, 0.2]) == [pytest.approx(0.6)] * 4


def test_the_paired_order_alternates_which_program_goes_first():
    assert [reference_first(rep) for rep in range(4)] == [True, False, True, False]


class _Recording:
    """The real worker pool, remembering which program each call ran."""

    def __init__(self, pool: PythonWorkerPool, reference: str) -> None:
        self.pool, self.reference, self.order = pool, reference, []

    def call(self, source, entry, args=(), limits=None, **kw):
        self.order.append("r" if source == self.reference else "s")
        return self.pool.call(source, entry, args, limits, **kw)


def test_paired_calls_interleave_and_sequential_ones_run_the_sample_alone(task, ref, workers):
    rec = _Recording(workers, ref.program)
    run = evaluate_sample(task, ref, task.reference.source, rec, 3, EnamelTiming.PAIRED)
    assert run.sample.correct and run.stopped == "", run.stopped
    n0 = len(ref.levels[0])  # level 0: one call each, the reference's first
    assert rec.order[: 2 * n0] == ["r", "s"] * n0
    assert rec.order[2 * n0 : 2 * n0 + 6] == ["r", "s", "s", "r", "r", "s"]
    calls = n0 + 3 * sum(map(len, ref.levels[1:]))  # each program's, on every test
    assert rec.order.count("r") == calls
    # A sample's call over its limit is run once more before it ends the level, and flagged
    # (the flag is kept once however often: a spike of a loaded machine on a sub-millisecond
    # limit gave one call of 89, full78).
    retried = rec.order.count("s") - calls
    assert retried >= 1 if TIMEOUT_RETRIED in run.flags else retried == 0, (retried, run.flags)
    assert all(c is not None and c > 0 for c in run.corrections)
    rec.order.clear()
    run = evaluate_sample(task, ref, task.reference.source, rec, 3, EnamelTiming.SEQUENTIAL)
    assert set(rec.order) == {"s"} and run.corrections[1:] == [1.0] * 3


def test_a_machine_faster_than_when_t_was_fixed_is_cancelled_by_the_correction(task, ref, workers):
    # As if r and T had been measured on a machine 10x slower. On the level whose r_j sets T,
    # e = (T - t) / (T - r) = 2 - t / r: the reference run as its own sample scores there
    # 2 - t / (10 r_now) ~ 1.9 uncorrected, and 2 - t / r_now ~ 1 when paired.
    slow = dataclasses.replace(
        ref, level_times_s=[t * 10 for t in ref.level_times_s], limit_s=ref.limit_s * 10,
        test_times_s={k: t * 10 for k, t in ref.test_times_s.items()},
    )  # fmt: skip
    n = len(ref.levels)
    top = max(range(1, n), key=lambda j: ref.level_times_s[j])
    problem = EnamelProblem(task_id=task.id, reference_times_s=slow.level_times_s,
                            level_limits_s=[slow.limit_s] * n, samples=[])  # fmt: skip
    top_e = {}
    for timing in EnamelTiming:
        run = evaluate_sample(task, slow, task.reference.source, workers, 3, timing)
        assert run.sample.correct and run.stopped == "", run.stopped
        top_e[timing] = level_efficiencies(run.sample, problem)[top]
    assert top_e[EnamelTiming.PAIRED] < 1.45 < top_e[EnamelTiming.SEQUENTIAL], top_e
