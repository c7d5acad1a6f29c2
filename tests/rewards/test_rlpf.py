"""RLPF (paper 000, Eqs. 1–7) pinned to hand-computed values, edge cases and ablations."""

from __future__ import annotations

import pytest
from reward_verdicts import failed, ok, staircase, timing

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Stage, TimingStatus
from perfgym.rewards import get_reward

# Tb = 1.0, Tr = 0.25, so Tb - Tr = 0.75.
# correct   Tc=1.2: FBR 0, RBR 0, CGRE 0            -> max(0.15, 0)            = 0.15
# faster    Tc=0.6: FBR 1, RBR 0, CGRE 0.4/0.75     -> 0.5333… + 0.16          = 0.69333…
# reference Tc=0.2: FBR 1, RBR 1, CGRE clip(…) = 1  -> 1 + 0.16 + 0.10         = 1.26
STAIRCASE = [-0.05, 0.0, 0.05, 0.10, 0.15, 0.4 / 0.75 + 0.16, 1.26]


def test_staircase_values_match_eqs_1_to_7() -> None:
    values = get_reward("rlpf")(staircase())
    assert values == pytest.approx(STAIRCASE, abs=1e-12)
    assert all(a < b for a, b in zip(values, values[1:], strict=False))


def test_components_are_logged() -> None:
    out = get_reward("rlpf").score([ok(0.6)])[0]
    assert out.stage is Stage.OK
    assert out.components["fbr"] is True and out.components["rbr"] is False
    assert out.components["cgre"] == pytest.approx(0.4 / 0.75)
    assert out.components["r_succ"] == pytest.approx(0.4 / 0.75 + 0.16)
    assert out.components["floor"] == pytest.approx(0.15)
    assert (out.components["tc_s"], out.components["tb_s"], out.components["tr_s"]) == (
        0.6,
        1.0,
        0.25,
    )


@pytest.mark.parametrize(
    ("tc", "expected"),
    [
        (1.0, 0.15),  # Tc = Tb: not faster (strict <), CGRE 0 -> floor
        (0.99, 0.01 / 0.75 + 0.16),  # barely faster: αF alone clears the floor
        (0.25, 1.26),  # Tc = Tr: RBR uses <=
        (0.1, 1.26),  # Tc < Tr: CGRE clipped to 1
        (5.0, 0.15),  # much slower than baseline: still above every failure
    ],
)
def test_edge_durations(tc: float, expected: float) -> None:
    # The paper's rule on the estimates (1 % faster counts); the default decides by statistics.
    assert get_reward("rlpf", decision="strict")([ok(tc)]) == pytest.approx([expected], abs=1e-12)


def test_a_difference_within_the_margin_pays_no_bonus_by_default() -> None:
    # 1 % faster than the baseline, 1 % slower than the reference: inside the 3 % margin, a
    # tie with each under the significant rule, so no FBR bonus and RBR (level) still paid.
    out = get_reward("rlpf").score([ok(0.99)])[0]
    assert out.value == pytest.approx(0.15) and out.components["fbr"] is False
    assert out.decision.startswith("significant: baseline tie (exact)")
    level = get_reward("rlpf").score([ok(0.2525)])[0]
    assert level.components["rbr"] is True and level.components["cgre"] == 1.0


@pytest.mark.parametrize(
    ("tc", "expected"),
    [(0.4, 1.26), (0.5, 0.15), (0.6, 0.15), (0.9, 0.15)],
)
def test_reference_slower_than_baseline_uses_step(tc: float, expected: float) -> None:
    # Tb = 0.5 <= Tr = 0.8: CGRE = FBR; RBR stays Eq. 2 (Tc <= Tr), below the floor alone.
    out = get_reward("rlpf").score([ok(tc, tb=0.5, tr=0.8)])[0]
    assert out.value == pytest.approx(expected, abs=1e-12)
    assert "degenerate gap" in out.reason
    assert out.components["cgre"] == float(tc < 0.5)


def test_reference_equal_to_baseline() -> None:
    values = get_reward("rlpf")([ok(0.5, tb=0.5, tr=0.5), ok(0.45, tb=0.5, tr=0.5)])
    assert values == pytest.approx([0.15, 1.26])


def test_degenerate_gap_none_policy() -> None:
    out = get_reward("rlpf", degenerate_gap="none").score([ok(0.4, tb=0.5, tr=0.8)])[0]
    assert out.value is None and "degenerate gap" in out.reason


@pytest.mark.parametrize(
    ("verdict", "why"),
    [
        (ok(None), "candidate timing absent"),
        (ok(0.5, candidate=timing(0.5, status=TimingStatus.DEGRADED)), "candidate timing degraded"),
        (ok(0.5, candidate=timing(float("nan"))), "not a positive finite duration"),
        (ok(0.5, candidate=timing(0.0)), "not a positive finite duration"),
        (ok(0.5, tb=None), "baseline timing absent"),
        (ok(0.5, tr=None), "reference timing absent"),
        (ok(0.5, candidate=timing(0.5, clock="cpu")), "different clocks"),
    ],
)
def test_missing_or_degraded_timing_is_none_not_zero(verdict, why: str) -> None:
    out = get_reward("rlpf").score([verdict])[0]
    assert out.value is None
    assert why in out.reason


def test_missing_timing_floor_policy() -> None:
    out = get_reward("rlpf", on_missing_timing="floor").score([ok(None)])[0]
    assert out.value == pytest.approx(0.15)
    assert "correctness floor" in out.reason


def test_missing_timing_never_affects_failures() -> None:
    # A failure needs no timing: its ladder value holds whatever the timings are.
    assert get_reward("rlpf")([failed(Stage.NR)]) == [0.05]


def test_infra_error_is_none_even_when_correct() -> None:
    out = get_reward("rlpf").score([ok(0.5, infra_error=True)])[0]
    assert out.value is None and out.reason == "infra_error"
    assert get_reward("rlpf")([failed(Stage.NR, infra_error=True)]) == [None]


def test_stored_reference_column_replaces_reference() -> None:
    r = get_reward("rlpf")
    # reference_s = 0.5: CGRE = (1 - 0.6) / (1 - 0.5) = 0.8
    assert r([ok(0.6)], reference_s=[0.5]) == pytest.approx([0.8 + 0.16])
    assert r([ok(0.6)], baseline_s=[2.0]) == pytest.approx([1.4 / 1.75 + 0.16])
    assert r([ok(0.6)], reference_s=[None]) == [None]
    with pytest.raises(ConfigError, match="not seconds"):
        r([ok(0.6)], reference_s=[-1.0])
    with pytest.raises(ConfigError, match="1 entries for 2 verdicts"):
        r([ok(0.6), ok(0.6)], reference_s=[0.5])


def test_ablations() -> None:
    batch = staircase()
    no_fbr = get_reward("rlpf_no_fbr")(batch)
    assert no_fbr == pytest.approx([-0.05, 0.0, 0.05, 0.10, 0.15, 0.4 / 0.75, 1.10])
    no_rbr = get_reward("rlpf_no_rbr")(batch)
    assert no_rbr == pytest.approx([-0.05, 0.0, 0.05, 0.10, 0.15, 0.4 / 0.75 + 0.16, 1.16])
    no_shaping = get_reward("rlpf_no_shaping")(batch)
    assert no_shaping == pytest.approx([0, 0, 0, 0, 0.15, 0.4 / 0.75 + 0.16, 1.26])
    # Without FBR a barely-faster program sits on the floor with the slow ones.
    assert get_reward("rlpf_no_fbr")([ok(0.99), ok(1.2)]) == pytest.approx([0.15, 0.15])


def test_ablation_fixes_its_parameter() -> None:
    assert "alpha_f" not in get_reward("rlpf_no_fbr").params
    with pytest.raises(ConfigError, match="alpha_f"):
        get_reward("rlpf_no_fbr", alpha_f=0.3)


def test_custom_parameters() -> None:
    r = get_reward("rlpf", alpha_f=0.3, alpha_r=0.0, s_wo=0.2, eps=0.1)
    assert r([ok(0.6), ok(1.2), failed(Stage.WO)]) == pytest.approx([0.4 / 0.75 + 0.3, 0.3, 0.2])


@pytest.mark.parametrize(
    "params",
    [
        {"s_nc": -0.1},  # ladder no longer increasing
        {"eps": 0.0},  # ε > 0 is required (Eq. 6)
        {"alpha_f": -0.1},
        {"shaping": False, "failure_value": 0.2},  # failure above the correctness floor
    ],
)
def test_invalid_parameters_raise(params: dict) -> None:
    with pytest.raises(ConfigError):
        get_reward("rlpf", **params)


def test_bounds_and_order_claims() -> None:
    r = get_reward("rlpf")
    assert r.bounds == pytest.approx((-0.05, 1.26))
    assert r.order == ("<", "<", "<", "<", "<", "<")
    assert get_reward("rlpf_no_shaping").order == ("==", "==", "==", "<", "<", "<")
    assert get_reward("rlpf_no_fbr").order[4] == "<="
