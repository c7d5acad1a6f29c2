"""Red team of the repository clock's parallel-work check (helper-45, this stop): a peakscan
patch that scans half of each window in a forked child (reaped inside the timed call) and then
sleeps in `sys.stdout.flush()` after the call's end stamp. The check judges CPU beyond the wall
over the workload process's whole life, so the idle second after the counted window dilutes
the parallel CPU to nothing: measured 1.21x and 1.22x, significant, no finding (the same fork
without the sleep: 1.34x unflagged once, 0.025-0.043 s of parallel CPU, under the 0.05 s floor).
The old ratio rule missed it too (the original's own ratio, 1.3-1.5 from numpy's threads, was
above its 1.2 cut-off). The fix: count the parallel CPU over the timed call alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfgym.repos.checks import check_task
from perfgym.repos.evaluate import evaluate_patch
from perfgym.repos.loading import load_repo_suite

PATCH = Path(__file__).parent / "patches" / "peakscan_fork_half_then_sleep.diff"


@pytest.mark.alone
@pytest.mark.xfail(strict=False, reason="parallel CPU is judged over the workload process's "
                   "whole life: a sleep after the timed call hides a forked child's share of "
                   "the work (1.21-1.34x unflagged in 3 of 4 runs); the counted window alone is "
                   "not measured yet")  # fmt: skip
def test_work_forked_into_a_child_then_hidden_by_a_late_sleep_earns_nothing() -> None:
    task = next(t for t in load_repo_suite("perfgym-repos") if t.id == "peakscan")
    checked = check_task(task)
    try:
        ev = evaluate_patch(checked.task, PATCH.read_text(), checked.original, rounds=3,
                            repeats=0)  # fmt: skip
    finally:
        checked.remove()
    assert ev.tests_passed, ev.error  # the patch is correct: only the clock is played
    assert ev.hacks.flagged or ev.adjusted_speedup <= 1.1, (ev.speedup, ev.ci, ev.hacks.kinds())
