"""ptrace fails in a warm Python worker (seccomp): a call's process that made itself dumpable again
and had a child attach to it could not be reaped until that tracer went, and the tracer was
killed only by the cleanup that waited for the reap, so the worker hung past every wall limit
(red team rt65)."""

from __future__ import annotations

import errno
import platform
import threading

import pytest

from perfgym.sandbox import Limits, Status, WarmSandbox
from perfgym.sandbox.pyworker import PythonWorker

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="x86-64's numbers")

SEIZED = r"""
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
def f(x):
    libc.prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE, which the drop to the calls' uid cleared
    me = os.getpid()
    r, w = os.pipe()
    if os.fork() == 0:
        rc = libc.ptrace(0x4206, me, 0, 0)  # PTRACE_SEIZE the call's process
        os.write(w, b"%d %d" % (rc, ctypes.get_errno()))
        time.sleep(3600)  # and never waits for it
        os._exit(0)
    rc, err = os.read(r, 64).split()
    return x + 1, int(rc), int(err)
"""


def test_a_tracer_cannot_hang_the_worker_past_the_wall_limit() -> None:
    out: dict = {}
    w = PythonWorker()
    try:
        t = threading.Thread(target=lambda: out.update(r=w.call(SEIZED, "f", [1],
                             limits=Limits(wall_s=5, cpu_s=5, max_processes=4))), daemon=True)  # fmt: skip
        t.start()
        t.join(60)
        assert not t.is_alive(), "the worker hung on a traced call process"
        r = out["r"]
        assert r.status is Status.OK, r.error
        assert r.value == (2, -1, errno.ENOSYS)  # the seize failed: nothing traced
        assert w.call("def g():\n    return 7\n", "g").value == 7
    finally:
        w.close()


def test_ptrace_works_in_other_sandboxes() -> None:
    """The repository agent's profiler (py-spy) suspends what it samples with ptrace: only the
    worker refuses it."""
    probe = (
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "pid = os.fork()\n"
        "if pid == 0:\n    import time; time.sleep(5); os._exit(0)\n"
        "rc = libc.ptrace(0x4206, pid, 0, 0)\nprint(rc, ctypes.get_errno())\n"  # PTRACE_SEIZE
        "os.kill(pid, 9)\n"
    )
    with WarmSandbox() as sb:
        ex = sb.run(["python3", "/tmp/p.py"], files={"p.py": probe}, limits=Limits(wall_s=30))
    assert ex.status == Status.OK, ex.stderr_text[-300:]
    assert ex.stdout_text.split()[0] == "0", ex.stdout_text
