"""The agent's speed claim is decided on the workloads it never saw (issue 26: decide on what
the author never saw), and nothing of a hidden workload reaches the agent's feedback."""

from __future__ import annotations

from perfgym.agent.attempt import WorkloadSpeed
from perfgym.repos.measure import TaskMeasurement, WorkloadComparison
from perfgym.repos.verdict import significant, workload_failure


def speed(name: str, hidden: bool, x: float, sig: bool) -> WorkloadSpeed:
    return WorkloadSpeed(name=name, hidden=hidden, speedup=x, ci=(x * 0.9, x * 1.1),
                         significant=sig, outputs_match=True)  # fmt: skip


def test_a_visible_only_speedup_is_not_counted():
    """Significantly faster on the visible workload, not on the hidden one: not counted."""
    speeds = [speed("visible", False, 40.0, True), speed("hidden", True, 1.01, False)]
    assert not significant(speeds, (1.5, 9.0))


def test_faster_where_it_was_never_seen_is_counted_even_if_the_visible_one_is_noise():
    speeds = [speed("visible", False, 1.02, False), speed("hidden", True, 3.5, True)]
    assert significant(speeds, (1.2, 5.0))


def test_every_hidden_workload_must_be_faster_and_the_task_interval_above_one():
    two = [speed("h1", True, 3.0, True), speed("h2", True, 0.8, True)]  # one significantly slower
    assert not significant(two, (1.1, 2.0))
    assert not significant([speed("h", True, 3.0, True)], (0.9, 4.0))


def test_a_task_without_hidden_workloads_decides_on_its_visible_ones():
    assert significant([speed("visible", False, 3.0, True)], (2.0, 4.0))
    assert not significant([], None)


def _measurement(*workloads: WorkloadComparison) -> TaskMeasurement:
    return TaskMeasurement(task_id="t", rounds=3, workloads=workloads, correct=False)


def test_a_hidden_workloads_crash_reaches_the_agent_as_one_line_without_its_trace():
    trace = ("patched: workload crashed: Traceback (most recent call last):\n"
             "  File \"/work/hidden_workload.py\", line 7, in setup\n"
             "    docs = [make_doc(i, seed=8675309) for i in range(40_000)]\nValueError: x")  # fmt: skip
    m = _measurement(WorkloadComparison(name="visible", hidden=False),
                     WorkloadComparison(name="hidden-big", hidden=True, error=trace))  # fmt: skip
    told = workload_failure(m)
    assert told == "a hidden workload: the run failed"
    for secret in ("hidden-big", "hidden_workload.py", "8675309", "make_doc", "Traceback"):
        assert secret not in told


def test_a_visible_workloads_failure_is_told_in_full_and_wrong_outputs_say_so():
    m = _measurement(
        WorkloadComparison(name="visible", hidden=False, error="patched: workload crashed: KeyError 3"),
        WorkloadComparison(name="hidden", hidden=True, outputs_match=False,
                           error="outputs differ from the original's"),
    )  # fmt: skip
    told = workload_failure(m)
    assert "visible: patched: workload crashed: KeyError 3" in told
    assert "a hidden workload: outputs differ from the original's" in told
