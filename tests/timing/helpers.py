"""Real programs and machine conditions for the timing tests (no mocks: they run for real)."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from collections.abc import Iterator

from perfgym.tasks.task import Language, Oracle, Solution, Task, TaskKind, TestCase

# A stdio program summing i*i mod 7 over range(n), `passes` times: cost ∝ n · passes.
_LOOP = (
    "import sys\nn = int(sys.stdin.read())\ns = 0\nfor _ in range({passes}):\n"
    "    s = 0\n    for i in range(n):\n        s += i * i % 7\nprint(s)\n"
)


def loop_program(passes: int) -> str:
    return _LOOP.format(passes=passes)


# The same answer as `loop_program`, plus (factor - 1) · n iterations of wasted work.
_WASTE = (
    "import sys\nn = int(sys.stdin.read())\ns = 0\nfor i in range(n):\n    s += i * i % 7\n"
    "w = 0\nfor i in range(int(n * {extra})):\n    w += i * i % 7\nprint(s)\n"
)


def ladder_task(task_id: str, factors: list[float], size: int) -> Task:
    """A stdio task whose solutions cost factors[k] · size iterations; all print one answer.
    The fastest and the slowest are the task's references (re-measured for calibration)."""
    sols = [Solution(label=f"x{f:g}", source=_WASTE.format(extra=f - 1)) for f in factors]
    return Task(
        id=task_id,
        family="ladder",
        language=Language.PYTHON,
        kind=TaskKind.STDIO,
        baseline=sols[-1],
        references=[sols[0]],
        pool=sols[1:-1],
        tests=[TestCase(id="t1", stdin="10", expected=str(sum(i * i % 7 for i in range(10))))],
        workloads=[TestCase(id="w", stdin=str(size))],
        oracle=Oracle(kind="tokens"),
        time_limit_s=60,
    )


def graded_task(task_id: str, passes: list[int], sizes: list[int]) -> Task:
    """A stdio task whose solutions differ only in work: solution k does `passes[k]` passes."""
    sols = [Solution(label=f"s{p}", source=loop_program(p), quality=-p) for p in passes]
    return Task(
        id=task_id,
        family="graded",
        language=Language.PYTHON,
        kind=TaskKind.STDIO,
        baseline=sols[-1],
        references=[sols[0]],
        pool=sols[1:-1],
        tests=[TestCase(id="t1", stdin="10", expected=str(sum(i * i % 7 for i in range(10))))],
        workloads=[TestCase(id=f"w{n}", stdin=str(n)) for n in sizes],
        oracle=Oracle(kind="tokens"),
        time_limit_s=60,
    )


def function_task(task_id: str, baseline: str, reference: str, n: int) -> Task:
    """A function task: `solve(n)` returns sum(i*i % 7 for i < n)."""
    return Task(
        id=task_id,
        family="calls",
        language=Language.PYTHON,
        kind=TaskKind.FUNCTION,
        entry_point="solve",
        baseline=Solution(label="baseline", source=baseline),
        references=[Solution(label="reference", source=reference)],
        tests=[TestCase(id="t1", args=[10], expected=sum(i * i % 7 for i in range(10)))],
        workloads=[TestCase(id="w1", args=[n])],
        oracle=Oracle(kind="exact"),
        time_limit_s=30,
    )


_SPIN = (
    "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\n"
    "print('ready', flush=True)\nwhile True:\n    pass\n"
)


@contextlib.contextmanager
def busy(core: int, processes: int = 1) -> Iterator[list[int]]:
    """`processes` CPU-bound loops pinned to `core` (already spinning there on entry)."""
    # Each in its own session: with autogroup scheduling, processes of one session share one
    # group's slice, so n loops in one session would slow a run no more than one loop does.
    procs = [subprocess.Popen([sys.executable, "-c", _SPIN, str(core)], stdout=subprocess.PIPE,
                              start_new_session=True) for _ in range(processes)]  # fmt: skip
    try:
        for p in procs:
            assert p.stdout is not None and p.stdout.readline() == b"ready\n"
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            p.send_signal(signal.SIGKILL)
            p.wait()


#: Above this many runnable processes (besides the test's own) other work decides wall times.
QUIET_LOAD = 4.0


def runnable_now(seconds: float = 0.5, samples: int = 10) -> float:
    """The mean count of runnable processes over `seconds`, from /proc/loadavg, less this one.

    Not the 1-minute load average: a test marked `alone` starts right after the other xdist
    worker stopped, and the minute's average still counts that worker's work.
    """
    import time

    counts = []
    for _ in range(samples):
        with open("/proc/loadavg") as f:
            counts.append(int(f.read().split()[3].split("/")[0]) - 1)
        time.sleep(seconds / samples)
    return sum(counts) / len(counts)


def require_quiet_machine() -> None:
    """Skip a wall-clock statistics test when the machine is busy with other work.

    These tests assert what repeated wall-clock timing can tell apart; on a 2-core machine
    already running several other jobs the answer is about those jobs. The runnable count is
    read when the test starts (its own measuring processes come after).
    """
    import pytest

    load = runnable_now()
    if load > QUIET_LOAD:
        pytest.skip(
            f"{load:.1f} processes runnable > {QUIET_LOAD}: wall-clock statistics would measure "
            "other jobs"
        )


def _jiffies() -> dict[int, tuple[int, int]]:
    """Per CPU: (busy, total) jiffies since boot, from /proc/stat (idle and iowait are idle)."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            name, *vals = line.split()
            if name.startswith("cpu") and name != "cpu":
                v = [int(x) for x in vals]
                out[int(name[3:])] = (sum(v) - v[3] - v[4], sum(v))
    return out


@contextlib.contextmanager
def busy_share(cores: list[int]) -> Iterator[list[float]]:
    """Measures how busy `cores` were during the block: on exit the yielded list holds the
    busy share (0-1) of their summed time. The share of cores a test does not measure on is
    what other jobs took there (plus the judge's own small share)."""
    got: list[float] = []
    before = _jiffies()
    try:
        yield got
    finally:
        after = _jiffies()
        busy = sum(after[c][0] - before[c][0] for c in cores)
        total = sum(after[c][1] - before[c][1] for c in cores)
        got.append(busy / total if total > 0 else 0.0)
