"""`repo-setup-cover`: how much of the expert's call a task's import + setup noise can hide, on
recorded figures (red team helper-119's bloomc rounds; textindex's from a full run)."""

from __future__ import annotations

from perfgym.audit.repo_setup_cover import MAX_SETUP_COVER, setup_cover, weak_cover
from perfgym.repos.measure import TaskMeasurement, WorkloadComparison, uncharged_room

MS = 1e-3


def _workload(name: str, hidden: bool, setup_ms: list[float], call_ms: list[float]):  # type: ignore[no-untyped-def]
    return WorkloadComparison(name=name, hidden=hidden,
                              original_setup_s=tuple(x * MS for x in setup_ms),
                              patched_call_s=tuple(x * MS for x in call_ms))  # fmt: skip


def _measurement(*workloads: WorkloadComparison) -> TaskMeasurement:
    return TaskMeasurement(task_id="t", rounds=5, workloads=workloads, correct=True)


def test_a_few_ms_call_under_ten_ms_of_setup_noise_is_weak_cover() -> None:
    """bloomc: import + setup 15-26 ms from round to round, the expert's hidden call ~4 ms (2-3
    ms moved into import were credited 24.6x against 15.1x for the same work in the call)."""
    m = _measurement(_workload("visible", False, [15.9, 16.8, 16.6, 14.8, 14.4], [0.9] * 5),
                     _workload("hidden", True, [15.5, 16.3, 26.0, 15.6, 17.9],
                               [4.1, 4.6, 5.6, 4.3, 4.4]))  # fmt: skip
    (cover,) = setup_cover(m)  # decided on the hidden workload only
    assert cover.workload == "hidden"
    assert cover.room_s > 2 * cover.call_s  # 2 x the 11.6 ms range
    assert weak_cover([cover]) == [cover]


def test_a_steady_setup_under_a_long_call_is_sound() -> None:
    """textindex: import + setup 12-13 ms, the expert's call ~33 ms."""
    m = _measurement(_workload("visible", False, [12.4, 12.0, 12.0, 12.6, 12.2],
                               [33.1, 34.0, 32.8, 33.5, 33.0]))  # fmt: skip
    (cover,) = setup_cover(m)
    assert cover.share < MAX_SETUP_COVER
    assert weak_cover([cover]) == []


def test_the_room_is_the_clocks_own_tolerance() -> None:
    """The probe reads the same room the charge leaves (one definition): at least 2 ms, a tenth
    of the median, twice the range."""
    assert uncharged_room([0.010, 0.010, 0.010]) == 0.002
    assert abs(uncharged_room([0.100, 0.100, 0.100]) - 0.010) < 1e-12
    assert abs(uncharged_room([0.010, 0.012, 0.011]) - 0.004) < 1e-12
