"""Warm Python worker: PID 1 of its own sandbox; a fresh request process per call, which forks
the call's unprivileged child.

The pristine parent (PID 1, the zygote) never reads a request, never compiles, never sees a
reply: it forks one request process per call and waits for it. The request process reads its
one request from the host connection (exactly that frame: the next one stays in the socket),
compiles the source, forks the call's child, meters it, cleans up, replies, and exits. So a
process that runs a candidate descends from a parent that has held nothing but that call's own
request: no earlier call's source (a reference, another candidate), no test code, no earlier
reply, not even as freed heap that ctypes could read back. An assertion call's test code is a
second frame, read only after the candidate's process was forked; so are a function call's
arguments, handed to its child only after its module ran (`_call`). What the zygote has imported
is a fixed list (`PRELOAD`), the same for every candidate, imported once at start; nothing a
candidate names is ever imported there (an import can have side effects, and module state
would pass from one candidate to the next). Its own stdio is /dev/null, and every child gets
standard streams the zygote made once and never used, so nothing buffered reaches a program.

A function call's child executes the module in a fresh namespace, calls the entry point,
writes the tagged-JSON result into a memfd and exits: that channel carries only what the
program's process says it returned, which the program controls anyway (its value is judged on
the host). An assertion call (mode "check", HumanEval's `check(candidate)`) runs the candidate
and the task's test code in two processes under two uids: the test code calls the candidate's
functions through a socket, receives plain values (`valuecodec`), and only the test process
holds the result channel. A program run's child (mode "program") runs the source as
`__main__` over fresh stdio, exactly as `python3 prog.py` would, and the parent captures its
output under caps.

Each request process unshares an IPC namespace of its own before it reads its request (then
drops CAP_SYS_ADMIN): SysV shared memory, queues and semaphores (and POSIX message queues) a
call makes die with it, and no call sees another's. Afterwards the request process (a child subreaper: the call's orphans are its own to reap and
count) SIGKILLs every other process in its PID namespace but the zygote and empties /tmp and
/dev/shm without recursion; a cleanup that fails, or leaves anything, is reported and the
worker exits (the host restarts it); so does a request process that ends without replying.
CPU is the call's every process: rusage of all reaped descendants, cross-checked against the
worker's cpuacct cgroup (when the host gave one) so that a child nobody waited for (SIGCHLD
ignored, a daemon) is counted and flagged.
Messages are 4-byte big-endian length + JSON over a stream socket.
"""

from __future__ import annotations

# Imports are kept to what the server needs (no typing, socket, shutil, hashlib, base64 or the
# signal wrapper): every call forks this process, and the fork and the child's exit cost time
# in proportion to its anonymous memory (6.7 -> 4.0 MB; 0.25 ms of CPU less per call here).
import _pickle
import _signal
import binascii
import builtins
import ctypes
import gc
import json
import os
import resource
import select
import sys
import time
import types
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyworker_batch  # noqa: E402
import pyworker_check  # noqa: E402
import pyworker_program  # noqa: E402
import valuecodec  # noqa: E402
import worker_child  # noqa: E402
import worker_cleanup  # noqa: E402
import worker_framing  # noqa: E402
import worker_meter  # noqa: E402
import worker_results  # noqa: E402

#: What the parent imports at start, the same for every candidate: modules without import-time
#: side effects that function-task candidates commonly use (HumanEval's prompts all import
#: typing), so their calls need not import them. Nothing else is ever imported here; a
#: program's other imports happen in its own child.
PRELOAD = ("bisect", "collections", "functools", "heapq", "itertools", "math", "operator", "re",
           "string", "typing")  # fmt: skip


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
    report forged anyway is checked from outside, `perfgym.judge.enamel_timer`)."""
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


_sock_fd = -1  # the host connection: never inherited by a call's child
_check_uid = -1  # the uid of an assertion call's test process (not the candidate's)
#: An assertion call's test code, and a function call's arguments, are a frame of their own,
#: read after the program's fork: True while it is still in the socket (a request process that
#: fails before reading it ends the worker, or the next request process would take it for a
#: request).
_checker_unread = False
_PR_SET_CHILD_SUBREAPER = 36
_libc = ctypes.CDLL(None, use_errno=True)
_CLONE_NEWIPC = 0x08000000
_CAP_SYS_ADMIN = 21
_PR_CAPBSET_DROP = 24
#: Why this request process has no IPC namespace of its own ('' when it has one).
_ipc_error = ""


def _own_ipc_namespace() -> str:
    """Give this request process (and so its call's processes) an IPC namespace of its own,
    then drop CAP_SYS_ADMIN, which it needed only for that. No SysV segment, queue or
    semaphore set (nor POSIX message queue) of another call is there, and the kernel frees the
    call's own when this process and its call's are gone. '' or why it failed."""
    if _libc.unshare(_CLONE_NEWIPC) != 0:
        return f"unshare(CLONE_NEWIPC): {os.strerror(ctypes.get_errno())}"
    _libc.prctl(_PR_CAPBSET_DROP, _CAP_SYS_ADMIN, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable; for caps 0-31, 32-63
    if _libc.capget(header, data) != 0:
        return f"capget: {os.strerror(ctypes.get_errno())}"
    for i in (0, 1, 2):
        data[i] &= ~(1 << _CAP_SYS_ADMIN)
    if _libc.capset(header, data) != 0:
        return f"capset: {os.strerror(ctypes.get_errno())}"
    return ""


def _compile(source: str, filename: str, lim: dict) -> tuple[str, types.CodeType | None, str]:
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
    gc.freeze()  # keep the collector in call children off the parent's pages (fewer COW faults)
    return key, code, ""


def _close_inherited(keep: tuple[int, ...]) -> None:
    """Close every descriptor above stdio but `keep`: above all the host connection, through
    which an untrusted child could otherwise forge the worker's reply."""
    lo = 3
    top = max(keep + (_sock_fd, worker_meter.cg_fd, *worker_meter.mem_fds, 255)) + 1
    for fd in sorted(set(keep)) + [top]:
        if fd >= lo:
            os.closerange(lo, fd)
            lo = fd + 1


def _forget(req: dict) -> None:
    """In a child about to run a program: drop this call's test code where the request process
    holds it (only an assertion call's test process is forked after it was read)."""
    req.pop("checker", None)


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


def _await_ready(pidfd: int, ready_r: int, start: tuple, t0: float, lim: dict) -> tuple[str, float]:
    """Wait for the call's child to have run its module: ("", the call's CPU so far, -1 when
    unknown or the child exited first), or (why it must be killed, -1)."""
    while True:
        left, why = _over_limit(start, t0, lim)
        if why:
            return why, -1.0
        ready, _, _ = select.select([ready_r, pidfd], [], [], min(left, CPU_POLL_S))
        if ready_r in ready:
            if os.read(ready_r, 1) != b"r":
                return "", -1.0
            used = _cpu_used_s(start)
            return "", -1.0 if used is None else used
        if ready:
            return "", -1.0


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


def _finish(reply: dict, start: tuple[int, float, resource.struct_rusage]) -> dict:
    """Clean up after a call (its main processes reaped) and complete its reply."""
    left, failed = worker_cleanup.clean()
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


def _call(req: dict, uid: int) -> dict:
    """A function call. Its arguments are a frame of their own, read after the child's fork,
    and handed to the child only once it says its module has run ("ready"; it then waits for
    the go): the module's code cannot compute anything from them, and the call's CPU of every
    process counted from that moment (`call_cpu_s`) is the call and what follows it, not the
    module's imports, which ENAMEL does not time. The count ends when the child says its
    result is written ("done"; the result is taken then), not at its exit, whose release of
    memory ENAMEL does not time either."""
    key, code, err = _compile(req["source"], req.get("filename", "solution.py"), req["limits"])
    if code is None:
        _read_args()  # dropped unused: this process forks nothing after it
        return {"status": "COMPILE_ERROR", "error": err}
    lim = req["limits"]
    out_fd = os.memfd_create("out", 0)
    res_fd = os.memfd_create("res", 0)
    vsize, server_rss = (
        worker_meter.statm()
    )  # the child starts sharing this much; its own use is the excess
    _flush_stdio()
    _pin(req.get("core"))
    stamp_r, stamp_w = os.pipe()
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    done_r, done_w = os.pipe()
    args_fd = os.memfd_create("args", 0)
    _await_turn()
    start = worker_meter.meter()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _child(req, code, out_fd, res_fd, uid, vsize, stamp_w, (ready_w, go_r, args_fd, done_w))
    for fd in (stamp_w, ready_w, go_r, done_w):
        os.close(fd)
    args = _read_args()
    pidfd = os.pidfd_open(pid)
    reason, ready_cpu = _await_ready(pidfd, ready_r, start, t0, lim)
    done_cpu, result = -1.0, None
    if not reason and ready_cpu >= 0:
        os.write(args_fd, _pickled_args(args))
        try:
            os.write(go_w, b"g")
        except OSError:  # the child closed its end: its own failure, seen at its exit
            pass
        reason, done_cpu, result = _await_done(pidfd, done_r, res_fd, start, t0, lim)
    for fd in (ready_r, go_w, args_fd, done_r):
        os.close(fd)
    reason = reason or _await_exit(pidfd, start, t0, lim)
    killed = "TIMEOUT" if reason else ""
    if reason:
        os.kill(pid, _signal.SIGKILL)
    else:
        worker_child.raise_if_killed_before_confined(pid, uid)
    _, status, ru = os.wait4(pid, 0)
    exit_ns = time.monotonic_ns()
    wall = time.monotonic() - t0
    os.close(pidfd)
    reply: dict = {"wall_s": wall, "exit_status": status, "killed": killed, "reason": reason,
                   "peak_rss_mb": max(0, ru.ru_maxrss * 1024 - server_rss) / 1048576.0}  # fmt: skip
    stamp_cpu = worker_meter.program_figures(stamp_r, exit_ns, ru, reply)
    _finish(reply, start)
    worker_meter.call_window(stamp_cpu, ready_cpu, done_cpu, reply)
    worker_results.read_output(out_fd, int(lim["stdout_bytes"]), reply)
    reply["result"] = worker_results.result_of(res_fd, result)
    return reply


def _check_call(req: dict, uid: int) -> dict:
    """An assertion call: the candidate's module in one child (the worker's uid), the task's
    test code in another (a second uid, so the candidate can neither signal, trace nor read
    it), talking over two pipes. Only the test process holds the result channel, and it sees
    the candidate's functions through `pyworker_check.Remote`: plain values in, plain values
    out. The call's wall time and CPU are both processes'."""
    filename = req.get("filename", "solution.py")
    key, code, err = _compile(req["source"], filename, req["limits"])
    if code is None:
        _read_checker()  # dropped unused: this process forks nothing after it
        return {"status": "COMPILE_ERROR", "error": err}
    lim = req["limits"]
    out_fd = os.memfd_create("out", 0)
    ask_r, ask_w = os.pipe()  # test process -> candidate
    ans_r, ans_w = os.pipe()  # candidate -> test process
    vsize, server_rss = worker_meter.statm()
    _flush_stdio()
    _pin(req.get("core"))
    _await_turn()
    start = worker_meter.meter()
    t0 = time.monotonic()
    cand = os.fork()
    if cand == 0:  # before the test code was read here: this child never held any of it
        _candidate_child(req, code, out_fd, ask_r, ans_w, uid, vsize)
    req["checker"] = _read_checker()
    ckey, check_code, cerr = _compile(req["checker"], "<check>", lim)
    res_fd = os.memfd_create("res", 0)
    chk = -1
    if check_code is not None:
        chk = os.fork()
        if chk == 0:
            _check_child(req, check_code, ans_r, ask_w, res_fd, vsize)
    for fd in (ask_r, ask_w, ans_r, ans_w):
        os.close(fd)
    killed = reason = ""
    status = 0
    unconfined = False
    if chk > 0:
        pidfd = os.pidfd_open(chk)
        reason = _await_exit(pidfd, start, t0, lim)
        if reason:
            killed = "TIMEOUT"
            os.kill(chk, _signal.SIGKILL)
        else:
            unconfined = worker_child.killed_before_confined(chk, _check_uid)
        _, status, ru_chk = os.wait4(chk, 0)
        os.close(pidfd)
    if not unconfined and not killed and status != 0:
        # the test failed: if because the candidate's process died, its pipe closed before it
        # was a zombie; give it a moment to be one (a live candidate just costs the wait)
        cand_fd = os.pidfd_open(cand)
        select.select([cand_fd], [], [], 0.05)
        os.close(cand_fd)
        unconfined = worker_child.killed_before_confined(cand, uid)
    try:
        os.kill(cand, _signal.SIGKILL)
    except ProcessLookupError:
        pass
    _, cand_status, ru = os.wait4(cand, 0)
    if unconfined:  # both reaped: nothing of the call is left running
        raise worker_child.KilledBeforeConfined(
            "an assertion call's process was killed before it dropped its privileges, before "
            "any of the program or the test ran: an outside kill, never the program's"
        )
    wall = time.monotonic() - t0
    if os.WIFSIGNALED(cand_status) and os.WTERMSIG(cand_status) == _signal.SIGXCPU:
        status = cand_status  # the candidate ran out of CPU: its timeout, not the test's
    reply: dict = {"wall_s": wall, "exit_status": status, "killed": killed, "reason": reason,
                   "peak_rss_mb": max(0, ru.ru_maxrss * 1024 - server_rss) / 1048576.0}  # fmt: skip
    _finish(reply, start)
    worker_results.read_output(out_fd, int(lim["stdout_bytes"]), reply)
    if check_code is None:
        os.close(res_fd)
        reply.update(status="SANDBOX_ERROR", error=f"the task's test code: {cerr}")
        return reply
    reply["result"] = worker_results.result_of(res_fd)
    return reply


def _candidate_child(req: dict, code: types.CodeType, out_fd: int, ask_r: int, ans_w: int,
                     uid: int, vsize: int) -> None:  # fmt: skip
    """The candidate's process of an assertion call: runs its module, then answers the test
    process's questions about it until the test process is done. Never returns."""
    try:
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        _close_inherited((out_fd, ask_r, ans_w))
        worker_child.fresh_stdio()
        _forget(req)
        worker_child.confine(req["limits"], uid, vsize)
        namespace = {"__name__": req.get("module_name", "solution"), "__builtins__": builtins}
        try:
            exec(code, namespace)  # noqa: S102 - the untrusted program, in its isolated child
        except BaseException as exc:  # noqa: BLE001 - the program's own failure
            pyworker_check.send(ans_w, pyworker_check.failure(exc))
        else:
            pyworker_check.send(ans_w, {"ready": True})
            pyworker_check.serve(namespace, ask_r, ans_w)
    except BaseException:  # noqa: BLE001 - the test process sees the candidate gone
        pass
    try:
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001
        pass
    os._exit(0)


def _check_child(req: dict, code: types.CodeType, ans_r: int, ask_w: int, res_fd: int,
                 vsize: int) -> None:  # fmt: skip
    """The test process of an assertion call (the task's code, a uid of its own): calls
    `check(candidate)` against the candidate's process and writes the verdict. Never returns."""
    try:
        _close_inherited((ans_r, ask_w, res_fd))
        _forget(req)
        worker_child.confine(req["limits"], _check_uid, vsize)
        pyworker_check.run_check(code, req.get("entry") or "", ans_r, ask_w)
        result: dict = {"ok": True}
        code_out = 0
    except BaseException as exc:  # noqa: BLE001 - a failed check: the candidate's failure
        result = {"ok": False, "error": pyworker_check.describe(exc)}
        code_out = 1
    try:
        os.write(res_fd, json.dumps(result).encode())
    except BaseException:  # noqa: BLE001
        pass
    os._exit(code_out)


def _program_child(
    req: dict, code: types.CodeType, fds: dict[str, int], uid: int, vsize: int
) -> None:
    """The per-run child of program mode. Never returns; its exit status is the program's."""
    try:
        for target, name in ((0, "in"), (1, "out_w"), (2, "err_w")):
            os.dup2(fds[name], target)
        _close_inherited((fds["res"], fds["setup"]))
        _forget(req)
        pyworker_program.place_script(req["argv"][0], req["source"])
        worker_child.confine(req["limits"], uid, vsize)
        main = pyworker_program.become_main(req)
        os.write(fds["setup"], b"ok")
        os.close(fds["setup"])  # nothing the program writes can pass for the worker's report
    except BaseException as exc:  # noqa: BLE001 - the worker's own failure, not the program's
        os.write(fds["setup"], f"{type(exc).__name__}: {exc}".encode()[:2000])
        os._exit(70)
    os._exit(pyworker_program.run_main(code, main, fds["res"]))


def _run_program(req: dict, uid: int) -> dict:
    """Fork a program-mode child, feed its stdin, capture stdout/stderr under the caps (as the
    sandbox's supervisor: cut and stop at a cap), enforce the wall limit, then clean up."""
    key, code, err = _compile(req["source"], req["argv"][0], req["limits"])
    if code is None:
        return {"status": "COMPILE_ERROR", "error": err}
    lim = req["limits"]
    fds = {"in": os.memfd_create("stdin", 0), "res": os.memfd_create("res", 0)}
    os.write(fds["in"], binascii.a2b_base64(req.get("stdin", "")))
    os.lseek(fds["in"], 0, os.SEEK_SET)
    out_r, fds["out_w"] = os.pipe()
    err_r, fds["err_w"] = os.pipe()
    vsize, server_rss = worker_meter.statm()
    setup_r, fds["setup"] = os.pipe()
    _flush_stdio()
    _await_turn()
    start = worker_meter.meter()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _program_child(req, code, fds, uid, vsize)
    for name in ("in", "out_w", "err_w", "setup"):
        os.close(fds[name])
    caps = {out_r: int(lim["stdout_bytes"]), err_r: int(lim["stderr_bytes"])}
    bufs: dict[int, bytearray] = {out_r: bytearray(), err_r: bytearray()}
    cut: dict[int, bool] = {out_r: False, err_r: False}
    killed, reason = "", ""

    def kill(status: str, why: str) -> None:
        nonlocal killed, reason
        if not killed:
            killed, reason = status, why
        try:
            os.kill(-1, _signal.SIGKILL)  # every process but this one (PID 1)
        except ProcessLookupError:
            pass

    def read(fd: int) -> bool:
        data = os.read(fd, 65536)
        if not data:
            poller.unregister(fd)
            return False
        room = caps[fd] - len(bufs[fd])
        bufs[fd] += data[: max(room, 0)]
        if len(data) > room:
            cut[fd] = True
            if lim.get("kill_on_output_limit", True):
                which = "stdout" if fd == out_r else "stderr"
                kill("OUTPUT_LIMIT", f"{which} exceeded {caps[fd]} bytes")
        return True

    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    for fd in (out_r, err_r):
        poller.register(fd, select.POLLIN | select.POLLHUP)
    poller.register(pidfd, select.POLLIN)
    exited = False
    while not exited:
        left, why = _over_limit(start, t0, lim)
        if why and not killed:
            kill("TIMEOUT", why)
        for fd, _ev in poller.poll(min(max(left, 0.05), CPU_POLL_S) * 1000):
            if fd == pidfd:
                exited = True
            else:
                read(fd)
    if not killed:
        worker_child.raise_if_killed_before_confined(pid, uid)
    _, status, ru = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    os.close(pidfd)
    left_over, cleanup_failed = worker_cleanup.clean()  # nothing the run started may outlive it
    for fd in (out_r, err_r):
        os.set_blocking(fd, False)
        try:
            while read(fd):
                pass
        except (BlockingIOError, KeyError):
            pass
        os.close(fd)
    marker = os.pread(fds["res"], 1, 0)
    os.close(fds["res"])
    setup = b""
    while chunk := os.read(setup_r, 4096):  # its write end closed before the program ran
        setup += chunk
    os.close(setup_r)
    reply = {
        "exit_status": status,
        "killed": killed,
        "reason": reason,
        "memory_error": marker == b"M",
        "setup_error": "" if setup == b"ok" else setup.decode(errors="replace") or "no report",
        "wall_s": wall,
        "peak_rss_mb": max(0, ru.ru_maxrss * 1024 - server_rss) / 1048576.0,
        "stdout": worker_framing.b64(bytes(bufs[out_r])),
        "stderr": worker_framing.b64(bytes(bufs[err_r])),
        "stdout_truncated": cut[out_r],
        "stderr_truncated": cut[err_r],
        "outlived": left_over,
    }
    if cleanup_failed:
        reply["cleanup_failed"] = cleanup_failed
    return worker_meter.metered(start, reply)  # every descendant, reaped above


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


def _pin(core: object) -> None:
    """Put this request process, and so the call's child it forks next, on one core: `core`
    (the one the call's measurement owns) or, when it is not this sandbox's, the one it runs on
    now. A list: those cores (a run given several). The request process ends with the call:
    nothing to restore."""
    if isinstance(core, list):
        try:
            os.sched_setaffinity(0, {int(c) for c in core} & os.sched_getaffinity(0) or
                                 os.sched_getaffinity(0))  # fmt: skip
        except (OSError, ValueError, TypeError):
            pass
        return
    pyworker_batch._share_a_core(core if isinstance(core, int) else None)


def main() -> None:
    """argv: the host connection's fd, the calls' uid, the test processes' uid, the cgroup CPU
    counter's fd (-1: none) and its kind ('v1': cpuacct.usage, 'v2': cpu.stat), the most
    entries a call may leave for the cleanup, and the memory cgroup's usage and high-water
    mark fds (-1: none)."""
    global _sock_fd, _check_uid
    sock = _sock_fd = int(sys.argv[1])
    uid = int(sys.argv[2])
    _check_uid = int(sys.argv[3])
    worker_meter.cg_fd, worker_meter.cg_kind = int(sys.argv[4]), sys.argv[5]
    worker_cleanup.max_entries = int(sys.argv[6])
    worker_meter.mem_fds = (int(sys.argv[7]), int(sys.argv[8]))
    # The parent's own stdio is /dev/null: nothing it writes or buffers can reach a program.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    _signal.signal(_signal.SIGPIPE, _signal.SIG_DFL)  # bubblewrap's --die-with-parent covers exit
    for name in PRELOAD:
        __import__(name)
    gc.freeze()
    worker_framing.send(sock, {"ready": True, "pid": os.getpid(), "cgroup": worker_meter.cgroup_ns() >= 0,
                 "preloaded": sorted(PRELOAD)})  # fmt: skip
    _zygote(sock, uid)


def _zygote(sock: int, uid: int) -> None:
    """Fork the request processes, one per call, until one ends the worker (the host closed
    the connection, a call's cleanup failed, a request process ended without replying: the
    host sees the connection close and restarts the worker).

    The next call's process is forked as soon as the current one has metered and cleaned up
    its call ("go"), so that its fork and its reading of the next request overlap the current
    one's reply; it meters nothing and replies nothing until the zygote has reaped the current
    one ("turn": no CPU of two calls in one measurement, replies in order, no zombie for its
    cleanup to find)."""
    before = -1  # the request process whose call is done but which may not have exited
    while True:
        go_r, go_w = os.pipe()
        turn_r, turn_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            code = 2
            try:
                os.close(go_r)
                os.close(turn_w)
                code = _request_process(sock, uid, go_w, turn_r)
            finally:
                os._exit(code)
        os.close(go_w)
        os.close(turn_r)
        if before > 0 and not _reaped(before):
            return
        os.close(turn_w)  # its turn: the one before it is gone
        go = os.read(go_r, 1)
        os.close(go_r)
        if not go:  # it ended the worker, or died
            _reaped(pid)
            return
        before = pid


def _reaped(pid: int) -> bool:
    """Wait for request process `pid` (reaping whatever else ends meanwhile); whether it
    replied and the worker goes on."""
    while True:
        try:
            done, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return False
        if done == pid:
            return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


_go_fd = -1  # the request process's "call done" pipe to the zygote
_turn_fd = -1  # EOF once the request process before this one is reaped


def _await_turn() -> None:
    """In a request process: wait until the one before it is gone (before metering anything,
    and before replying)."""
    global _turn_fd
    if _turn_fd >= 0:
        os.read(_turn_fd, 1)
        os.close(_turn_fd)
        _turn_fd = -1


def _request_process(sock: int, uid: int, go_w: int, turn_r: int) -> int:
    """One call, in a process of its own: 0 when it replied and the worker goes on."""
    global _go_fd, _turn_fd
    _go_fd, _turn_fd = go_w, turn_r
    # The call's orphans (a daemon, a child whose parent exited) become this process's: its
    # cleanup reaps them, and their rusage is the call's.
    _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    # A write to a pipe the program closed is an EPIPE this process handles as the program's
    # failure, never a SIGPIPE that kills it (a dead request process is the worker's failure:
    # the program's sample dropped as infrastructure; red team round 4). The call's children
    # inherit it, as `python3` itself ignores SIGPIPE.
    _signal.signal(_signal.SIGPIPE, _signal.SIG_IGN)
    global _ipc_error
    _ipc_error = _own_ipc_namespace()
    return 0 if _serve_one(sock, uid) else 1


_MODES = {
    "program": _run_program,
    "check": _check_call,
    "batch": lambda req, uid: pyworker_batch.batch_call(req, uid, sys.modules[__name__]),
}


def _serve_one(sock: int, uid: int) -> bool:
    """Read and answer one request (this process's only one); False when the worker must end.
    A call's child walking its frames up (`sys._getframe().f_back...`) finds its own request
    and nothing of another call's request or reply: this process never read any."""
    global _checker_unread
    try:
        req = worker_framing.recv(sock)
    except EOFError:
        return False
    _checker_unread = str(req.get("mode")) == "check" or req.get("mode") not in _MODES
    try:
        if _ipc_error:  # never run a call in an IPC namespace another call could share
            raise OSError(f"no IPC namespace of the call's own: {_ipc_error}")
        reply = _MODES.get(str(req.get("mode")), _call)(req, uid)
    except Exception as exc:  # noqa: BLE001 - the worker's own fault, reported as such
        reply = {"status": "SANDBOX_ERROR", "error": f"{type(exc).__name__}: {exc}"}
    if _checker_unread:  # its test code is still in the socket: this connection is done
        reply.setdefault("cleanup_failed", "the worker failed before reading the test code or "
                         "the call's arguments")  # fmt: skip
    _await_turn()
    if not reply.get("cleanup_failed"):
        os.write(_go_fd, b"g")  # metered and clean: the next request process may start
    worker_framing.send(sock, reply)
    # something of the call stayed: this sandbox ends, the host starts afresh
    return not reply.get("cleanup_failed")


if __name__ == "__main__":
    main()
