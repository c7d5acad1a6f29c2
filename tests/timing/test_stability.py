"""Rerun stability figures on hand-built runs: percentiles, swings, Spearman, flips."""

import pytest

from perfgym.judge.verdict import Timing, TimingStatus
from perfgym.timing.stability import (
    mean_percentile,
    pair_records,
    percentiles,
    rerun_spearman,
    summarise_decisions,
    swings,
)


def t(*samples, w="w1"):
    est = sorted(samples)[len(samples) // 2]
    return Timing(samples_s=list(samples), estimate_s=est, per_workload_s={w: est})


def test_mean_percentile_counts_slower_pool_members_and_ties_half():
    pool = [{"a": 1.0, "b": 1.0}, {"a": 3.0, "b": 2.0}]
    assert mean_percentile({"a": 2.0, "b": 2.0}, pool) == pytest.approx((50 + 25) / 2)
    assert mean_percentile({"z": 1.0}, pool) is None


def test_a_flipped_pair_swings_and_is_counted_once():
    run1 = {"t": {"fast": t(1.0, 1.01, 0.99, 1.0, 1.0), "slow": t(2.0, 2.02, 1.98, 2.0, 2.0)}}
    run2 = {"t": {"fast": t(2.1, 2.12, 2.08, 2.1, 2.1), "slow": t(1.9, 1.91, 1.89, 1.9, 1.9)}}
    tables = [percentiles(r) for r in (run1, run2)]
    assert swings(tables) == {("t", "fast"): 100.0, ("t", "slow"): 100.0}
    rec = pair_records([run1, run2])
    assert len(rec) == 1 and rec[0].flipped and rec[0].decisions == ["a", "b"]
    s = summarise_decisions(rec)
    assert s.flips == 1 and s.pairs == 1


def test_noise_is_not_decided_and_clear_pairs_are():
    runs = []
    for k in range(5):
        j = 0.01 * k
        runs.append({"t": {"a": t(1.0 + j, 1.02, 0.98, 1.01, 0.99),
                           "b": t(1.0, 1.01 + j, 0.99, 1.02, 0.98),
                           "c": t(1.4, 1.42, 1.38, 1.41, 1.39 + j)}})  # fmt: skip
    rec = {(r.a, r.b): r for r in pair_records(runs)}
    assert rec["a", "b"].decisions == ["neither"] * 5
    assert rec["a", "c"].decisions == ["a"] * 5 and rec["b", "c"].decided_share == 1.0
    s = summarise_decisions(list(rec.values()))
    assert s.flips == 0 and s.clear_pairs == 2 and s.clear_decided == 1.0
    assert s.close_pairs == 2  # a-c and b-c are 1.4x apart
    strict = {(r.a, r.b): r for r in pair_records(runs, significant=False)}
    assert strict["a", "b"].decided_share >= 0.6  # the strict rule "decides" pure noise


def test_degraded_timings_are_left_out_and_spearman_is_per_rerun_pair():
    bad = Timing(status=TimingStatus.DEGRADED, status_reason="drift")
    run = {"t": {"a": t(1.0), "b": t(2.0), "c": t(3.0), "d": bad}}
    table = percentiles(run)
    assert ("t", "d") not in table and table["t", "a"] == 100.0
    rhos = rerun_spearman([table, table, table])
    assert rhos == [pytest.approx(1.0)] * 3
