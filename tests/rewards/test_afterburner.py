"""Afterburner's reward (paper 004; constants of its released grpo/afterburner_reward_function.py)."""

from __future__ import annotations

import math

import pytest
from reward_verdicts import failed, ok, staircase, timing

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Stage, TimingStatus
from perfgym.rewards import afterburner_format_ok, get_reward

GOOD = "<thinking>use a heap</thinking>\n<solution>\n```python\nprint(1)\n```\n</solution>\n"


def expected(transition: float, gain: float | None, fmt: float) -> float:
    """0.5 · (transition + 0.5 · tanh(gain)) + 0.2 · format; gain only for passing code."""
    efficiency = 0.5 * math.tanh(gain) if gain is not None else 0.0
    return 0.5 * (transition + efficiency) + 0.2 * fmt


def test_staircase_with_the_baseline_as_input() -> None:
    values = get_reward("afterburner")(staircase(), format_ok=[True] * 7)
    # Input = baseline (passed, 1.0 s). Failures are downgrades: 0.5·(−1) + 0.2 = −0.3.
    want = [expected(-1.0, None, 1)] * 4 + [
        expected(0.5, (1.0 - 1.2) / 1.0, 1),  # −0.2 gain
        expected(0.5, (1.0 - 0.6) / 1.0, 1),
        expected(0.5, (1.0 - 0.2) / 1.0, 1),
    ]
    assert values == pytest.approx(want, abs=1e-9)
    assert values[4] == pytest.approx(0.40065617, abs=1e-8)
    assert values[3] == pytest.approx(-0.3)


@pytest.mark.parametrize(
    ("input_passed", "stage", "transition"),
    [
        (True, Stage.OK, 0.5),
        (False, Stage.OK, 1.0),
        (False, Stage.WO, -0.5),
        (True, Stage.NC, -1.0),
    ],
)
def test_transition_table(input_passed: bool, stage: Stage, transition: float) -> None:
    v = ok(0.5) if stage is Stage.OK else failed(stage)
    out = get_reward("afterburner").score(
        [v], format_ok=[False], input_passed=[input_passed], input_time_s=[1.0]
    )[0]
    assert out.components["transition"] == transition
    if stage is Stage.OK:
        # A failing input's figure is the clip (90 s), as Afterburner substitutes it.
        gain = 0.5 if input_passed else (90.0 - 0.5) / 90.0
        assert out.value == pytest.approx(expected(transition, gain, 0))
    else:
        assert out.value == pytest.approx(expected(transition, None, 0))


def test_gain_clip_and_duration_clip() -> None:
    r = get_reward("afterburner")
    # 3× slower: gain −2 clipped to −1.
    assert r([ok(3.0)], format_ok=[True]) == pytest.approx([expected(0.5, -1.0, 1)])
    # Both beyond 90 s: both clip to 90, no gain.
    v = ok(120.0, tb=95.0)
    assert r([v], format_ok=[True]) == pytest.approx([expected(0.5, 0.0, 1)])
    assert get_reward("afterburner", tanh_scale=2.0)([ok(0.5)], format_ok=[True]) == pytest.approx(
        [0.5 * (0.5 + 0.5 * math.tanh(1.0)) + 0.2]
    )


def test_memory_and_integral_objectives() -> None:
    v = ok(0.5, candidate=timing(0.5, peak_rss_mb=50.0, memory_integral_mb_s=10.0))
    v.baseline = timing(1.0, peak_rss_mb=100.0, memory_integral_mb_s=40.0)
    mem = get_reward("afterburner", objective="memory")([v], format_ok=[True])
    assert mem == pytest.approx([expected(0.5, 0.5, 1)])
    integral = get_reward("afterburner", objective="integral")([v], format_ok=[True])
    assert integral == pytest.approx([expected(0.5, 0.75, 1)])
    per_row = get_reward("afterburner")(
        [v, v], format_ok=[True, True], efficiency_instruction=["memory", "time"]
    )
    assert per_row == pytest.approx([expected(0.5, 0.5, 1), expected(0.5, 0.5, 1)])
    with pytest.raises(ConfigError, match="efficiency_instruction"):
        get_reward("afterburner")([v], format_ok=[True], efficiency_instruction=["speed"])


def test_format_term() -> None:
    r = get_reward("afterburner")
    good, bad = r([ok(1.0), ok(1.0)], completions=[GOOD, "print(1)"])
    assert good - bad == pytest.approx(0.2)
    paper = get_reward("afterburner", format_fail=-1.0)([ok(1.0)], completions=["x"])
    assert paper == pytest.approx([0.5 * 0.5 - 0.2])
    chat = [[{"role": "assistant", "content": GOOD}]]
    assert r([ok(1.0)], completions=chat) == pytest.approx([good])
    assert get_reward("afterburner", format_weight=0.0)([ok(1.0)]) == pytest.approx([0.25])
    with pytest.raises(ConfigError, match="'completions' or 'format_ok'"):
        r([ok(1.0)])


@pytest.mark.parametrize(
    ("text", "ok_"),
    [
        (GOOD, True),
        ("  <thinking>a</thinking><solution>b</solution>  ", True),
        ("<thinking>a</thinking>", False),
        ("<solution>b</solution>", False),
        ("intro <thinking>a</thinking><solution>b</solution>", False),
        ("<thinking>a</thinking><solution>b</solution> trailing", False),
        ("<thinking>a<thinking>b</thinking><solution>c</solution>", False),
        ("<thinking>a</thinking><solution>b<solution>c</solution>", False),
        ("<thinking>a</thinking><solution>b</solution><solution>c</solution>", False),
    ],
)
def test_format_check(text: str, ok_: bool) -> None:
    assert afterburner_format_ok(text) is ok_


def test_missing_timing_and_infra() -> None:
    r = get_reward("afterburner")
    for v in (
        ok(None),
        ok(0.5, tb=None),
        ok(0.5, candidate=timing(0.5, status=TimingStatus.DEGRADED)),
        ok(0.5, candidate=timing(0.5, clock="cpu")),
    ):
        out = r.score([v], format_ok=[True])[0]
        assert out.value is None and "timing missing" in out.reason
    no_gain = get_reward("afterburner", on_missing_timing="no_gain")([ok(None)], format_ok=[True])
    assert no_gain == pytest.approx([expected(0.5, None, 1)])
    assert r([ok(0.5, infra_error=True)], format_ok=[True]) == [None]
    # A failing candidate needs no timing at all.
    assert r([failed(Stage.NR)], format_ok=[True]) == pytest.approx([-0.3])
    # An input column replaces the baseline; None there is missing.
    assert r([ok(0.5, tb=None)], format_ok=[True], input_time_s=[2.0]) == pytest.approx(
        [expected(0.5, 0.75, 1)]
    )
    assert r([ok(0.5)], format_ok=[True], input_time_s=[None]) == [None]
    with pytest.raises(ConfigError):
        r([ok(0.5)], format_ok=[True], input_time_s=[float("nan")])


def test_bounds() -> None:
    low, high = get_reward("afterburner").bounds
    assert low == pytest.approx(0.5 * -1.0 + 0.0)
    assert high == pytest.approx(0.5 * (1.0 + 0.5 * math.tanh(1.0)) + 0.2)
