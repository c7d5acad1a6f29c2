"""A process of ours killed from outside before it dropped to the program's uid is an
infrastructure failure (retried), never the program's verdict; a program that kills itself
after the drop keeps its own failure (it cannot buy a retry of its penalty)."""

import os
import signal
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "service"))
from service_helpers import kill_if_root, uid_of  # noqa: E402

from perfgym.sandbox import Limits, Status
from perfgym.sandbox.pyworker import PythonWorker
from perfgym.sandbox.request import decode

INSIDE = os.path.join(os.path.dirname(__import__("perfgym.sandbox").sandbox.__file__), "_inside")
sys.path.insert(0, INSIDE)
import supervisor  # noqa: E402
import worker_child  # noqa: E402

NOBODY = 65534

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="dropping to another uid needs root")


def _child(then_drop: bool, how: str) -> int:
    """Fork a child that (after dropping to NOBODY when `then_drop`) ends as `how` says; the
    parent waits until it is a zombie and returns its pid, unreaped."""
    pid = os.fork()
    if pid == 0:
        try:
            if then_drop:
                os.setresgid(NOBODY, NOBODY, NOBODY)
                os.setresuid(NOBODY, NOBODY, NOBODY)
            if how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            os._exit(3)
        finally:
            os._exit(4)
    deadline = time.monotonic() + 10
    while os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        assert time.monotonic() < deadline
        time.sleep(0.001)
    return pid


@pytest.mark.parametrize("check", ["worker", "supervisor"])
@pytest.mark.parametrize(
    ("then_drop", "how", "ours"),
    [(False, "kill", True), (True, "kill", False), (False, "exit", False), (True, "exit", False)],
)
def test_only_a_kill_before_the_drop_is_ours(check, then_drop, how, ours):
    pid = _child(then_drop, how)
    try:
        if check == "worker":
            assert worker_child.killed_before_confined(pid, NOBODY) is ours
        else:
            assert supervisor._killed_before_drop(pid, NOBODY) is ours
        # the peek never reaps: the caller still gets the exit status
        _, status = os.waitpid(pid, os.WNOHANG)
        assert os.WIFSIGNALED(status) if how == "kill" else os.WEXITSTATUS(status) == 3
    finally:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


def test_without_a_drop_no_death_is_ours():
    """A run that keeps the supervisor's uid (no `uid` in its spec), or a worker whose calls
    run as root: a self-kill cannot be told apart from an outside one, so it is the program's."""
    pid = _child(False, "kill")
    try:
        assert not supervisor._killed_before_drop(pid, None)
        assert not supervisor._killed_before_drop(pid, 0)
        assert not worker_child.killed_before_confined(pid, 0)
    finally:
        os.waitpid(pid, 0)


def test_a_running_child_is_not_judged():
    pid = os.fork()
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    try:
        assert not worker_child.killed_before_confined(pid, NOBODY)
        assert not supervisor._killed_before_drop(pid, NOBODY)
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def test_a_supervisor_result_killed_before_the_drop_decodes_to_a_sandbox_error():
    res = {"pid_status": signal.SIGKILL, "killed_before_drop": True, "wall_s": 0.01,
           "cpu_user_s": 0.0, "cpu_system_s": 0.0, "peak_rss_mb": 1.0,
           "memory_integral_mb_s": 0.0, "samples": 1, "stdout": "", "stderr": ""}  # fmt: skip
    ex = decode(res, limits=Limits(), backend="bwrap", cgroup=None, sample_rate_hz=500.0)
    assert ex.status is Status.SANDBOX_ERROR and "before it dropped" in ex.reason
    res["killed_before_drop"] = False
    ex = decode(res, limits=Limits(), backend="bwrap", cgroup=None, sample_rate_hz=500.0)
    assert ex.status is Status.RUNTIME_ERROR


SELF_KILL = "import os, signal\ndef f():\n    os.kill(os.getpid(), signal.SIGKILL)\n"
SELF_KILL_PROGRAM = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"


@pytest.fixture(scope="module")
def worker():
    w = PythonWorker()
    yield w
    w.close()


def test_a_call_that_kills_itself_keeps_its_failure(worker):
    r = worker.call(SELF_KILL, "f")
    assert r.status is Status.RUNTIME_ERROR and "SIGKILL" in r.error


def test_a_program_that_kills_itself_keeps_its_failure(worker, sandbox):
    r = worker.run_program(SELF_KILL_PROGRAM, argv=["prog.py"], limits=Limits())
    assert r.status is Status.RUNTIME_ERROR
    ex = sandbox.run(["python3", "prog.py"], files={"prog.py": SELF_KILL_PROGRAM})
    assert ex.status is Status.RUNTIME_ERROR and ex.signal == signal.SIGKILL


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except (OSError, ValueError):
        return []


def _call_children(zygote: int) -> list[tuple[int, int]]:
    """The processes of a call, each with its call's key: a function call's child is the
    zygote's own (its key is itself); an assertion call's or a batch's are their request
    process's (one such process a call: its key), told apart (and never killed here) by the
    CAP_SYS_ADMIN it dropped from its bounding set at its start."""
    found = []
    for pid in _children(zygote):
        try:
            with open(f"/proc/{pid}/status") as f:
                bounding = next(
                    int(line.split()[1], 16) for line in f if line.startswith("CapBnd:")
                )
        except (OSError, StopIteration, ValueError):
            continue
        found += [(pid, pid)] if bounding & (1 << 21) else [(pid, c) for c in _children(pid)]
    return found


def _one_call(w: PythonWorker, mode: str) -> Status:
    if mode == "call":
        return w.call("def f(x):\n    return x + 1\n", "f", [1]).status
    if mode == "check":
        check = "def check(candidate):\n    assert candidate(1) == 2\n"
        return w.check_call("def f(x):\n    return x + 1\n", check, "f").status
    r = w.batch("def f(x):\n    return x + 1\n", "f", [([1], Limits()), ([2], Limits())], Limits())
    if r.status is not Status.OK:
        return r.status
    bad = [c.status for c in r.cases if c.status is not Status.OK]
    return bad[0] if bad else Status.OK


@pytest.mark.parametrize("mode", ["call", "batch", "check"])
def test_a_call_child_killed_before_its_drop_is_a_sandbox_error_not_a_verdict(mode):
    """A thread watches the worker's call children (bubblewrap, the zygote, a request process,
    its child) and SIGKILLs one while it still has uid 0: stopped first and its uid read again,
    so the program itself is never the one killed. Every such call must come back as the
    worker's failure (SANDBOX_ERROR, which the judge and the service retry), never as the
    program's RUNTIME_ERROR."""
    import threading

    w = PythonWorker()
    hits: list[int] = []
    stop = threading.Event()

    def killer() -> None:
        # One kill a call: an assertion call's two processes are both root for a moment, and
        # killing both made two hits of one SANDBOX_ERROR (full69: 4 hits, 2 errors).
        while not stop.is_set() and len(hits) < 3:
            proc = w._proc
            if proc is None:
                continue
            for zygote in _children(proc.pid):
                for call, child in _call_children(zygote):
                    if call in hits or uid_of(child) != 0:
                        continue
                    if kill_if_root(child):
                        hits.append(call)

    t = threading.Thread(target=killer, daemon=True)
    statuses: list[Status] = []
    try:
        w.call("def f():\n    return 1\n", "f")  # started before the watch begins
        t.start()
        deadline = time.monotonic() + 60
        while len(hits) < 3 and time.monotonic() < deadline:
            statuses.append(_one_call(w, mode))
    finally:
        stop.set()
        t.join()
        w.close()
    assert Status.RUNTIME_ERROR not in statuses, statuses.count(Status.RUNTIME_ERROR)
    if not hits:
        pytest.skip(f"no call child was caught before its drop in {len(statuses)} calls")
    assert statuses.count(Status.SANDBOX_ERROR) >= len(hits) - 1  # the last may land after
