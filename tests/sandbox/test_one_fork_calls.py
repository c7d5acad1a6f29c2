"""A function call costs one fork: its child is the zygote's, the request process lives on from
call to call, and a call of another mode is handed to a fresh request process (issue 31)."""

from __future__ import annotations

import os
import socket
import sys

import pytest
from proc_children import children

from perfgym.sandbox import Limits, Status
from perfgym.sandbox.pyworker import PythonWorker

CHECK = "def check(candidate):\n    assert candidate(1) == 2\n"
INC = "def f(x):\n    return x + 1\n"
#: What a call sees of the worker: its parent's pid, and every process /proc shows it.
VIEW = (
    "import os\n"
    "def f():\n"
    "    return os.getppid(), sorted(int(p) for p in os.listdir('/proc') if p.isdigit())\n"
)


@pytest.fixture(scope="module")
def worker():
    w = PythonWorker()
    yield w
    w.close()


def _request_process(w: PythonWorker) -> int:
    """From the host: the zygote's child that dropped CAP_SYS_ADMIN from its bounding set."""
    assert w._proc is not None
    (zygote,) = children(w._proc.pid)
    found = []
    for pid in children(zygote):
        with open(f"/proc/{pid}/status") as f:
            bounding = next(int(ln.split()[1], 16) for ln in f if ln.startswith("CapBnd:"))
        if not bounding & (1 << 21):
            found.append(pid)
    assert len(found) == 1, found
    return found[0]


def test_a_function_calls_child_is_the_zygotes_and_the_request_process_lives_on(worker):
    r = worker.call(VIEW, "f", [])
    parent, pids = r.value
    assert parent == 1  # the zygote, PID 1 of the worker's sandbox
    assert len(pids) == 1  # itself alone: the zygote and the request process are hidden
    request = _request_process(worker)
    for i in range(5):
        assert worker.call(INC, "f", [i]).value == i + 1
        assert _request_process(worker) == request  # the same one, call after call


def test_another_mode_is_handed_to_a_fresh_request_process(worker):
    worker.call(INC, "f", [1])
    request = _request_process(worker)
    r = worker.check_call(INC, CHECK, "f")
    assert r.status is Status.OK, r
    assert worker.call(INC, "f", [1]).value == 2
    assert _request_process(worker) != request  # the long-lived one passed the check on and ended
    assert worker.run_program("print(6 * 7)\n").stdout == b"42\n"
    b = worker.batch(INC, "f", [([1], Limits()), ([2], Limits())], Limits())
    assert [c.value for c in b.cases] == [2, 3]
    assert worker.call(INC, "f", [41]).value == 42
    assert worker.stats()["restarts"] == 0 and worker.stats()["failed_cleanups"] == 0


def test_cached_code_keeps_each_calls_file_name(worker):
    bad = "def f():\n    raise ValueError('x')\n"
    for name in ("one.py", "two.py", "one.py"):
        r = worker.call(bad, "f", [], filename=name)
        assert r.status is Status.RUNTIME_ERROR and "ValueError" in r.error
    r = worker.call("import traceback\ndef f():\n    return traceback.extract_stack()[-1].filename\n",
                    "f", [], filename="three.py")  # fmt: skip
    assert r.value == "three.py"


def test_a_compile_error_is_the_programs_and_the_worker_goes_on(worker):
    r = worker.call("def f(:\n", "f", [])
    assert (r.status, r.phase) == (Status.RUNTIME_ERROR, "compile") and "SyntaxError" in r.error
    assert worker.call(INC, "f", [1]).value == 2


def test_a_calls_orphans_are_reaped_and_counted(worker):
    burner = (
        "import os, time\n"
        "def f():\n"
        "    if os.fork() == 0:\n"
        "        while True:\n"
        "            pass\n"
        "    time.sleep(0.3)\n"
        "    return 1\n"
    )
    r = worker.call(burner, "f", [], limits=Limits(wall_s=10, max_processes=4))
    assert r.status is Status.OK
    assert "outlived_main" in r.flags
    assert r.cpu_s > 0.03  # the orphan's loop while the call slept (killed after): the call's
    assert len(worker.call(VIEW, "f", []).value[1]) == 1  # the orphan is gone


def test_a_call_that_moves_its_arguments_file_offset_harms_no_later_call(worker):
    """The arguments memfd's offset is shared with the request process: seeking it past the end
    once made the hand-over fail (SANDBOX_ERROR, the program's doing), and leaked 8 descriptors
    of the long-lived request process a call, until every later call failed (red team rt65)."""
    seek = (
        "import os\n"
        "for fd in os.listdir('/proc/self/fd'):\n"
        "    try:\n"
        "        if 'memfd:args' in os.readlink('/proc/self/fd/' + fd):\n"
        "            os.lseek(int(fd), 2**63 - 2, os.SEEK_SET)\n"
        "    except OSError:\n"
        "        pass\n"
        "def f(x):\n"
        "    return x\n"
    )
    for i in range(150):
        assert worker.call(seek, "f", [i]).value == i
    assert worker.call(INC, "f", [1]).value == 2
    assert worker.stats()["restarts"] == 0


def test_the_compile_cache_keeps_each_memory_allowance(worker):
    """A source whose compiling needs more memory than a call allows fails to compile under
    that allowance, whether or not a call with a larger one compiled it before (rt65)."""
    big = (
        "X = ["
        + ",".join(f"({i},{i}.5,'s{i}')" for i in range(60000))
        + "]\ndef f():\n    return len(X)\n"
    )  # noqa: E501
    small, large = Limits(wall_s=20.0, memory_mb=20), Limits(wall_s=20.0, memory_mb=2000)
    first = worker.call(big, "f", [], limits=small)
    assert (first.status, first.phase) == (Status.RUNTIME_ERROR, "compile"), first
    assert worker.call(big, "f", [], limits=large).value == 60000
    again = worker.call(big, "f", [], limits=small)
    assert (again.status, again.phase) == (Status.RUNTIME_ERROR, "compile"), again


# -- the zygote's commands, in this process: the protocol alone --------------------------------

INSIDE = os.path.join(os.path.dirname(__import__("perfgym").__file__), "sandbox", "_inside")


@pytest.fixture()
def commands():
    sys.path.insert(0, INSIDE)
    try:
        import zygote_commands
    finally:
        sys.path.remove(INSIDE)
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    import _socket

    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET, 0, mine.detach())
    served = zygote_commands.Commands(conn, request_pid=-5, uid=os.getuid(), child_main=None)
    yield zygote_commands, served, theirs
    theirs.close()


def _ask(theirs: socket.socket, served, msg: bytes) -> list[int]:
    theirs.send(msg)
    theirs.send(b"g")  # then "go", so that `serve` returns after answering
    assert served.serve() == ("go", -1)
    return [int(x) for x in theirs.recv(256).split()]


def test_malformed_commands_get_an_error_and_the_zygote_goes_on(commands):
    zc, served, theirs = commands
    assert _ask(theirs, served, b"z")[:2] == [-1, 0]  # an unknown command
    assert _ask(theirs, served, zc.REAP + b"1")[:2] == [-1, 0]  # never the zygote itself
    assert _ask(theirs, served, zc.REAP + b"x")[:2] == [-1, 0]  # not a pid
    assert _ask(theirs, served, zc.SPAWN)[:2] == [-1, 0]  # a spawn without its descriptors
    hello = _ask(theirs, served, zc.HELLO)
    assert len(hello) == 1 and hello[0] > 0  # the zygote's CPU, nothing else


def test_the_zygote_ends_when_its_request_process_does(commands):
    _, served, theirs = commands
    theirs.close()
    assert served.serve() == ("end", -1)


def test_a_hung_worker_is_stopped_by_the_hosts_backstop(monkeypatch):
    """Whatever hangs a worker (here its zygote, stopped from outside before a call), the host
    never waits past the request's backstop: the call is the worker's failure, and the next
    call gets a fresh worker."""
    import signal
    import time

    from perfgym.sandbox.pyworker import framing

    monkeypatch.setattr(framing, "REPLY_GRACE_S", 1.0)
    w = PythonWorker()
    try:
        assert w.call(INC, "f", [1]).value == 2
        assert w._proc is not None
        (zygote,) = children(w._proc.pid)
        os.kill(zygote, signal.SIGSTOP)
        t0 = time.monotonic()
        r = w.call(INC, "f", [1], limits=Limits(wall_s=1))
        assert r.status is Status.SANDBOX_ERROR and "timed out" in r.error, r
        assert time.monotonic() - t0 < 30  # 1 s of grace and twice the wall limit, not forever
        assert w.call(INC, "f", [2]).value == 3
        assert w.stats()["restarts"] >= 1
    finally:
        w.close()
