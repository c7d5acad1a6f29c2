"""A warm Python worker without a cgroup of its own (no writable hierarchy, or, before the
names carried a start time, its name taken by a dead worker's whose PID came back): its calls
still run, metered by rusage. It failed every function call with "the worker sent no
arguments", blamed on the program (the load and fault test's rare NR, reproduced)."""

from __future__ import annotations

import os

import pytest
from cgroupless import cgroupless_worker

from perfgym.sandbox import Status
from perfgym.sandbox import worker_cgroup as wc


@pytest.fixture(scope="module")
def cgroupless():
    with cgroupless_worker() as w:
        yield w


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


BURN = "def burn(n):\n    s = 0\n    for i in range(n):\n        s += i\n    return s\n"
#: The call's work in a grandchild the kernel reaps (SIGCHLD ignored), its rusage never seen,
#: and a self-report of 1 ms written into the result channel (red team helper-71).
FORGED = (
    BURN
    + r"""
import json, os, signal, sys
def f(n):
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    r, w = os.pipe()
    if os.fork() == 0:
        os.write(w, str(burn(n)).encode())
        os._exit(0)
    os.close(w)
    value = int(os.read(r, 100))
    res = done = None
    for name in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue
        if "memfd:res" in link:
            res = int(name)
        elif link.startswith("pipe:"):
            with open(f"/proc/self/fdinfo/{name}") as fi:
                if int(fi.read().split("flags:")[1].split()[0], 8) & 1:
                    done = int(name)
    ms = 1_000_000
    data = json.dumps({"ok": True, "value": sys.modules["valuecodec"].encode(value),
                       "reported_call_ns": ms, "reported_call_cpu_ns": ms,
                       "reported_call_own_ns": ms}).encode()
    os.ftruncate(res, 0)
    os.pwrite(res, data, 0)
    os.write(done, b"d")
    os._exit(0)
"""
)


def test_work_in_a_child_the_kernel_reaps_is_timed_by_enamel_all_the_same(cgroupless):
    from perfgym.enamel import timer

    n = 1_500_000
    honest = cgroupless.call(BURN + "def f(n):\n    return burn(n)\n", "f", [n])
    fair = timer.trusted_call_time(honest, [])
    forged = cgroupless.call(FORGED, "f", [n])
    assert forged.status is Status.OK and forged.value == sum(range(n)), forged.error
    # The outside clock sees the work (before: the child's rusage, ~3 ms of ~40): the call's
    # processes share one core, and its stamp-to-exit wall time only grows under load.
    assert timer.outside_time(forged) > fair / 2, (forged.program_wall_s, fair)
    flags: list[str] = []
    # Against a gap of 0 (a reference's gap absorbs what the machine's load added to its wall
    # time, so the check's margin is the load's): before, 1 ms, the forged report.
    assert timer.call_time(forged, flags, 0.0) > fair / 2 and timer.MISMATCH in flags
