"""Red team of the repository clock's parallel-work check (helper-45): a peakscan
patch that scans half of each window in a forked child (reaped inside the timed call) and then
sleeps in `sys.stdout.flush()` after the call's end stamp. The check judged CPU beyond the wall
over the workload process's whole life, so the idle second after the counted window dilutes
the parallel CPU to nothing: measured 1.21x and 1.22x, significant, no finding (the same fork
without the sleep: 1.34x unflagged once, 0.025-0.043 s of parallel CPU, under the 0.05 s floor).
The old ratio rule missed it too (the original's own ratio, 1.3-1.5 from numpy's threads, was
above its 1.2 cut-off). Fixed: the timer reads the run's cgroup CPU over the counted time, and
parallel CPU a patch adds is charged to its time (0.76-0.97x after, measured on this attack and
helper-46's forked-helper variants, which the same fix closes: `tests/repos/`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfgym.repos.checks import check_task
from perfgym.repos.evaluate import evaluate_patch
from perfgym.repos.loading import load_repo_suite

PATCHES = Path(__file__).parent / "patches"


@pytest.fixture(scope="module")
def peakscan():  # type: ignore[no-untyped-def]
    """peakscan checked once for both patches (each made its own: ~4 s of a test run alone)."""
    task = next(t for t in load_repo_suite("perfgym-repos") if t.id == "peakscan")
    checked = check_task(task)
    yield checked
    checked.remove()


@pytest.mark.alone
@pytest.mark.parametrize("patch", [
    # helper-45: half of each scan in a child reaped inside the call, then a sleep after H
    "peakscan_fork_half_then_sleep.diff",
    # helper-46: the far half of long scans in forked helpers that write their part to /tmp and
    # SIGKILL themselves; the kernel reaps the first ~38 ms of them itself (SIGCHLD ignored),
    # the rest are waited for. Before the cgroup window and the difference test: 1.18-1.67x in
    # 5 of 6 evaluations, unflagged and uncharged; after: 0.76-0.84x, charged 51-65 ms a run.
    "peakscan_forked_helpers_autoreaped_then_waited.diff",
])  # fmt: skip
def test_work_forked_beside_the_call_earns_nothing(patch: str, peakscan) -> None:  # type: ignore[no-untyped-def]
    ev = evaluate_patch(peakscan.task, (PATCHES / patch).read_text(), peakscan.original, rounds=3,
                        repeats=0)  # fmt: skip
    assert ev.tests_passed, ev.error  # the patch is correct: only the clock is played
    got = (ev.speedup, ev.ci, ev.hacks.kinds())
    assert ev.hacks.flagged or not ev.accepted, got
    # Its figure too, where the measurement decided anything: full78 measured 1.11x with a CI
    # of 0.31-3.92 (a slower machine's noisy moment), as consistent with 0.3x as with 3.9x.
    assert ev.hacks.flagged or ev.adjusted_speedup <= 1.1 or (ev.ci and ev.ci[0] < 1.0), got
