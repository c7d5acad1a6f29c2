"""Every run and every warm Python worker is one CFS scheduling entity: threads a program
starts buy it no larger share of a core that another process also wants.

Without a `cpu` cgroup each thread is an entity of its own (unless the kernel's session
autogroups are on: then each session is one). Measured here with autogroups off: the
two-thread modular sum of `tests/fixtures/threads` and its serial twin, run by the warm sandbox
pinned to one core beside a spinning process, took 27.0 ms against 33.1 ms (1.23x faster with
the same work); each run in a `cpu` group of its own, 34.4 ms against 32.5 ms. The checks
below are on the mechanism (which group a run is in), not on times."""

import os
import sys

import pytest

from perfgym.sandbox import Status, cgroups
from perfgym.sandbox.pyworker import PythonWorker

pytestmark = pytest.mark.skipif(cgroups.detect() is None, reason="no writable cgroup hierarchy")

READ_CGROUP = "print(open('/proc/self/cgroup').read())"


def _sched_group(proc_cgroup: str) -> str:
    """The cgroup whose scheduling entity a process is: v1's `cpu` line, or v2's one path."""
    for line in proc_cgroup.splitlines():
        _hier, ctrls, path = line.split(":", 2)
        if cgroups.detect() == "v1" and "cpu" in ctrls.split(","):
            return path
        if cgroups.detect() == "v2" and ctrls == "":
            return path
    raise AssertionError(f"no scheduling cgroup in {proc_cgroup!r}")


def _has_cpu_controller(path: str) -> bool:
    if cgroups.detect() == "v1":
        return True  # the line came from the cpu hierarchy itself
    with open(os.path.join(cgroups.ROOT, path.lstrip("/"), "cgroup.controllers")) as f:
        return "cpu" in f.read().split()


def test_a_run_is_a_scheduling_group_of_its_own(sandbox):
    outer = _sched_group(open("/proc/self/cgroup").read())
    ex = sandbox.run([sys.executable, "-c", READ_CGROUP])
    assert ex.status is Status.OK, ex.reason
    inner = _sched_group(ex.stdout.decode())
    assert inner != outer and "/perfgym" in inner and "run-" in inner, inner
    assert _has_cpu_controller(inner)


def test_a_python_worker_is_a_scheduling_group_of_its_own():
    outer = _sched_group(open("/proc/self/cgroup").read())
    worker = PythonWorker()
    try:
        r = worker.call("def f():\n    return open('/proc/self/cgroup').read()\n", "f")
    finally:
        worker.close()
    assert r.status is Status.OK, r
    inner = _sched_group(r.value)
    assert inner != outer and "/perfgym" in inner and "worker-" in inner, inner
    assert _has_cpu_controller(inner)
