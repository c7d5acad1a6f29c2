"""A harness that reports 0 (or under its clock's resolution) is flagged and timed by the
sandbox's clock instead: never an exception, and never a free speed-up."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from perfgym.judge import Candidate, Judge, JudgeConfig, Stage
from perfgym.judge.validate import validate_task
from perfgym.tasks import load_suite

FIXTURES = Path(__file__).parents[1] / "fixtures" / "perfcodebench" / "executable_tasks"
ZERO_CLOCK = "import time\ntime.perf_counter_ns = lambda: 0  # the harness now reads 0\n"


@pytest.fixture
def visible_dir() -> Iterator[Path]:
    """A scratch directory sandboxed runs can read (they do not see the host's /tmp)."""
    path = Path(tempfile.mkdtemp(prefix=".scratch-", dir=FIXTURES.parent))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_a_zeroed_timer_falls_back_to_the_sandbox_clock_and_gains_nothing(
    visible_dir: Path,
) -> None:
    """Can a cheaper program score higher? A harness whose clock reads 0 reports elapsed_ns = 0;
    the measurement falls back to the sandbox's clock for every variant, so a candidate is timed
    as the program it is (no 0-second 'speed-up', no exception). (A candidate can no longer zero
    its harness's clock: it runs in a process of its own, perfgym_split.py.)"""
    root = visible_dir / "tasks"
    shutil.copytree(FIXTURES / "py_range_sums", root / "py_range_sums")
    bench = root / "py_range_sums" / "harness" / "bench.py"
    bench.write_text(bench.read_text().replace("import time\n", ZERO_CLOCK, 1))
    task = load_suite(root, tasks=["py_range_sums"]).get("py_range_sums")
    with Judge(JudgeConfig(repeats=3, measure_reference=False, cores=[0])) as judge:
        (v,) = judge.judge_many([Candidate(task, source=task.baseline.source, model="same")])
    assert v.stage is Stage.OK
    assert v.candidate is not None and v.baseline is not None
    assert "harness_below_resolution" in v.candidate.flags
    assert "harness_below_resolution" in v.baseline.flags
    assert v.candidate.clock == v.baseline.clock != "harness"
    assert v.candidate.estimate_s is not None and v.candidate.estimate_s > 0.01
    # The same program as the baseline: not faster by more than noise on a shared machine.
    assert v.candidate.estimate_s > 0.5 * (v.baseline.estimate_s or 0)


def test_validate_survives_a_harness_that_reports_zero(visible_dir: Path) -> None:
    """Both solutions of a task whose harness prints elapsed_ns = 0: validate decides from the
    sandbox's clock (before: compare() raised on non-positive durations)."""
    root = visible_dir / "executable_tasks"
    shutil.copytree(FIXTURES / "py_range_sums", root / "py_range_sums")
    bench = root / "py_range_sums" / "harness" / "bench.py"
    bench.write_text(bench.read_text().replace("import time\n", ZERO_CLOCK, 1))
    task = load_suite(root).get("py_range_sums")
    with Judge(JudgeConfig(repeats=3, cores=[0])) as judge:
        row = validate_task(judge, task)
    assert all(c.stage is Stage.OK for c in row.solutions), row
    assert row.comparison is not None and row.speedup is not None and row.speedup > 1
