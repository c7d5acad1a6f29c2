"""The zygote's side of its request process's commands: fork a function call's child, reap it and
whatever the call left, pass a request on to the next request process, let the next one start.

The zygote (PID 1 of the worker's sandbox) forks every function call's child itself, so a call
costs one fork of the pristine interpreter, not two (issue 31): the long-lived request process
asks for it here. The zygote never reads a request: what it is sent are descriptors (the call's
job, a memfd the child reads; the call's channels), a pid to reap, or a memfd holding the next
request process's first request, which it hands on unread. Each reply is the zygote's figures
as ASCII integers, its own CPU last (the request process counts it out of the call's CPU, as it
does its own). A call's child is the zygote's (and so are the call's orphans: PID 1 inherits
them), so its rusage comes from here; the request process reads the rest (its pidfd, its
channels) as before. Stdlib only; imported by `pyworker_server.py` inside the worker's sandbox.
"""

from __future__ import annotations

import _socket
import os
import sys
import time
from collections.abc import Callable

import worker_child
import worker_forget
import worker_meter

HELLO, SPAWN, REAP, REAP_EXITED, HAND_OVER, GO = b"?", b"c", b"r", b"e", b"h", b"g"
#: The descriptors a spawn carries: the job and the call's channels (`pyworker_call`).
SPAWN_FDS = 8
_ANCILLARY = _socket.CMSG_SPACE(SPAWN_FDS * 4)


def own_cpu_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_PROCESS_CPUTIME_ID)


def received_fds(ancillary: list) -> list[int]:
    """The descriptors an SCM_RIGHTS message carried."""
    fds: list[int] = []
    for level, kind, data in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            usable = len(data) - len(data) % 4
            fds += [int.from_bytes(data[i : i + 4], sys.byteorder, signed=True)
                    for i in range(0, usable, 4)]  # fmt: skip
    return fds


class Commands:
    """Serve one request process's commands (`serve`)."""

    def __init__(self, conn: _socket.socket, request_pid: int, uid: int,
                 child_main: Callable[[list[int], int, int], None]) -> None:  # fmt: skip
        self.conn, self.request_pid, self.uid, self.child_main = conn, request_pid, uid, child_main
        #: The request process itself, when a reap found it dead (its exit status).
        self.request_status: int | None = None

    def serve(self) -> tuple[str, int]:
        """Until the request process closes its end: ("go", -1) when it said its call is done
        and the next may start, ("hand over", fd) when it passed a request on (the next request
        process reads it first), ("end", -1) otherwise. Nothing is sent unasked (a request
        process that ends with a message unread resets the connection, and its queued "go" is
        lost)."""
        while True:
            try:
                msg, ancillary, _flags, _addr = self.conn.recvmsg(64, _ANCILLARY)
            except InterruptedError:
                continue
            except OSError:
                return "end", -1
            fds = received_fds(ancillary)
            if not msg:
                _close_all(fds)
                return "end", -1
            kind = msg[:1]
            if kind == GO:
                _close_all(fds)
                return "go", -1
            if kind == HAND_OVER and len(fds) == 1:
                return "hand over", fds[0]
            try:
                figures = self._answer(kind, msg[1:], fds)
            except (OSError, ValueError) as exc:
                _close_all(fds)
                figures = [-1, getattr(exc, "errno", None) or 0]
            try:
                self.conn.send(b" ".join(b"%d" % n for n in (*figures, own_cpu_ns())),
                               _socket.MSG_NOSIGNAL)  # fmt: skip
            except OSError:
                return "end", -1

    def _answer(self, kind: bytes, arg: bytes, fds: list[int]) -> list[int]:
        if kind == HELLO:
            _close_all(fds)
            return []
        if kind == SPAWN and len(fds) == SPAWN_FDS:
            return self._spawn(fds)
        _close_all(fds)
        if kind == REAP:
            return self._reap(int(arg))
        if kind == REAP_EXITED:
            return list(self._reap_exited())
        raise ValueError(f"unknown zygote command {kind!r}")

    def _spawn(self, fds: list[int]) -> list[int]:
        """Fork a function call's child over `fds`, on the cores the request process sits on
        for it (`sit_with`); [its pid, this process's resident size]."""
        vsize, rss = worker_meter.statm()
        sit_with(self.request_pid)
        worker_forget.shuffle_pids()
        pid = os.fork()
        if pid == 0:
            try:
                self.conn.detach()  # closed by the child's own sweep, never shut down
                self.child_main(fds, self.uid, vsize)
            finally:
                os._exit(2)
        _close_all(fds)
        return [pid, rss]

    def _reap(self, pid: int) -> list[int]:
        """Wait for call child `pid` (the request process saw it end, or killed it), then reap
        whatever else of the call has ended: [status, user ns, system ns, max RSS KiB, whether
        it was killed before it dropped to the calls' uid, the others' user ns, system ns,
        count]."""
        if pid <= 1 or pid == self.request_pid:
            raise ValueError("not a call's process")
        unconfined = worker_child.killed_before_confined(pid, self.uid)
        _, status, ru = os.wait4(pid, 0)
        return [status, int(ru.ru_utime * 1e9), int(ru.ru_stime * 1e9), ru.ru_maxrss,
                int(unconfined), *self._reap_exited()]  # fmt: skip

    def _reap_exited(self) -> tuple[int, int, int]:
        """Reap every process that has ended (never waiting): (user ns, system ns, count)."""
        user = system = count = 0
        while True:
            try:
                pid, status, ru = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid == self.request_pid:
                self.request_status = status
                continue
            user += int(ru.ru_utime * 1e9)
            system += int(ru.ru_stime * 1e9)
            count += 1
        return user, system, count


#: The cores this process sits on now, when `sit_with` moved it (None: its own, as started).
_sitting: set[int] | None = None


def sit_with(request_pid: int) -> None:
    """Sit on the cores request process `request_pid` sits on now (for a call: the call's, see
    `pyworker_request._pin`), so that the child forked next starts there. The child still
    pins itself to its call's cores, which is then no move at all: forked elsewhere, its own
    `sched_setaffinity` migrated it across cores in every call (a cross-core wake-up and
    about 80 us; on 2 cores, 726 -> 1,012 calls/s without it). Only when they changed since
    the last call (a worker's calls keep to its home core)."""
    global _sitting
    try:
        cores = os.sched_getaffinity(request_pid)
        if cores != _sitting:
            os.sched_setaffinity(0, cores)
            _sitting = cores
    except OSError:  # the child pins itself all the same
        pass


def sit_home(home: set[int]) -> None:
    """Back on `home` (the cores this process started with), before it forks a request
    process: a request process starts on the worker's cores, never on one call's."""
    global _sitting
    if _sitting is not None and _sitting != home:
        try:
            os.sched_setaffinity(0, home)
        except OSError:  # (cores taken away meanwhile) it goes on where it is
            pass
    _sitting = None


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
