"""The reference's outputs are dropped oldest first to bound memory, never a task's whose
candidates are being tested (dropping them would run its reference again mid-task)."""

from __future__ import annotations

from perfgym.judge.references import _DROPPED, KEEP_OUTPUTS_OF, ExpectedOutputs, OwnRun


def kept(expected: ExpectedOutputs, task: str) -> bool:
    return expected._runs[(task, "reference", "t0")].output is not _DROPPED


def fill(expected: ExpectedOutputs, task: str) -> None:
    key = (task, "reference", "t0")
    expected._runs[key] = OwnRun(ok=True, output=[1, 2], wall_s=0.01, why="OK")
    expected._outputs_kept(task, [key])


def test_the_oldest_task_not_in_use_is_dropped_first() -> None:
    expected = ExpectedOutputs(references=None)  # type: ignore[arg-type]
    with expected.in_use("t-0"):
        for k in range(KEEP_OUTPUTS_OF + 3):
            fill(expected, f"t-{k}")
        assert kept(expected, "t-0")  # the oldest, but being tested
        assert not kept(expected, "t-1") and not kept(expected, "t-3")
        assert kept(expected, "t-4") and kept(expected, f"t-{KEEP_OUTPUTS_OF + 2}")
    fill(expected, "t-late")
    assert not kept(expected, "t-0")  # no longer in use: the oldest goes next
    # the times stay when the outputs go (the tests' limits are made of them)
    assert expected._runs[("t-0", "reference", "t0")].wall_s == 0.01


def test_with_every_task_in_use_nothing_is_dropped() -> None:
    expected = ExpectedOutputs(references=None)  # type: ignore[arg-type]
    names = [f"u-{k}" for k in range(KEEP_OUTPUTS_OF + 2)]
    from contextlib import ExitStack

    with ExitStack() as stack:
        for n in names:
            stack.enter_context(expected.in_use(n))
            fill(expected, n)
        assert all(kept(expected, n) for n in names)
