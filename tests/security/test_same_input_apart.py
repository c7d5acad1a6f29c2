"""No two measured runs have the same input at the same time (red team helper-91, /work/wt/rt91).

Copies of one program (a comment apart) given the same input at once met through a futex on a
shared file's page (keyed by the file, whatever the namespace), each counted half of
py-substring-count's patterns and swapped halves: 11 of 12 verdicts above their honest twin's
0.15 (mean 0.38), unflagged, under the training defaults. A lone copy falls back to the whole
work, so the attempt cost nothing. The measurement's lanes now never run two items with the
same input together, for every variant alike.
"""

from __future__ import annotations

import threading
import time

import pytest

from perfgym.judge.measure import _execute, input_of, schedule
from perfgym.tasks.task import TestCase


class _Variant:
    def __init__(self, label: str) -> None:
        self.label = label


def _observed(workloads: list[TestCase], lanes: int, variants: int = 6, rounds: int = 3):
    """Run the schedule of `variants` x `workloads` x `rounds` on `lanes` lanes with a run that
    records, at its start, the inputs running beside it; (overlaps, the most at once, result
    labels in item order, the items)."""
    items = schedule([_Variant(f"c{i}") for i in range(variants)], workloads, range(rounds), True)
    lock = threading.Lock()
    now: list[tuple[str, str]] = []
    clashes: list[tuple[str, str]] = []
    most = [0]

    def run(v, w, core):
        with lock:
            if input_of(w) in now:
                clashes.append(input_of(w))
            now.append(input_of(w))
            most[0] = max(most[0], len(now))
        time.sleep(0.004)
        with lock:
            now.remove(input_of(w))
        return (v.label, w.id, core)

    out = _execute(items, run, list(range(lanes)))
    return clashes, most[0], out, items


def test_runs_with_one_input_never_overlap_and_the_lanes_still_fill() -> None:
    two = [TestCase(id="w1", stdin="1 2\n"), TestCase(id="w2", stdin="3 4\n")]
    clashes, most, out, items = _observed(two, lanes=2)
    assert clashes == []
    assert most == 2  # the two lanes ran the two workloads side by side
    assert [(o[0], o[1]) for o in out] == [(i[2].label, i[3].id) for i in items]  # in order


def test_one_workload_is_measured_one_run_at_a_time() -> None:
    clashes, most, out, items = _observed([TestCase(id="w", stdin="x\n")], lanes=2)
    assert clashes == [] and most == 1 and len(out) == len(items)


def test_the_same_input_under_two_names_is_one_input() -> None:
    same = [TestCase(id="a", stdin="5\n"), TestCase(id="b", stdin="5\n")]
    clashes, most, _, _ = _observed(same, lanes=2)
    assert clashes == [] and most == 1


def test_a_failing_run_stops_the_lanes_and_is_raised() -> None:
    items = schedule([_Variant("c")], [TestCase(id="w1"), TestCase(id="w2", stdin="2")],
                     range(4), True)  # fmt: skip
    started = []

    def run(v, w, core):
        started.append(w.id)
        if len(started) == 2:
            raise RuntimeError("sandbox lost")
        time.sleep(0.002)
        return None

    with pytest.raises(RuntimeError, match="sandbox lost"):
        _execute(items, run, [0, 1])
    assert len(started) < len(items)


_JUDGE = """
import sys, time
from perfgym.judge.measure import _execute, schedule
from perfgym.tasks.task import TestCase

class V:
    label = "c"

spans = []
def run(v, w, core):
    t0 = time.monotonic_ns()
    time.sleep(0.02)
    spans.append((w.id, t0, time.monotonic_ns()))
    return w.id

items = schedule([V()], [TestCase(id="w", stdin="7\\n"), TestCase(id="u", stdin=sys.argv[1])],
                 range(6), True)
_execute(items, run, [0, 1])
print(repr(spans))
"""


def test_two_judges_on_one_machine_do_not_run_one_input_at_once(tmp_path) -> None:
    """Two processes measuring the same input ("w") and one each of their own: their runs of
    "w" never overlap (the machine-wide lock), their own inputs may run beside anything."""
    import ast
    import os
    import subprocess
    import sys

    env = {**os.environ, "PERFGYM_INPUT_LOCKS": str(tmp_path / "locks")}
    procs = [subprocess.Popen([sys.executable, "-c", _JUDGE, own], env=env, text=True,
                              stdout=subprocess.PIPE) for own in ("1\n", "2\n")]  # fmt: skip
    spans = [ast.literal_eval(p.communicate(timeout=60)[0].strip()) for p in procs]
    shared = [[(a, b) for wid, a, b in s if wid == "w"] for s in spans]
    assert all(len(s) == 6 for s in shared)
    for a0, a1 in shared[0]:
        for b0, b1 in shared[1]:
            assert a1 <= b0 or b1 <= a0, "two judges ran one input at once"
    assert len(os.listdir(tmp_path / "locks")) <= 3


def test_a_lock_held_by_a_stuck_process_is_waited_for_then_passed(tmp_path, monkeypatch) -> None:
    import fcntl
    import os

    from perfgym.judge import input_locks

    monkeypatch.setenv("PERFGYM_INPUT_LOCKS", str(tmp_path))
    monkeypatch.setattr(input_locks, "WAIT_S", 0.2)
    key = ("5\n", "None")
    path = input_locks.bucket_of(key)
    fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)  # someone else's
    t0 = time.monotonic()
    with input_locks.input_held(key) as held:
        assert not held and time.monotonic() - t0 >= 0.2
    os.close(fd)
    with input_locks.input_held(key) as held:
        assert held
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("PERFGYM_INPUT_LOCKS", str(tmp_path / "a-file"))
    with input_locks.input_held(key) as held:  # a directory it cannot make: runs without
        assert not held
