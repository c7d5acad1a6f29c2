"""DMC-Optim's gated percentile rewards (paper 003, §4, §D) against hand-computed rankings."""

from __future__ import annotations

import pytest
from reward_verdicts import failed, ok, staircase, timeout_test

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Stage
from perfgym.rewards import get_reward
from perfgym.tasks.task import StoredMeasurement

REFS = (0.125, 0.2, 0.3, 0.4, 0.5)  # per-workload seconds of five references


def pool5() -> list[dict[str, float | None]]:
    return [{"w1": s, "w2": s} for s in REFS]


def cand(w1: float, w2: float | None = None, **extra) -> object:
    per = {"w1": w1, "w2": w1 if w2 is None else w2}
    return ok(sum(per.values()), per=per, **extra)


def run(name: str, verdicts: list, pools: list | None = None, **params) -> list:
    pools = pools if pools is not None else [pool5() for _ in verdicts]
    return get_reward(name, **params)(verdicts, pool=pools)


def per_workload_staircase() -> list:
    """The staircase with candidate durations split over w1/w2 (0.6, 0.3, 0.1 s per workload)."""
    rungs = staircase()
    return rungs[:4] + [cand(tc / 2) for tc in (1.2, 0.6, 0.2)]


def test_default_is_top_30_percent_binary() -> None:
    # positions: correct 0.6 s -> 100 %, faster 0.3 s -> 40 % (0.125, 0.2 faster), ref 0.1 s -> 0 %
    assert run("percentile", per_workload_staircase()) == [0, 0, 0, 0, 0.0, 0.0, 1.0]
    # τ = 40 admits the faster rung: ties and equality count for the candidate (<= τ).
    assert run("percentile", per_workload_staircase(), tau=40) == [0, 0, 0, 0, 0.0, 1.0, 1.0]


def test_qar_staircase_and_mixed_workloads() -> None:
    values = run("percentile_qar", per_workload_staircase())
    assert values == pytest.approx([0, 0, 0, 0, 0.0, 0.6, 1.0])
    # w1 0.15 s: 1 of 5 faster (20 %); w2 0.45 s: 4 of 5 faster (80 %); mean 50 % -> q = 0.5
    out = get_reward("percentile_qar").score([cand(0.15, 0.45)], pool=[pool5()])[0]
    assert out.value == pytest.approx(0.5)
    assert out.components["mean_position"] == pytest.approx(50.0)
    # A tie with a reference: that reference is not faster.
    assert run("percentile_qar", [cand(0.2)]) == pytest.approx([0.8])


def test_qp_ranks_the_mean_among_references_and_saturates() -> None:
    pool = [{"a": 1.0, "b": 10.0}, {"a": 2.0, "b": 2.0}, {"a": 3.0, "b": 3.0}]
    v = ok(4.0, per={"a": 1.5, "b": 2.5})
    # candidate: a -> 1/3 faster, b -> 1/3 faster: mean position 33.3 -> QAR 0.667
    assert run("percentile_qar", [v], [pool]) == pytest.approx([2 / 3])
    # members vs (others + candidate): A (0 + 100)/2 = 50, B (66.7 + 0)/2 = 33.3, C 83.3.
    # Nobody is strictly better than 33.3 -> leaderboard position 0 -> QP saturates at 1.
    out = get_reward("percentile_qp").score([v], pool=[pool])[0]
    assert out.value == pytest.approx(1.0)
    assert out.components["leaderboard_position"] == 0.0
    # One workload, pool 1/2/4 s, candidate 3 s: members 0, 33.3, 100 vs candidate 66.7 -> 2/3.
    single = [{"a": 1.0}, {"a": 2.0}, {"a": 4.0}]
    assert run("percentile_qp", [ok(3.0, per={"a": 3.0})], [single]) == pytest.approx([1 / 3])


def test_leaderboard_tau_gate() -> None:
    single = [{"a": 1.0}, {"a": 2.0}, {"a": 4.0}]
    v = ok(3.0, per={"a": 3.0})  # leaderboard position 66.7
    assert run("percentile", [v], [single], ranking="leaderboard", tau=60) == [0.0]
    assert run("percentile", [v], [single], ranking="leaderboard", tau=70) == [1.0]


def test_absolute_limit_and_timeout_tolerance() -> None:
    verdicts = [cand(0.6), cand(0.3), cand(0.25, 0.5)]
    # limit 0.35 s: 0.6 s times out on both workloads, 0.3 s on none, the mixed one on w2 only.
    gate = run("percentile", verdicts, limit="absolute", limit_s=0.35, tau=100, rho=0.5)
    assert gate == [0.0, 1.0, 1.0]
    strict = run("percentile", verdicts, limit="absolute", limit_s=0.35, tau=100, rho=0.0)
    assert strict == [0.0, 1.0, 0.0]
    graded = run(
        "percentile", verdicts, limit="absolute", limit_s=0.35, tau=100, quality="timeouts"
    )
    assert graded == pytest.approx([0.0, 1.0, 0.5])


def test_relative_limit_is_the_tau_th_reference() -> None:
    # 50th percentile of five references = the 3rd smallest = 0.3 s; equal is not over.
    values = run(
        "percentile",
        [cand(0.3), cand(0.31)],
        limit="relative",
        limit_percentile=50,
        tau=100,
        rho=0.0,
    )
    assert values == [1.0, 0.0]
    slack = run(
        "percentile",
        [cand(0.31)],
        limit="relative",
        limit_percentile=50,
        limit_factor=1.1,
        tau=100,
        rho=0.0,
    )
    assert slack == [1.0]


def test_ranked_limit_is_the_slowest_of_the_top_references() -> None:
    # top 40 % of five = the two fastest (0.125, 0.2): deadline = 0.2 s per workload.
    params = {"limit": "ranked", "limit_percentile": 40, "tau": 100, "rho": 0.0}
    assert run("percentile", [cand(0.2), cand(0.25)], **params) == [1.0, 0.0]


def test_cap_and_censored_timeouts() -> None:
    assert run("percentile", [cand(11.0, 0.1)], tau=100, rho=0.0) == [0.0]  # 11 s > 10 s cap
    # A timed-out workload is recorded at its deadline (the cap) and ranks there:
    # it beats a reference that itself timed out (None) and loses to the four finished ones.
    pool = pool5()
    pool[4]["w1"] = None
    v = ok(0.1, per={"w2": 0.1}, tests=[timeout_test("w1")])
    out = get_reward("percentile_qar").score([v], pool=[pool])[0]
    assert out.components["timeout_fraction"] == 0.5
    assert out.components["mean_position"] == pytest.approx((80 + 0) / 2)


def test_absolute_filter_drops_slow_workloads() -> None:
    pool = [{"fast": s, "slow": 10 * s} for s in (0.3, 0.35, 0.4)]  # human medians 0.35 / 3.5
    v = ok(5.0, per={"fast": 0.32, "slow": 4.68})
    # Only 'fast' remains: 1 of 3 references faster -> QAR 1 - 33.3/100.
    out = get_reward("percentile_qar", filter="absolute", filter_threshold_s=2.0).score(
        [v], pool=[pool]
    )[0]
    assert out.value == pytest.approx(2 / 3)
    assert out.components["n_workloads"] == 1.0
    # Without the filter the slow workload counts too (all three faster there): (33.3 + 100)/2.
    assert run("percentile_qar", [v], [pool]) == pytest.approx([1 - (100 / 3 + 100) / 200])


def test_relative_filter_drops_a_fraction_of_the_slowest() -> None:
    pool = [{"a": s, "b": 2 * s, "c": 3 * s} for s in (1.0, 2.0)]
    v = ok(9.0, per={"a": 0.5, "b": 3.0, "c": 7.0})
    # drop floor(0.34 · 3) = 1 workload, the slowest by human median: 'c'.
    out = get_reward("percentile_qar", filter="relative", filter_fraction=0.34).score(
        [v], pool=[pool]
    )[0]
    assert out.components["n_workloads"] == 2.0
    assert out.value == pytest.approx(1 - (0 + 50) / 200)


def test_filter_that_removes_everything_is_neutral() -> None:
    pool = [{"a": 5.0}, {"a": 6.0}]
    out = get_reward("percentile", filter="absolute", filter_threshold_s=1.0).score(
        [ok(9.0, per={"a": 9.0})], pool=[pool]
    )[0]
    assert out.value == 1.0
    assert "no workloads" in out.reason


def test_calibration_of_stored_durations() -> None:
    pool = [{"a": 1.0}, {"a": 2.0}]
    v = ok(0.75, per={"a": 0.75})
    assert run("percentile_qar", [v], [pool]) == pytest.approx([1.0])
    # affine (α, β) = (0.5, 0): the references become 0.5 s and 1.0 s -> one is faster.
    assert run("percentile_qar", [v], [pool], calibrate=(0.5, 0.0)) == pytest.approx([0.5])
    assert run("percentile_qar", [v], [pool], calibrate=lambda t: t / 2) == pytest.approx([0.5])
    with pytest.raises(ConfigError, match="calibration maps"):
        run("percentile_qar", [v], [pool], calibrate=(1.0, -5.0))


def test_stored_measurements_as_pool_members() -> None:
    pool = [
        StoredMeasurement(per_workload_s={"a": 1.0}),
        StoredMeasurement(per_workload_s={"a": 3.0}),
        StoredMeasurement(status="error", per_workload_s={"a": 0.1}),  # not a reference
    ]
    assert run("percentile_qar", [ok(2.0, per={"a": 2.0})], [pool]) == pytest.approx([0.5])


@pytest.mark.parametrize(
    ("pool", "match"),
    [
        ([{"a": float("nan")}], "not seconds"),
        ([{"a": -1.0}], "not seconds"),
        ([3.0], "expected a mapping"),
        ({"a": 1.0}, "a pool is a list"),
    ],
)
def test_bad_pools_raise_clearly(pool, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        run("percentile", [ok(1.0, per={"a": 1.0})], [pool])


def test_empty_pool_and_pool_of_one() -> None:
    out = get_reward("percentile").score([ok(1.0, per={"a": 1.0})], pool=[[]])[0]
    assert out.value is None and out.reason == "empty reference pool"
    one = [{"a": 1.0}]
    assert run(
        "percentile_qar", [ok(0.5, per={"a": 0.5}), ok(2.0, per={"a": 2.0})], [one, one]
    ) == [
        1.0,
        0.0,
    ]


def test_missing_workload_timing() -> None:
    pool = [{"w1": 0.2, "w2": 0.2, "w3": 0.2}]
    v = cand(0.1)  # no w3
    out = get_reward("percentile").score([v], pool=[pool])[0]
    assert out.value is None and "w3" in out.reason
    # DMC-Optim's fallback rule: an unmeasured workload counts as timed out.
    as_timeout = get_reward("percentile_qar", on_missing_timing="timeout").score([v], pool=[pool])[
        0
    ]
    assert as_timeout.components["timeout_fraction"] == pytest.approx(1 / 3)
    assert as_timeout.value == pytest.approx(1 - 100 / 300)
    assert get_reward("percentile")([ok(None)], pool=[pool]) == [None]
    # With the fallback rule a candidate whose timing is absent times out everywhere.
    everywhere = get_reward("percentile", tau=100, on_missing_timing="timeout").score(
        [ok(None)], pool=[pool]
    )[0]
    assert everywhere.components["timeout_fraction"] == 1.0
    assert everywhere.value == 1.0  # ρ = 1 tolerates it; τ = 100 has no threshold
    strict = get_reward("percentile", tau=100, rho=0.5, on_missing_timing="timeout")
    assert strict([ok(None)], pool=[pool]) == [0.0]


def test_compositions() -> None:
    batch = per_workload_staircase()
    additive = run("percentile", batch, composition="additive", w_correct=0.5, w_opt=1.0)
    assert additive == [0, 0, 0, 0, 0.5, 0.5, 1.5]
    blended = run("percentile_qar", batch, composition="additive", w_correct=0.5, w_opt=0.5)
    assert blended == pytest.approx([0, 0, 0, 0, 0.5, 0.8, 1.0])
    objectives = ["correctness"] * 4 + ["correctness", "optimization", "optimization"]
    multitask = get_reward("percentile", composition="multitask")(
        batch, pool=[pool5()] * 7, objective=objectives
    )
    assert multitask == [0, 0, 0, 0, 1.0, 0.0, 1.0]
    # collapsed: any timeout is a failure; binary.
    mixed = cand(0.1, 0.5)
    collapsed = run(
        "percentile", [mixed], composition="collapsed", limit="absolute", limit_s=0.4, tau=100
    )
    hard = run(
        "percentile", [mixed], composition="hard_gated", limit="absolute", limit_s=0.4, tau=100
    )
    assert (collapsed, hard) == ([0.0], [1.0])


@pytest.mark.parametrize(
    "params",
    [
        {"composition": "collapsed", "quality": "qar"},
        {"composition": "collapsed", "rho": 0.5},
        {"tau": 0},
        {"rho": 1.5},
        {"filter_fraction": 1.0},
        {"calibrate": (1.0, 2.0, 3.0)},
        {"calibrate": "identity"},
    ],
)
def test_invalid_parameters(params: dict) -> None:
    with pytest.raises(ConfigError):
        get_reward("percentile", **params)


def test_buckets() -> None:
    # QAR 0.6 in 4 buckets -> floor(2.4)/4 = 0.5; 1.0 stays 1.0.
    assert run("percentile_qar", [cand(0.3), cand(0.1)], buckets=4) == pytest.approx([0.5, 1.0])


def test_columns_failures_and_infra() -> None:
    r = get_reward("percentile")
    with pytest.raises(ConfigError, match="'pool'"):
        r([cand(0.1)])
    with pytest.raises(ConfigError, match="objective"):
        get_reward("percentile", composition="multitask")([cand(0.1)], pool=[pool5()])
    with pytest.raises(ConfigError, match="objective\\[0\\]"):
        get_reward("percentile", composition="multitask")(
            [cand(0.1)], pool=[pool5()], objective=["speed"]
        )
    assert r([cand(0.1, infra_error=True)], pool=[pool5()]) == [None]
    fast_but_wrong = failed(Stage.WO, candidate=cand(0.01).candidate)
    assert r([fast_but_wrong], pool=[pool5()]) == [0.0]
    # Pool-free environments need no pool column.
    assert get_reward("percentile", tau=100, limit="absolute", limit_s=1.0)([cand(0.5)]) == [1.0]
