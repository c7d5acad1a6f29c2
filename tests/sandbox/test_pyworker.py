"""Warm Python workers: isolation between calls, limits, statuses and external timing."""

import pytest

from perfgym.sandbox import Limits, Status
from perfgym.sandbox.pyworker import PythonWorker, PythonWorkerPool

STATEFUL = """
import os
calls = []
def f(x):
    calls.append(x)
    with open('left-behind.txt', 'a') as fh:
        fh.write('x')
    return len(calls), sorted(os.listdir('.')), os.getuid()
"""


@pytest.fixture(scope="module")
def worker():
    w = PythonWorker()
    yield w
    w.close()


def test_module_state_and_files_do_not_leak(worker):
    first = worker.call(STATEFUL, "f", [1])
    second = worker.call(STATEFUL, "f", [2])
    assert first.status is Status.OK, first.error
    assert first.value[:2] == (1, ["left-behind.txt"])
    assert second.value[:2] == (1, ["left-behind.txt"])  # fresh module, fresh work dir
    assert first.value[2] != 0  # unprivileged


def test_processes_do_not_outlive_the_call(worker):
    spawn = (
        "import os, time\n"
        "def f():\n"
        "    if os.fork() == 0:\n"
        "        os.setsid()\n"
        "        time.sleep(60)\n"
        "    return 0\n"
    )
    assert worker.call(spawn, "f").status is Status.OK
    probe = "import os\ndef f():\n    return sorted(int(p) for p in os.listdir('/proc') if p.isdigit())\n"
    pids = worker.call(probe, "f").value
    assert len(pids) == 2  # the pristine parent (PID 1) and this call's child only


def test_statuses(worker):
    assert worker.call("def f(:\n", "f").phase == "compile"
    r = worker.call("def f():\n    raise KeyError('k')\n", "f")
    assert r.status is Status.RUNTIME_ERROR and "KeyError" in r.error
    r = worker.call("def f():\n    while True: pass\n", "f", limits=Limits(wall_s=0.5))
    assert r.status is Status.TIMEOUT
    r = worker.call("def f():\n    return bytearray(2**31)\n", "f", limits=Limits(memory_mb=64))
    assert r.status is Status.MEMORY_LIMIT
    r = worker.call("def f():\n    return object()\n", "f")
    assert r.status is Status.RUNTIME_ERROR and "cannot pass" in r.error
    r = worker.call("x = 1\n", "f")
    assert r.status is Status.RUNTIME_ERROR and "entry point" in r.error


def test_values_cross_exactly(worker):
    r = worker.call("def f(a, b):\n    return a, b, {1: {2.5}}, None\n", "f", [(1, "x"), b"\xff"])
    assert r.value == ((1, "x"), b"\xff", {1: {2.5}}, None)


def test_custom_eq_cannot_fool_the_host(worker):
    src = "class Liar(int):\n    def __eq__(self, o): return True\ndef f():\n    return Liar(3)\n"
    r = worker.call(src, "f")
    assert r.status is Status.RUNTIME_ERROR  # only exact builtin types cross


def test_external_time_covers_the_call(worker):
    r = worker.call("import time\ndef f():\n    time.sleep(0.2)\n", "f")
    assert r.wall_s >= 0.2 and r.reported_call_s is not None and r.reported_call_s >= 0.19


def test_pool_map_in_order():
    with PythonWorkerPool(size=2) as pool:
        out = pool.map([("def f(x):\n    return x * 2\n", "f", [i]) for i in range(20)])
    assert [r.value for r in out] == [i * 2 for i in range(20)]
