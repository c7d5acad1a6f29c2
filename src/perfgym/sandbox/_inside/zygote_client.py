"""A request process's commands to the zygote (`zygote_commands` serves them): fork a function
call's child, reap it and what the call left, pass a request on, let the next request process
start.

Every reply ends with the zygote's own CPU, kept in `worker_meter.zygote_cpu_s` (a call's CPU
is the worker cgroup's less the worker's own processes', the zygote's fork of the child among
them); the rusage of the processes the zygote reaps is added to `worker_meter.reaped_cpu_s`.
"""

from __future__ import annotations

import _socket
import os
import sys

import worker_meter
import zygote_commands

_conn: _socket.socket | None = None  # set in a request process by `pyworker_server`


def connect(fd: int) -> None:
    global _conn
    _conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET, 0, fd)


def _figures() -> list[int]:
    """The zygote's next reply (its CPU taken off and recorded)."""
    assert _conn is not None, "no zygote connection"
    raw = _conn.recv(256)
    if not raw:
        raise OSError("the zygote closed its connection")
    figures = [int(x) for x in raw.split()]
    worker_meter.zygote_cpu_s = figures.pop() / 1e9
    return figures


_greeted = False


def greeted() -> None:
    """Wait for the zygote to serve this process, and take its CPU so far (which a call's CPU
    count starts from). Before a call's first count, after this process's turn."""
    global _greeted
    if not _greeted:
        _send(zygote_commands.HELLO)
        _figures()
        _greeted = True


def _send(msg: bytes, fds: tuple[int, ...] = ()) -> None:
    """A command, with `fds` passed along (SCM_RIGHTS)."""
    assert _conn is not None, "no zygote connection"
    if not fds:
        _conn.send(msg)
        return
    rights = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in fds)
    _conn.sendmsg([msg], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])


def _ask(msg: bytes, fds: tuple[int, ...] = ()) -> list[int]:
    """Send a command, wait for its figures (the zygote's CPU taken off and recorded)."""
    greeted()
    _send(msg, fds)
    figures = _figures()
    if figures and figures[0] == -1:
        err = figures[1] if len(figures) > 1 else 0
        raise OSError(err, f"the zygote refused a command: {os.strerror(err) if err else 'bad'}")
    return figures


def spawn(fds: tuple[int, ...]) -> tuple[int, int]:
    """Have the zygote fork a function call's child over `fds` (job first): (its pid, the
    zygote's resident size at the fork, which the child starts sharing)."""
    pid, rss = _ask(zygote_commands.SPAWN, fds)  # two figures, or the unpacking fails loudly
    return pid, rss


def reap(pid: int) -> tuple[int, float, float, int, bool]:
    """Reap call child `pid` (ended, or killed) and whatever else of the call has ended:
    (status, user s, system s, max RSS KiB, killed before it dropped to the calls' uid). The
    others' CPU is added to `worker_meter.reaped_cpu_s`; the child's too."""
    status, user, system, maxrss, unconfined, o_user, o_system, _n = _ask(
        zygote_commands.REAP + b"%d" % pid
    )
    _count(user + o_user, system + o_system)
    return status, user / 1e9, system / 1e9, maxrss, bool(unconfined)


def reap_exited() -> int:
    """Reap what of the call has ended (never waiting): how many."""
    user, system, count = _ask(zygote_commands.REAP_EXITED)
    _count(user, system)
    return count


def _count(user_ns: int, system_ns: int) -> None:
    u, s = worker_meter.reaped_cpu_s
    worker_meter.reaped_cpu_s = (u + user_ns / 1e9, s + system_ns / 1e9)


def hand_over(fd: int) -> None:
    """Pass the request in memfd `fd` to the next request process (this one ends next)."""
    _send(zygote_commands.HAND_OVER, (fd,))


def go() -> None:
    """This request process's call is metered and clean: the zygote may fork the next one."""
    _send(zygote_commands.GO)
