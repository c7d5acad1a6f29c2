"""What a call's child does before it runs anything of the program: standard streams nothing
else ever used, rlimits, and the drop to the worker's unprivileged uid in /tmp."""

from __future__ import annotations

import _signal
import os
import resource
import sys

import pyworker_program

#: The standard streams every call's child gets: made once over fds 0-2 and never used by this
#: parent, so nothing is in their buffers at any fork (a child's writes stay in its own copy).
#: Making three per child cost ~0.13 ms of every call.
CHILD_STDIO = tuple(pyworker_program._stdio(fd) for fd in (0, 1, 2))
#: The interpreter's own standard streams, which `fresh_stdio` replaces: held here so that a
#: child's replacing them frees nothing (their deallocation, buffers and all, was 79
#: copy-on-write faults and ~0.2 ms of every call's child). Never flushed in a child: it
#: ends with `os._exit`.
_REPLACED = (sys.stdin, sys.stdout, sys.stderr, sys.__stdin__, sys.__stdout__, sys.__stderr__)


class KilledBeforeConfined(Exception):
    """A call's process was killed by a signal while it still had the worker's own uid: no code
    of the program had run (the drop to the calls' uid comes first), so its death is not the
    program's (something outside killed a perfgym process) and never its verdict."""


def killed_before_confined(pid: int, uid: int) -> bool:
    """Whether child `pid`, exited and not yet reaped, was killed by a signal before it dropped
    to `uid`. Peeks (WNOWAIT) and reads the zombie's real uid from /proc; False while it runs,
    when it exited on its own, or when `uid` is root (no drop to tell apart)."""
    if uid == 0:
        return False
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    if info is None or info.si_code not in (os.CLD_KILLED, os.CLD_DUMPED):
        return False
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Uid:"):
                    return int(line.split()[1]) != uid
    except (OSError, ValueError, IndexError):
        return False
    return False


def raise_if_killed_before_confined(pid: int, uid: int) -> None:
    """`KilledBeforeConfined` (the child reaped) when `killed_before_confined(pid, uid)`."""
    if killed_before_confined(pid, uid):
        os.waitpid(pid, 0)
        raise KilledBeforeConfined(
            f"the call's process was killed before it dropped to uid {uid}, before any of the "
            "program ran: an outside kill of the worker's own process, never the program's"
        )


def fresh_stdio() -> None:
    """Standard streams nothing but this child ever wrote to or read from, over fds 0-2."""
    sys.stdin, sys.stdout, sys.stderr = CHILD_STDIO  # type: ignore[assignment]
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = CHILD_STDIO  # type: ignore[misc]


def confine(lim: dict, uid: int, vsize: int) -> None:
    """In a call's child: rlimits, then drop to the worker's unprivileged uid in /tmp."""
    cpu_s = int(lim["cpu_s"]) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    nproc = int(lim["max_processes"])
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    fsize = int(lim["file_size_bytes"])
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    # CPython tolerates an address-space limit (unlike the JVM or Go): the pristine
    # interpreter's mapping plus the call's allowance.
    mem = vsize + int(float(lim["memory_mb"]) * 1024 * 1024)
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
    # bubblewrap already set no_new_privs for the whole sandbox; dropping to a
    # non-root uid clears every capability this child inherited.
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    os.chdir("/tmp")
