"""The request process of the warm Python worker: what every mode of one call shares.

Its state (the host connection, the test processes' uid, the frames still unread, the zygote's
pipes), compiling the program, closing inherited descriptors, the limits it waits under, the
cleanup after a call, the frames after a request, the core a call runs on, its turn.
Stdlib only; imported by `pyworker_server.py` inside the worker's sandbox.
"""

from __future__ import annotations

import gc
import os
import resource
import select
import sys
import time
import types
from collections.abc import Callable

import pyworker_batch
import worker_cleanup
import worker_forget
import worker_framing
import worker_meter

_sock_fd = -1  # the host connection: never inherited by a call's child
_check_uid = -1  # the uid of an assertion call's test process (not the candidate's)
#: An assertion call's test code, and a function call's arguments, are a frame of their own,
#: read after the program's fork: True while it is still in the socket (a request process that
#: fails before reading it ends the worker, or the next request process would take it for a
#: request).
_checker_unread = False


def _compile(source: str, filename: str, lim: dict,
             freeze: bool = True) -> tuple[str, types.CodeType | None, str]:  # fmt: skip
    """Compile a program's source, in the request process (no cache: a code object kept for a
    later call would be a source that call's child could find). compile() runs no program code,
    but a source nested deeply enough makes it use hundreds of MiB: it gets the request's memory
    allowance on top of this process's size (MemoryError, like RecursionError, is the program's
    compile error)."""
    key = filename
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    allowance = worker_meter.statm()[0] + int(float(lim["memory_mb"]) * 1024 * 1024)
    if hard != resource.RLIM_INFINITY:
        allowance = min(allowance, hard)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (allowance, hard))
        # dont_inherit: this file's `from __future__ import annotations` is not the program's.
        code = compile(source, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        return key, None, f"{type(exc).__name__}: {exc}"
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    if freeze:  # keep the collector in call children off the parent's pages (fewer COW faults)
        gc.freeze()  # (not in a long-lived request process: its later garbage would never go)
    return key, code, ""


def _close_inherited(keep: tuple[int, ...]) -> None:
    """In a child about to run a program: join the calls' memory cgroup (`worker_forget`), then
    close every descriptor above stdio but `keep`: above all the host connection, through
    which an untrusted child could otherwise forge the worker's reply."""
    worker_forget.join()
    lo = 3
    top = max(keep + (_sock_fd, worker_meter.cg_fd, *worker_meter.mem_fds, *worker_forget.fds,
                      255)) + 1  # fmt: skip
    for fd in sorted(set(keep)) + [top]:
        if fd >= lo:
            os.closerange(lo, fd)
            lo = fd + 1


def _forget(req: dict) -> None:
    """In a child about to run a program: drop this call's test code where the request process
    holds it (only an assertion call's test process is forked after it was read)."""
    req.pop("checker", None)


def _finish(reply: dict, start: tuple, reap_exited: Callable[[], int] | None = None) -> dict:
    """Clean up after a call (its main processes reaped) and complete its reply.
    `reap_exited`: the call's processes are the zygote's (`worker_cleanup.clean`)."""
    left, failed = worker_cleanup.clean(reap_exited)
    reply["outlived"] = left
    if failed:
        reply["cleanup_failed"] = failed
    return worker_meter.metered(start, reply)


def _flush_stdio() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except BaseException:  # noqa: BLE001 - /dev/null: nothing to lose
            pass


#: How often a waiting request process reads its cgroup's CPU counter against the CPU limit.
CPU_POLL_S = 0.05


def _cpu_used_s(start: tuple) -> float | None:
    """CPU every process of the call used so far (the worker cgroup's count less this request
    process's own), None without a cgroup: a process forked to compute outside the main one's
    rusage, reaped or not, is counted."""
    now = worker_meter.cgroup_ns()
    if start[0] < 0 or now < 0:
        return None
    return (now - start[0]) / 1e9 - (worker_meter.self_cpu() - start[1])


def _over_limit(start: tuple, t0: float, lim: dict) -> tuple[float, str]:
    """(Seconds left on the wall clock, why the call is over a limit: "" while it is not)."""
    wall = float(lim["wall_s"])
    left = t0 + wall - time.monotonic()
    if left <= 0:
        return 0.0, f"wall time over {wall:g} s"
    cpu = float(lim["cpu_s"]) if lim.get("cpu_s") else None
    used = _cpu_used_s(start) if cpu else None
    if used is not None and cpu is not None and used > cpu:
        return left, f"CPU time over {cpu:g} s (every process of the call, cgroup)"
    return left, ""


def _await_exit(pidfd: int, start: tuple, t0: float, lim: dict) -> str:
    """Wait for the process behind `pidfd`: "" when it ended, else why it must be killed (the
    wall limit, or the CPU limit counted over every process of the call)."""
    while True:
        left, why = _over_limit(start, t0, lim)
        if why:
            return why
        ready, _, _ = select.select([pidfd], [], [], min(left, CPU_POLL_S))
        if ready:
            return ""


def _read_args() -> list:
    """The arguments of the function call being served: the frame after its request."""
    global _checker_unread
    frame = worker_framing.recv(_sock_fd)
    _checker_unread = False
    args = frame.get("args") if type(frame) is dict else None
    return args if isinstance(args, list) else []


def _read_checker() -> str:
    """The test code of the assertion call being served: the frame after its request."""
    global _checker_unread
    frame = worker_framing.recv(_sock_fd)
    _checker_unread = False
    checker = frame.get("checker") if type(frame) is dict else None
    return checker if isinstance(checker, str) else ""


def _pin(core: object) -> set[int] | None:
    """Put this request process, and so the call's child it forks next, on one core: `core`
    (the one the call's measurement owns) or, when it is not this sandbox's, the one it runs on
    now. A list: those cores (a run given several). The cores it had before (None: left as it
    was), for a request process that goes on to its next call."""
    if isinstance(core, list):
        try:
            before = os.sched_getaffinity(0)
            os.sched_setaffinity(0, {int(c) for c in core} & before or before)
            return before
        except (OSError, ValueError, TypeError):
            return None
    return pyworker_batch._share_a_core(core if isinstance(core, int) else None)


_turn_fd = -1  # EOF once the request process before this one is reaped


def _await_turn() -> None:
    """In a request process: wait until the one before it is gone (before metering anything,
    and before replying)."""
    global _turn_fd
    if _turn_fd >= 0:
        os.read(_turn_fd, 1)
        os.close(_turn_fd)
        _turn_fd = -1
