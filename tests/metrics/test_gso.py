"""GSO Opt@K, Sp@K and their hack-adjusted variants on hand-computed cases."""

from __future__ import annotations

import pytest

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Stage
from perfgym.metrics.gso import GSOConfig, GSOMetric, attempt_status, gso_at_k

BASE = {"w1": 1.0, "w2": 2.0}


def attempt(mk, patch, commit, *, sample=0, stage=Stage.OK, flags=(), task="t"):  # type: ignore[no-untyped-def]
    return mk(task, stage, cw=patch, bw=BASE, rw=commit, sample=sample, flags=flags)


def test_matches_the_expert(mk) -> None:  # type: ignore[no-untyped-def]
    # base/patch = 2, 2 -> GM 2 >= 1.2; commit/patch = 1.2, 1.2 -> HM 1.2 > 0.95.
    st = attempt_status(attempt(mk, {"w1": 0.5, "w2": 1.0}, {"w1": 0.6, "w2": 1.2}), GSOConfig())
    assert (st.opt_base, st.opt_commit) == (True, True)
    assert st.gm_speedup == pytest.approx(2.0)
    assert st.hm_vs_expert == pytest.approx(1.2)


def test_fast_but_short_of_the_expert(mk) -> None:  # type: ignore[no-untyped-def]
    # commit/patch = 0.8 on both tests -> HM 0.8, not above 0.95: Sp but not Opt.
    st = attempt_status(attempt(mk, {"w1": 0.5, "w2": 1.0}, {"w1": 0.4, "w2": 0.8}), GSOConfig())
    assert (st.opt_base, st.opt_commit) == (True, False)


def test_speedup_needs_the_mean_to_drop_too(mk) -> None:  # type: ignore[no-untyped-def]
    # GM of per-test speedups is 3.0, yet the mean time rises (5.5 -> 5.55): GSO refuses it.
    v = mk(
        "t",
        Stage.OK,
        cw={"w1": 0.1, "w2": 11.0},
        bw={"w1": 1.0, "w2": 10.0},
        rw={"w1": 0.1, "w2": 9.0},
    )
    st = attempt_status(v, GSOConfig())
    assert st.gm_speedup == pytest.approx((10 * 10 / 11) ** 0.5)
    assert (st.opt_base, st.opt_commit) == (False, False)


def test_threshold_edges(mk) -> None:  # type: ignore[no-untyped-def]
    # GM equal to min_speedup passes (>=); HM equal to opt_threshold does not (>).
    # Binary-exact durations keep the ratios exactly at the thresholds.
    config = GSOConfig(min_speedup=2.0, opt_threshold=0.75)
    st = attempt_status(attempt(mk, {"w1": 0.5, "w2": 1.0}, {"w1": 0.375, "w2": 0.75}), config)
    assert (st.gm_speedup, st.hm_vs_expert) == (2.0, 0.75)
    assert st.opt_base
    assert not st.opt_commit


def test_incorrect_or_untimed_attempts_never_count(mk) -> None:  # type: ignore[no-untyped-def]
    wrong = attempt(mk, {"w1": 0.1, "w2": 0.1}, {"w1": 1.0, "w2": 2.0}, stage=Stage.WO)
    assert not attempt_status(wrong, GSOConfig()).opt_base
    untimed = mk("t", Stage.OK, bw=BASE, rw=BASE)
    assert not attempt_status(untimed, GSOConfig()).opt_base


def test_opt_at_k_unbiased_over_attempts(mk) -> None:  # type: ignore[no-untyped-def]
    good = ({"w1": 0.5, "w2": 1.0}, {"w1": 0.6, "w2": 1.2})
    short = ({"w1": 0.5, "w2": 1.0}, {"w1": 0.4, "w2": 0.8})
    results = [
        attempt(mk, *good, sample=0),
        attempt(mk, *short, sample=1),
        attempt(mk, *short, sample=2, stage=Stage.NR),
        attempt(mk, *short, task="u"),
    ]
    with pytest.raises(ConfigError, match="fewer than K"):
        gso_at_k(results, GSOConfig(k=2))
    results.append(attempt(mk, *short, task="u", sample=1))
    opt1 = gso_at_k(results, GSOConfig(k=1))
    assert opt1.per_task == {"t": pytest.approx(1 / 3), "u": 0.0}
    opt2 = gso_at_k(results, GSOConfig(k=2))
    assert opt2.per_task["t"] == pytest.approx(2 / 3)  # 1 - C(2,2)/C(3,2)
    sp1 = gso_at_k(results, GSOConfig(k=1), which="sp")
    assert sp1.per_task == {"t": pytest.approx(2 / 3), "u": 1.0}
    assert sp1.name == "sp@1"


def test_hack_adjusted_keeps_the_denominator(mk) -> None:  # type: ignore[no-untyped-def]
    good = ({"w1": 0.5, "w2": 1.0}, {"w1": 0.6, "w2": 1.2})
    results = [
        attempt(mk, *good, task="a", flags=("hack:caching",)),
        attempt(mk, *good, task="b", flags=("harness_timer_mismatch",)),
        attempt(mk, *good, task="c", flags=("high_cv",)),  # a noise warning, not a hack
        attempt(mk, *good, task="d"),
    ]
    assert gso_at_k(results).value == 1.0
    adjusted = GSOMetric("opt", GSOConfig(hack_adjusted=True))
    r = adjusted.compute(results)
    assert adjusted.name == "opt@1(hack-adj)"
    assert r.value == 0.5
    assert r.n == 4
    assert any("hack flag" in n for n in r.notes)


def test_workloads_must_match(mk) -> None:  # type: ignore[no-untyped-def]
    v = mk("t", Stage.OK, cw={"w1": 0.5}, bw=BASE, rw=BASE)
    with pytest.raises(ConfigError, match="different workloads"):
        gso_at_k([v])


def test_single_total_when_no_workloads(mk) -> None:  # type: ignore[no-untyped-def]
    st = attempt_status(mk("t", Stage.OK, 0.5, 1.0, 0.5), GSOConfig())
    assert (st.opt_base, st.opt_commit, st.gm_speedup) == (True, True, 2.0)
