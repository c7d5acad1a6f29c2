"""EffiBench-X paired comparison (RLPF Eq. 8) on hand-computed cases."""

from __future__ import annotations

import math

import pytest

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Stage
from perfgym.metrics.paired import paired_comparison


def test_geometric_mean_improvement_and_win_rate(mk) -> None:  # type: ignore[no-untyped-def]
    before = [
        mk("a", Stage.OK, 2.0, model="base", cand={"memory_integral_mb_s": 8.0}),
        mk("b", Stage.OK, 1.0, model="base", cand={"memory_integral_mb_s": 1.0}),
        mk("c", Stage.OK, 1.0, model="base"),  # only the base solves it
        mk("d", Stage.WO, model="base"),
    ]
    after = [
        mk("a", Stage.OK, 1.0, model="rl", cand={"memory_integral_mb_s": 2.0}),
        mk("b", Stage.OK, 1.0, model="rl", cand={"memory_integral_mb_s": 1.0}),
        mk("c", Stage.NR, model="rl"),
        mk("d", Stage.OK, 1.0, model="rl"),  # only the trained model solves it
    ]
    p = paired_comparison(before, after)
    assert (p.n_shared, p.n_before_only, p.n_after_only) == (2, 1, 1)
    assert p.et_improvement.value == pytest.approx(math.sqrt(2.0) - 1.0)  # rho = 2, 1
    assert p.mi_improvement is not None
    assert p.mi_improvement.value == pytest.approx(1.0)  # rho = 4, 1 -> GM 2
    assert p.et_win_rate.value == 0.5  # a tie is not a win
    assert p.et_improvement.per_task["a"] == pytest.approx(math.log(2.0))
    assert (p.model_before, p.model_after) == ("base", "rl")


def test_slower_after_is_negative(mk) -> None:  # type: ignore[no-untyped-def]
    p = paired_comparison([mk("a", Stage.OK, 1.0)], [mk("a", Stage.OK, 2.0)])
    assert p.et_improvement.value == pytest.approx(-0.5)
    assert p.mi_improvement is None


def test_nothing_shared_is_refused(mk) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match="no problem is solved by both"):
        paired_comparison([mk("a", Stage.OK, 1.0)], [mk("a", Stage.WO)])


def test_shared_problem_without_duration_is_refused(mk) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match="lacks a usable duration"):
        paired_comparison([mk("a", Stage.OK, 1.0)], [mk("a", Stage.OK, None)])


def test_empty_side_is_refused(mk) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match="empty"):
        paired_comparison([], [mk("a", Stage.OK, 1.0)])
