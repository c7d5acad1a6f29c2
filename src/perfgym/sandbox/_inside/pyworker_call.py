"""Function calls of the warm Python worker: the call's child, its handshake, its own timer.

The child runs the module in a fresh namespace, says it ran, waits for its arguments, calls the
entry point on clocks bound before the program ran, and writes its result; the request process
counts the call's CPU from "ready" to "done" (see `_call`). Stdlib only; imported by
`pyworker_server.py` inside the worker's sandbox.
"""

from __future__ import annotations

import _pickle
import _signal
import builtins
import json
import marshal
import os
import select
import sys
import time
import types
from collections.abc import Callable

import ipc_namespace
import valuecodec
import worker_child
import worker_forget
import worker_meter
import worker_results
import zygote_client
from pyworker_request import (
    CPU_POLL_S,
    _await_exit,
    _await_turn,
    _close_inherited,
    _compile,
    _cpu_used_s,
    _finish,
    _forget,
    _over_limit,
    _pin,
    _read_args,
)


def _run_delay_ns(fd: int, ident: tuple[int, int]) -> int | None:
    """The calling thread's time spent runnable but waiting for a CPU (schedstat's second
    field, ns), or None where the kernel does not keep it, or `fd` is no longer the file
    `ident` names (the call replaced it to forge a delay)."""
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != ident:
            return None
        return int(os.pread(fd, 128, 0).split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _own_time_ns(call: Callable[[], object], _clocks: tuple = (time.monotonic_ns,
                 time.process_time_ns)) -> tuple[object, int, int, int]:  # fmt: skip
    """Run `call`; its value, its wall time (the program's own clock, as ENAMEL's), its CPU
    time (every thread) and its time on a machine of its own: the wall time (on a clock bound
    before the program ran) less the time the thread waited for a CPU another process held
    (nothing less without schedstat), at least its CPU time. The last counts what the call did
    and what it waited for (sleep, I/O, a child), not the machine's load. Its clocks are bound
    at definition (`_clocks`), not looked up in this module's globals or in `time`, where the
    program's module code could rebind them (the wall timer stays `time`'s, as ENAMEL's own; a
    report forged anyway is checked from outside, `perfgym.enamel.timer`)."""
    monotonic_ns, process_cpu_ns = _clocks
    try:
        fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY | os.O_CLOEXEC)
        st = os.fstat(fd)
        ident = (st.st_dev, st.st_ino)
    except OSError:
        fd, ident = -1, (0, 0)
    d0 = _run_delay_ns(fd, ident) if fd >= 0 else None
    m0, c0 = monotonic_ns(), process_cpu_ns()
    t0 = time.perf_counter_ns()
    value = call()
    wall_ns = time.perf_counter_ns() - t0
    c1, m1 = process_cpu_ns(), monotonic_ns()
    d1 = _run_delay_ns(fd, ident) if fd >= 0 else None
    if fd >= 0:
        try:
            os.close(fd)
        except OSError:
            pass
    cpu_ns = c1 - c0
    waited = d1 - d0 if d0 is not None and d1 is not None else 0  # none known: all of the wall
    return value, wall_ns, cpu_ns, max(cpu_ns, (m1 - m0) - max(0, waited))


def _child(req: dict, code: types.CodeType, out_fd: int, res_fd: int, uid: int, vsize: int,
           stamp_w: int, handshake: tuple[int, int, int, int]) -> None:  # fmt: skip
    """The per-call child: limits, privilege drop, fresh module namespace, call. Never returns.
    `handshake`: (ready_w, go_r, args_fd, done_w), see `_call`."""
    given = False  # the worker handed over the arguments: it waits for "done"
    try:
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        _close_inherited((out_fd, res_fd, stamp_w, *handshake))
        worker_child.fresh_stdio()
        _forget(req)
        worker_child.confine(req["limits"], uid, vsize)
        worker_meter.send_stamp(stamp_w)
        namespace = {"__name__": req.get("module_name", "solution"), "__builtins__": builtins}
        exec(code, namespace)  # noqa: S102 - the untrusted program, in its isolated child
        entry = req.get("entry")
        value = None
        call_ns = cpu_ns = own_ns = 0
        if entry:
            fn = namespace.get(entry)
            if not callable(fn):
                raise NameError(f"entry point {entry!r} is not defined by the program")
            args = _arguments(*handshake[:3])
            given = True
            value, call_ns, cpu_ns, own_ns = _own_time_ns(lambda: fn(*args))
        result = {"ok": True, "value": valuecodec.encode(value), "reported_call_ns": call_ns,
                  "reported_call_cpu_ns": cpu_ns, "reported_call_own_ns": own_ns}  # fmt: skip
        code_out = 0
    except BaseException as exc:  # noqa: BLE001 - the program's own failure, reported as such
        result = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:2000]}
        code_out = 1
    try:
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001
        pass
    try:
        os.write(res_fd, json.dumps(result).encode())
        if given:
            os.write(handshake[3], b"d")  # the result is complete: the call's count ends
            os.read(handshake[1], 1)  # blocked (not exiting) while the worker reads that count
    except BaseException:  # noqa: BLE001 - e.g. the value was too large for the file limit
        pass
    os._exit(code_out)


def _arguments(ready_w: int, go_r: int, args_fd: int, _loads=_pickle.loads) -> list:  # noqa: ANN001
    """In the call's child, its module run: say so, wait for the go, read the arguments (which
    this process never held before). They come pickled by the worker (`_pickled_args`): the
    C unpickler builds builtin values without running any Python code the module could have
    patched, 10-200x faster than the JSON decoding (whose time on a large input, in the
    outside count, varied by ms between runs). The result's encoding runs once on a small
    value first, so that its first touch of the parent's pages (copy-on-write faults) is not
    in the count either."""
    json.dumps(valuecodec.encode([0, "", 0.5, [1], (), {1: 2}, None]))
    os.write(ready_w, b"r")
    os.close(ready_w)
    if os.read(go_r, 1) != b"g":
        raise RuntimeError("the worker sent no arguments")
    raw = os.pread(args_fd, os.fstat(args_fd).st_size, 0)
    os.close(args_fd)
    args = _loads(raw)
    if isinstance(args, BaseException):
        raise args
    return args


def _pickled_args(encoded: list) -> bytes:
    """A call's arguments (valuecodec's encoding, from the host) as the child reads them: the
    decoded values pickled; a malformed encoding, the error the child raises."""
    try:
        return _pickle.dumps(valuecodec.decode(encoded), 5)
    except Exception as exc:  # noqa: BLE001 - the call's failure, as when the child decoded
        return _pickle.dumps(ValueError(f"{type(exc).__name__}: {exc}"[:500]), 5)


def _await_ready(pidfd: int, ready_r: int, start: tuple, t0: float, lim: dict
                 ) -> tuple[str, float | None]:  # fmt: skip
    """Wait for the call's child to have run its module: ("", the call's CPU so far, -1 when
    no cgroup counts it), ("", None) when the child exited or closed the pipe first, or (why it
    must be killed, None). An unknown CPU is no reason to withhold the arguments: a worker
    without a cgroup (no writable hierarchy, or its name taken by a dead worker's whose PID came
    back) failed every function call "the worker sent no arguments", blamed on the program."""
    while True:
        left, why = _over_limit(start, t0, lim)
        if why:
            return why, None
        ready, _, _ = select.select([ready_r, pidfd], [], [], min(left, CPU_POLL_S))
        if ready_r in ready:
            if os.read(ready_r, 1) != b"r":
                return "", None
            used = _cpu_used_s(start)
            return "", -1.0 if used is None else used
        if ready:
            return "", None


def _await_done(pidfd: int, done_r: int, res_fd: int, start: tuple, t0: float,
                lim: dict) -> tuple[str, float, bytes | None]:  # fmt: skip
    """Wait for the call's child to say its result is written: ("", the call's CPU so far, the
    result as it is now), ("", -1, None) when it exited or closed the pipe first, or (why it
    must be killed, -1, None). The result is taken at that moment: a "done" the program sends
    before its answer is written is an answer missing, never an early end of the count."""
    while True:
        left, why = _over_limit(start, t0, lim)
        if why:
            return why, -1.0, None
        ready, _, _ = select.select([done_r, pidfd], [], [], min(left, CPU_POLL_S))
        if done_r in ready:
            if os.read(done_r, 1) != b"d":
                return "", -1.0, None
            used = _cpu_used_s(start)
            return "", -1.0 if used is None else used, worker_results.snapshot(res_fd)
        if ready:
            return "", -1.0, None


#: Compiled programs (marshalled code, by file name and source): this long-lived request
#: process never runs a program, and a call's child is the zygote's fork, so no call can reach
#: another's code through it. Bounded in bytes; emptied when full.
_compiled: dict[tuple[str, str, str], bytes] = {}
_compiled_bytes = 0
COMPILED_MAX_BYTES = 32 << 20
#: A call's child that could not have an IPC namespace of its own (or, forgetting, a fresh
#: tmpfs) exits with this, before its stamp (no program code can exit before that).
EXIT_NO_IPC = 113


def _marshalled(req: dict) -> tuple[bytes | None, str]:
    """The program compiled (`_compile`, with its memory allowance) and marshalled, or None and
    the compile error."""
    global _compiled_bytes
    # The memory allowance is part of the key: a source that compiles only with more memory
    # is no faster to fail under less because another call compiled it first (rt65).
    key = (str(req.get("filename", "solution.py")), req["source"], str(req["limits"]["memory_mb"]))
    code = _compiled.get(key)
    if code is not None:
        return code, ""
    _, obj, err = _compile(req["source"], key[0], req["limits"], freeze=False)
    if obj is None:
        return None, err
    code = marshal.dumps(obj)
    if _compiled_bytes + len(code) > COMPILED_MAX_BYTES:
        _compiled.clear()
        _compiled_bytes = 0
    _compiled[key] = code
    _compiled_bytes += len(code)
    return code, ""


def _job(req: dict, code: bytes, cores: list[int] | None) -> int:
    """A memfd with what the call's child needs of its request (never the source), marshalled:
    (its header, the program's code). Marshal, not JSON: the child reads it in C alone, touching
    no Python code of the zygote's (each page it touches is a copy)."""
    head = marshal.dumps({"limits": req["limits"], "entry": req.get("entry"), "cores": cores,
                          "module_name": req.get("module_name", "solution")})  # fmt: skip
    fd = os.memfd_create("job", 0)
    os.write(fd, len(head).to_bytes(4, "big") + head + code)
    return fd


def spawned_child(fds: list[int], uid: int, vsize: int) -> None:
    """In the zygote's fork for a function call: read the job, take an IPC namespace of its
    own, sit on the request process's core, then run as `_child`. Never returns."""
    job, out_fd, res_fd, stamp_w, ready_w, go_r, args_fd, done_w = fds
    raw = os.pread(job, os.fstat(job).st_size, 0)
    os.close(job)
    n = int.from_bytes(raw[:4], "big")
    req = marshal.loads(raw[4 : 4 + n])
    code = marshal.loads(raw[4 + n :])
    del raw
    # A write to a pipe the program closed is its EPIPE, as under `python3`, never a SIGPIPE.
    _signal.signal(_signal.SIGPIPE, _signal.SIG_IGN)
    # A forgetting call gets a fresh /tmp and /dev/shm (their inode numbers count the files
    # earlier calls made: `worker_forget`), then an IPC namespace of its own.
    if req["limits"].get("forget_page_cache") and worker_forget.renew_tmpfs():
        os._exit(EXIT_NO_IPC)
    if ipc_namespace.own() != "":
        os._exit(EXIT_NO_IPC)
    if req.get("cores"):
        try:
            os.sched_setaffinity(0, req["cores"])
        except OSError:
            pass
    _child(req, code, out_fd, res_fd, uid, vsize, stamp_w, (ready_w, go_r, args_fd, done_w))


def _call(req: dict, uid: int) -> dict:
    """A function call. Its arguments are a frame of their own, read after the child's fork,
    and handed to the child only once it says its module has run ("ready"; it then waits for
    the go): the module's code cannot compute anything from them, and the call's CPU of every
    process counted from that moment (`call_cpu_s`) is the call and what follows it, not the
    module's imports, which ENAMEL does not time. The count ends when the child says its
    result is written ("done"; the result is taken then), not at its exit, whose release of
    memory ENAMEL does not time either. The child is the zygote's fork (`zygote_client`): this
    process reads, meters, cleans up and replies, call after call, and never forks."""
    code, err = _marshalled(req)
    if code is None:
        _read_args()  # dropped unused
        return {"status": "COMPILE_ERROR", "error": err}
    held = _Held()
    try:
        return _call_over(req, uid, code, req["limits"], held)
    finally:
        held.close(*held.fds)


class _Held:
    """The request process's descriptors of one call: each closed once, whatever happens (a
    call that raised had left 8 open, and a worker that served ~125 such calls failed every
    later one: red team rt65)."""

    def __init__(self) -> None:
        self.fds: list[int] = []

    def opened(self, *fds: int) -> tuple[int, ...]:
        self.fds.extend(fds)
        return fds

    def handed(self, fd: int) -> int:
        """`fd`, which a reader closes itself from here on."""
        self.fds.remove(fd)
        return fd

    def close(self, *fds: int) -> None:
        for fd in fds:
            self.fds.remove(fd)
            os.close(fd)


def _call_over(req: dict, uid: int, code: bytes, lim: dict, held: _Held) -> dict:
    """`_call` once compiled."""
    out_fd, res_fd = held.opened(os.memfd_create("out", 0), os.memfd_create("res", 0))
    before = _pin(req.get("core"))
    stamp_r, stamp_w = held.opened(*os.pipe())
    ready_r, ready_w = held.opened(*os.pipe())
    go_r, go_w = held.opened(*os.pipe())
    done_r, done_w = held.opened(*os.pipe())
    (args_fd,) = held.opened(os.memfd_create("args", 0))
    (job,) = held.opened(_job(req, code, sorted(os.sched_getaffinity(0))))
    _await_turn()
    zygote_client.greeted()
    start = worker_meter.meter()
    t0 = time.monotonic()
    try:
        pid, server_rss = zygote_client.spawn((job, out_fd, res_fd, stamp_w, ready_w, go_r,
                                               args_fd, done_w))  # fmt: skip
    finally:
        held.close(job, stamp_w, ready_w, go_r, done_w)
        _unpin(before)
    args = _read_args()
    (pidfd,) = held.opened(os.pidfd_open(pid))
    reason, ready_cpu = _await_ready(pidfd, ready_r, start, t0, lim)
    done_cpu, result = -1.0, None
    if not reason and ready_cpu is not None:
        # At offset 0 whatever the program did to the file's offset, which it shares (a seek
        # past the end had this write fail: a SANDBOX_ERROR of the program's making).
        os.pwrite(args_fd, _pickled_args(args), 0)
        try:
            os.write(go_w, b"g")
        except OSError:  # the child closed its end: its own failure, seen at its exit
            pass
        reason, done_cpu, result = _await_done(pidfd, done_r, res_fd, start, t0, lim)
    held.close(ready_r, go_w, args_fd, done_r)
    reason = reason or _await_exit(pidfd, start, t0, lim)
    killed = "TIMEOUT" if reason else ""
    if reason:
        os.kill(pid, _signal.SIGKILL)
    status, user, system, maxrss, unconfined = zygote_client.reap(pid)
    exit_ns = time.monotonic_ns()
    wall = time.monotonic() - t0
    held.close(pidfd)
    if unconfined and not reason:
        raise worker_child.KilledBeforeConfined(
            f"the call's process was killed before it dropped to uid {uid}, before any of the "
            "program ran: an outside kill of the worker's own process, never the program's"
        )
    ru = types.SimpleNamespace(ru_utime=user, ru_stime=system)
    reply: dict = {"wall_s": wall, "exit_status": status, "killed": killed, "reason": reason,
                   "peak_rss_mb": max(0, maxrss * 1024 - server_rss) / 1048576.0}  # fmt: skip
    stamp_cpu = worker_meter.program_figures(held.handed(stamp_r), exit_ns, ru, reply)
    if stamp_cpu < 0 and os.WIFEXITED(status) and os.WEXITSTATUS(status) == EXIT_NO_IPC:
        raise OSError("the call's child could not isolate itself (an IPC namespace of its own, "
                      "or a fresh tmpfs for a forgetting call)")  # fmt: skip
    _finish(reply, start, zygote_client.reap_exited)
    worker_meter.call_window(stamp_cpu, -1.0 if ready_cpu is None else ready_cpu, done_cpu, reply)
    worker_results.read_output(held.handed(out_fd), int(lim["stdout_bytes"]), reply)
    reply["result"] = worker_results.result_of(held.handed(res_fd), result)
    return reply


def _unpin(before: set[int] | None) -> None:
    """This long-lived request process back on the cores it had before `_pin`."""
    if before:
        try:
            os.sched_setaffinity(0, before)
        except OSError:
            pass
