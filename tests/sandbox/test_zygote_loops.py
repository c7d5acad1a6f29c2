"""The zygote's command loop in C (`zygote_loop.c`) and in Python (`zygote_commands`): the same
protocol, the same replies, the same verdicts on real calls; the worker says which it runs."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import signal
import socket
import sys

import pytest

from perfgym.sandbox import Limits, Status, helper_build, zygote_ext
from perfgym.sandbox.pyworker import PythonWorker

INSIDE = os.path.join(os.path.dirname(__import__("perfgym").__file__), "sandbox", "_inside")
INC = "def f(x):\n    return x + 1\n"


def _c_module():
    path = zygote_ext.extension_path()
    if path is None:
        pytest.skip(f"no zygote C loop here: {zygote_ext.unavailable_reason()}")
    loader = importlib.machinery.ExtensionFileLoader("_perfgym_zygote", path)
    spec = importlib.util.spec_from_file_location("_perfgym_zygote", path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_the_loop_is_built_once_and_reused(tmp_path, monkeypatch):
    monkeypatch.setattr(zygote_ext, "HELPERS", tmp_path / "helpers")
    zygote_ext._built.cache_clear()
    try:
        path = zygote_ext.extension_path()
        if path is None:
            pytest.skip(f"no zygote C loop here: {zygote_ext.unavailable_reason()}")
        built = os.stat(path).st_mtime_ns
        zygote_ext._built.cache_clear()
        assert zygote_ext.extension_path() == path
        assert os.stat(path).st_mtime_ns == built  # not rebuilt
        assert [p.name for p in (tmp_path / "helpers").iterdir()] == [os.path.basename(path)]
    finally:
        zygote_ext._built.cache_clear()


def test_without_a_compiler_or_when_asked_the_zygote_keeps_its_python_loop(tmp_path, monkeypatch):
    monkeypatch.setattr(zygote_ext, "HELPERS", tmp_path / "empty")
    monkeypatch.setattr(helper_build.shutil, "which", lambda name: None)
    zygote_ext._built.cache_clear()
    try:
        assert zygote_ext.extension_path() is None
        assert "no C compiler" in zygote_ext.unavailable_reason()
        assert zygote_ext.extension_path("/usr/bin/not-this-python") is None
        assert "another interpreter" in zygote_ext.unavailable_reason()
    finally:
        zygote_ext._built.cache_clear()
    monkeypatch.setenv(zygote_ext.ENV, "0")
    assert zygote_ext.extension_path() is None
    assert zygote_ext.unavailable_reason() == f"{zygote_ext.ENV}=0"


class _PythonLoop:
    def __init__(self, conn: socket.socket, request_pid: int) -> None:
        sys.path.insert(0, INSIDE)
        try:
            import zygote_commands
        finally:
            sys.path.remove(INSIDE)
        self.served = zygote_commands.Commands(conn, request_pid, os.getuid(), None)

    def serve(self) -> tuple[str, int, int | None]:
        how, fd = self.served.serve()
        return how, fd, self.served.request_status


class _CLoop:
    def __init__(self, conn: socket.socket, request_pid: int) -> None:
        self.module, self.conn, self.request_pid = _c_module(), conn, request_pid

    def serve(self) -> tuple[str, int, int | None]:
        return self.module.serve(self.conn.fileno(), self.request_pid, os.getuid())


@pytest.fixture(params=["python", "c"])
def loop_factory(request):
    made = []

    def make(request_pid: int = -5):
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        made.extend((mine, theirs))
        kind = _PythonLoop if request.param == "python" else _CLoop
        return kind(mine, request_pid), theirs

    yield make
    for s in made:
        s.close()


def _ask(theirs: socket.socket, loop, msg: bytes) -> list[int]:
    theirs.send(msg)
    theirs.send(b"g")  # then "go", so that `serve` returns after answering
    assert loop.serve()[:2] == ("go", -1)
    return [int(x) for x in theirs.recv(256).split()]


def _exited_child(code: int) -> int:
    """A child of this process that exited with `code`, not yet reaped."""
    pid = os.fork()
    if pid == 0:
        os._exit(code)
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    return pid


def test_malformed_commands_get_an_error_and_the_loop_goes_on(loop_factory):
    loop, theirs = loop_factory()
    assert _ask(theirs, loop, b"z")[:2] == [-1, 0]  # an unknown command
    assert _ask(theirs, loop, b"r1")[:2] == [-1, 0]  # never the zygote itself
    assert _ask(theirs, loop, b"rx")[:2] == [-1, 0]  # not a pid
    assert _ask(theirs, loop, b"r")[:2] == [-1, 0]  # no pid at all
    assert _ask(theirs, loop, b"r-5")[:2] == [-1, 0]  # the request process itself
    assert _ask(theirs, loop, b"c")[:2] == [-1, 0]  # a spawn without its descriptors
    hello = _ask(theirs, loop, b"?")
    assert len(hello) == 1 and hello[0] > 0  # the loop's CPU, nothing else


def test_a_hand_over_without_its_one_descriptor_is_refused(loop_factory):
    loop, theirs = loop_factory()
    assert _ask(theirs, loop, b"h")[:2] == [-1, 0]
    r, w = os.pipe()
    try:
        theirs.sendmsg(
            [b"h"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, r.to_bytes(4, sys.byteorder))]
        )
        how, fd, status = loop.serve()
        assert (how, status) == ("hand over", None) and fd >= 0 and fd not in (r, w)
        os.close(fd)
    finally:
        os.close(r)
        os.close(w)


def _in_a_child(body) -> object:
    """`body()`'s JSON-able result, computed in a fork of this process: a reap waits for any
    child, and the test process's own (other tests' subprocesses) are not this test's to reap."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(r)
            os.write(w, json.dumps(body()).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        raw = f.read()
    os.waitpid(pid, 0)
    assert raw, "the child failed"
    return json.loads(raw)


def test_a_reap_reports_the_status_the_rusage_and_the_others(loop_factory):
    def body():
        loop, theirs = loop_factory()
        call, other = _exited_child(3), _exited_child(4)
        figures = _ask(theirs, loop, b"r%d" % call)
        try:
            os.waitpid(other, os.WNOHANG)
            left = True
        except ChildProcessError:
            left = False
        again = _ask(theirs, loop, b"r%d" % call)  # gone: the system's error, as a figure
        return figures, left, again

    figures, other_left, again = _in_a_child(body)
    assert len(figures) == 9  # status, user, system, max RSS, unconfined, 3 for the others, CPU
    assert os.WIFEXITED(figures[0]) and os.WEXITSTATUS(figures[0]) == 3
    assert figures[4] == 0  # exited on its own: never "killed before confined"
    assert figures[7] == 1 and not other_left  # the other one, reaped with it
    assert again[:2] == [-1, 10]  # ECHILD


def test_the_request_process_found_dead_by_a_reap_is_reported(loop_factory):
    def body():
        request = _exited_child(7)
        loop, theirs = loop_factory(request_pid=request)
        theirs.send(b"e")
        theirs.close()
        how, _fd, status = loop.serve()
        return how, status

    how, status = _in_a_child(body)
    assert how == "end"
    assert status is not None and os.WEXITSTATUS(status) == 7


def test_the_loop_ends_when_its_request_process_does(loop_factory):
    loop, theirs = loop_factory()
    theirs.close()
    assert loop.serve()[:2] == ("end", -1)


CALLS = [
    ("value", INC, [1], Limits()),
    ("raises", "def f():\n    raise KeyError('k')\n", [], Limits()),
    ("timeout", "def f():\n    while True:\n        pass\n", [], Limits(wall_s=1.0, cpu_s=0.5)),
    (
        "killed",
        "import os, signal\ndef f():\n    os.kill(os.getpid(), signal.SIGKILL)\n",
        [],
        Limits(),
    ),
    (
        "orphan",
        "import os, time\ndef f():\n    if os.fork() == 0:\n        time.sleep(30)\n"
        "    time.sleep(0.2)\n    return 1\n",
        [],
        Limits(max_processes=4),
    ),  # fmt: skip
]


def _verdicts(monkeypatch, c_loop: str) -> tuple[str, list]:
    monkeypatch.setenv(zygote_ext.ENV, c_loop)
    w = PythonWorker()
    try:
        out = []
        for _name, source, args, limits in CALLS:
            r = w.call(source, "f", args, limits=limits)
            out.append((r.status, r.value, "outlived_main" in r.flags))
        assert w.call(INC, "f", [41]).value == 42
        assert w.stats()["restarts"] == 0
        return w.zygote_loop, out
    finally:
        w.close()


def test_both_loops_give_real_calls_the_same_verdicts(monkeypatch):
    _c_module()  # skips where no C loop can be built
    kind_c, in_c = _verdicts(monkeypatch, "1")
    kind_py, in_python = _verdicts(monkeypatch, "0")
    assert (kind_c, kind_py) == ("c", "python")
    assert in_c == in_python
    statuses = [s for s, _v, _o in in_c]
    assert statuses == [
        Status.OK,
        Status.RUNTIME_ERROR,
        Status.TIMEOUT,
        Status.RUNTIME_ERROR,
        Status.OK,
    ]
    assert in_c[0][1] == 2 and in_c[4][2]  # the value; the orphan seen and killed


def test_a_zygote_killed_from_outside_costs_one_call_and_the_next_gets_a_fresh_worker():
    """The C loop blocks in recvmsg between calls: a SIGKILL there ends the worker, which the
    host restarts."""
    _c_module()
    w = PythonWorker()
    try:
        assert w.call(INC, "f", [1]).value == 2
        assert w.zygote_loop == "c"
        assert w._proc is not None
        from proc_children import children

        (zygote,) = children(w._proc.pid)
        os.kill(zygote, signal.SIGKILL)
        first = w.call(INC, "f", [2])
        assert first.status is not Status.OK or first.value == 3
        assert w.call(INC, "f", [3]).value == 4
    finally:
        w.close()
