"""A warm Python worker without a cgroup of its own (no writable hierarchy, or, before the
names carried a start time, its name taken by a dead worker's whose PID came back): its calls
still run, metered by rusage. It failed every function call with "the worker sent no
arguments", blamed on the program (the load and fault test's rare NR, reproduced)."""

from __future__ import annotations

import os

import pytest

from perfgym.sandbox import Status
from perfgym.sandbox import worker_cgroup as wc
from perfgym.sandbox.pyworker import PythonWorker


@pytest.fixture(scope="module")
def cgroupless():
    real = wc.WorkerCgroup.create
    wc.WorkerCgroup.create = classmethod(lambda cls: (None, "turned off by the test"))  # type: ignore[method-assign]
    try:
        w = PythonWorker()
        w.call("def f():\n    return 0\n", "f", [])  # started while create says no
    finally:
        wc.WorkerCgroup.create = real  # type: ignore[method-assign]
    yield w
    w.close()


def test_calls_run_and_are_metered_by_rusage(cgroupless):
    r = cgroupless.call("def f(x):\n    return sum(range(x))\n", "f", [10_000])
    assert r.status is Status.OK, r.error
    assert r.value == sum(range(10_000))
    assert "rusage" in r.cpu_mechanism and r.cpu_s > 0
    wrong = cgroupless.call("def f(x):\n    raise ValueError(x)\n", "f", [7])
    assert wrong.status is Status.RUNTIME_ERROR and "ValueError: 7" in wrong.error


def test_a_dead_workers_cgroup_is_not_taken_for_a_live_ones_when_its_pid_comes_back(tmp_path):
    me, ticks = os.getpid(), wc.start_ticks(os.getpid())
    assert ticks
    names = {
        f"worker-{me}-{int(ticks) - 1}-0": False,  # this PID, another process's start: stale
        f"worker-{me}-{ticks}-0": True,  # this process's: kept
        "worker-4194999-0": False,  # an older perfgym's name, its PID gone: stale
        f"worker-{me}-3": True,  # an older perfgym's name, its PID alive: kept
        "unrelated": True,
    }
    for name in names:
        (tmp_path / name).mkdir()
    wc._remove_stale(str(tmp_path))
    assert {n: (tmp_path / n).exists() for n in names} == names
    made, why = wc.WorkerCgroup.create()
    if made is None:
        pytest.skip(f"no cgroup here: {why}")
    try:
        assert os.path.basename(made.path).startswith(f"worker-{me}-{ticks}-")
    finally:
        made.destroy()
