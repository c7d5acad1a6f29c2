"""Warm Python worker: PID 1 of its own sandbox (the zygote), a request process that serves
calls, and a child per call that runs the candidate.

The pristine parent (PID 1, the zygote) never reads a request, never compiles, never sees a
reply. It forks a request process, which reads requests from the host connection (exactly one
frame each: the next stays in the socket). A function call (the common case: thousands per RL
step) costs one fork: the request process compiles the source (cached, marshalled), puts what
the child needs into a memfd (the code and the limits, never the source) and asks the zygote to
fork the call's child over it and the call's channels (`zygote_commands`, `zygote_client`);
it then hands over the arguments, meters, has the zygote reap the child and the call's
orphans, cleans up and replies, and goes on to the next request. Every other mode (an
assertion call, a program run, a batch) forks its processes from the request process itself,
so only a fresh request process serves one, as its first request, and then ends; a request
process that meets one later passes it on to the zygote unread and ends, and the next one
reads it first. So a process that runs a candidate descends from the zygote alone, or from a
request process that has held nothing but that call's own request: no earlier call's source (a
reference, another candidate), no test code, no earlier reply, not even as freed heap that
ctypes could read back. An assertion call's test code is a second frame, read only after the
candidate's process was forked; so are a function call's arguments, handed to its child only
after its module ran (`_call`). What the zygote has imported is a fixed list (`PRELOAD`), the
same for every candidate, imported once at start; nothing a candidate names is ever imported
there (an import can have side effects, and module state would pass from one candidate to the
next). Its own stdio is /dev/null, and every child gets standard streams the zygote made once
and never used, so nothing buffered reaches a program.

A function call's child executes the module in a fresh namespace, calls the entry point,
writes the tagged-JSON result into a memfd and exits: that channel carries only what the
program's process says it returned, which the program controls anyway (its value is judged on
the host). An assertion call (mode "check", HumanEval's `check(candidate)`) runs the candidate
and the task's test code in two processes under two uids: the test code calls the candidate's
functions through a socket, receives plain values (`valuecodec`), and only the test process
holds the result channel. A program run's child (mode "program") runs the source as
`__main__` over fresh stdio, exactly as `python3 prog.py` would, and the parent captures its
output under caps.

Every call has an IPC namespace of its own: a function call's child unshares one before it
runs anything; a request process unshares one at its start (then drops CAP_SYS_ADMIN) for the
calls it forks itself. SysV shared memory, queues and semaphores (and POSIX message queues) a
call makes die with it, and no call sees another's. Afterwards the request process SIGKILLs
every other process in its PID namespace but the zygote (a function call's processes are the
zygote's to reap, PID 1 inheriting its orphans; a call it forked itself is its own, a child
subreaper) and empties /tmp and /dev/shm without recursion; a cleanup that fails, or leaves
anything, is reported and the worker exits (the host restarts it); so does a request process
that ends without replying. CPU is the call's every process: rusage of all reaped
descendants, cross-checked against the worker's cpuacct cgroup (when the host gave one, less
the zygote's and the request process's own CPU) so that a child nobody waited for (SIGCHLD
ignored, a daemon) is counted and flagged.
Messages are 4-byte big-endian length + JSON over a stream socket.

This file is the zygote and the request process's dispatch; the modes live beside it (a plain
script's sibling imports, the directory bound into the sandbox): `pyworker_request` (what every
mode shares, and the request process's state), `pyworker_call` (function calls),
`pyworker_check_call` (assertion calls), `pyworker_run_program` (program runs),
`pyworker_batch` (batches).
"""

from __future__ import annotations

# Imports are kept to what the server needs (no typing, socket, shutil, hashlib, base64 or the
# signal wrapper): every call forks this process, and the fork and the child's exit cost time
# in proportion to its anonymous memory (6.7 -> 4.0 MB; 0.25 ms of CPU less per call here).
# `_socket` (the C module alone) carries the zygote's descriptors.
import _imp
import _signal
import _socket
import ctypes
import gc
import json
import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ipc_namespace  # noqa: E402
import process_view  # noqa: E402
import pyworker_batch  # noqa: E402
import pyworker_call  # noqa: E402
import pyworker_request  # noqa: E402
import worker_cleanup  # noqa: E402
import worker_forget  # noqa: E402
import worker_framing  # noqa: E402
import worker_meter  # noqa: E402
import worker_rehearsal  # noqa: E402
import zygote_client  # noqa: E402
import zygote_commands  # noqa: E402
from pyworker_call import _call  # noqa: E402
from pyworker_check_call import _check_call  # noqa: E402
from pyworker_request import _await_turn  # noqa: E402
from pyworker_run_program import _run_program  # noqa: E402

#: What the parent imports at start, the same for every candidate: modules without import-time
#: side effects that function-task candidates commonly use (HumanEval's prompts all import
#: typing), so their calls need not import them. Nothing else is ever imported here; a
#: program's other imports happen in its own child.
PRELOAD = ("bisect", "collections", "functools", "heapq", "itertools", "math", "operator", "re",
           "string", "typing")  # fmt: skip


_PR_SET_CHILD_SUBREAPER = 36
_libc = ctypes.CDLL(None, use_errno=True)
#: Why this request process has no IPC namespace of its own ('' when it has one).
_ipc_error = ""


def main() -> None:
    """argv: the host connection's fd, the calls' uid, the test processes' uid, the cgroup CPU
    counter's fd (-1: none) and its kind ('v1': cpuacct.usage, 'v2': cpu.stat), the most
    entries a call may leave for the cleanup, the memory cgroup's usage and high-water mark
    fds (-1: none), the zygote's C loop (`zygote_loop.c`, built; '-': none), and the calls'
    memory cgroup's `cgroup.procs` and `memory.force_empty` fds (-1: none; `worker_forget`)."""
    sock = pyworker_request._sock_fd = int(sys.argv[1])
    uid = int(sys.argv[2])
    pyworker_request._check_uid = int(sys.argv[3])
    worker_meter.cg_fd, worker_meter.cg_kind = int(sys.argv[4]), sys.argv[5]
    worker_cleanup.max_entries = int(sys.argv[6])
    worker_meter.mem_fds = (int(sys.argv[7]), int(sys.argv[8]))
    loop, loop_error = _c_loop(sys.argv[9] if len(sys.argv) > 9 else "-")
    if len(sys.argv) > 11:
        worker_forget.fds = (int(sys.argv[10]), int(sys.argv[11]))
    # Bound at start (the host set it for this interpreter alone): no program inherits it.
    os.environ.pop("LD_BIND_NOW", None)
    # The parent's own stdio is /dev/null: nothing it writes or buffers can reach a program.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    _signal.signal(_signal.SIGPIPE, _signal.SIG_DFL)  # bubblewrap's --die-with-parent covers exit
    proc_hidden = process_view.hide_other_users()
    cgroups_hidden = process_view.hide_cgroups()
    for name in PRELOAD:
        __import__(name)
    worker_rehearsal.rehearse()  # quickened code and a warm type cache for every request process
    gc.freeze()
    worker_framing.send(sock, {"ready": True, "pid": os.getpid(), "cgroup": worker_meter.cgroup_ns() >= 0,
                 "preloaded": sorted(PRELOAD), "proc_hidden": not proc_hidden, "proc_error": proc_hidden,
                 "cgroups_hidden": not cgroups_hidden, "cgroups_error": cgroups_hidden,
                 "zygote_loop": "c" if loop is not None else "python",
                 "zygote_loop_error": loop_error})  # fmt: skip
    _zygote(sock, uid, loop)


def _c_loop(path: str) -> tuple[types.ModuleType | None, str]:
    """The zygote's command loop in C (`zygote_loop.c`), loaded from `path` before anything is
    frozen, and ''; or None ('-', or it would not load: the Python loop,
    `zygote_commands.Commands`, serves the same protocol) and why."""
    if path == "-":
        return None, "none was built"
    try:
        spec = types.SimpleNamespace(name="_perfgym_zygote", origin=path)
        module = _imp.create_dynamic(spec)
        _imp.exec_dynamic(module)
        return module, ""
    except Exception as exc:  # noqa: BLE001 - reported in the worker's greeting
        return None, f"{type(exc).__name__}: {exc}"[:300]


def _zygote(sock: int, uid: int, loop: types.ModuleType | None = None) -> None:
    """Fork the request processes, and every function call's child (`zygote_commands`), until
    the worker ends (the host closed the connection, a call's cleanup failed, a request process
    ended without replying: the host sees the connection close and restarts the worker).

    A request process serves function calls one after another, asking this process for each
    call's child. A call of another mode (an assertion call, a program run, a batch) forks its
    processes from the request process itself, so only a fresh one serves it, as its first
    request, and then ends: a request process that meets one later passes it on here unread
    ("hand over") and ends, and the next one reads it first. After such a call, the next
    request process is forked as soon as the current one has metered and cleaned up ("go"),
    so that its fork overlaps the current one's reply; it meters nothing and replies nothing
    until this process has reaped the current one ("turn": no CPU of two calls in one
    measurement, replies in order, no zombie for its cleanup to find). `loop`: the commands
    are served in C (`zygote_loop.c`, the same protocol), where no Python code of this
    process runs between a call's forks."""
    before = -1  # the request process whose call is done but which may not have exited
    handed = -1  # a request passed on for the next request process to read first
    home = os.sched_getaffinity(0)
    home_list = sorted(home)
    while True:
        if loop is not None:
            loop.sit_home(home_list)
        else:
            zygote_commands.sit_home(home)
        mine, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_SEQPACKET)
        turn_r, turn_w = os.pipe()
        worker_forget.shuffle_pids()
        pid = os.fork()
        if pid == 0:
            code = 2
            try:
                mine.detach()
                os.close(turn_w)
                code = _request_process(sock, uid, theirs.detach(), turn_r, handed)
            finally:
                os._exit(code)
        theirs.close()
        os.close(turn_r)
        if handed >= 0:
            os.close(handed)
            handed = -1
        if before > 0 and not _reaped(before):
            return
        os.close(turn_w)  # its turn: the one before it is gone
        if loop is not None:
            how, handed, request_status = _serve_in_c(loop, mine, pid, uid)
        else:
            commands = zygote_commands.Commands(mine, pid, uid, pyworker_call.spawned_child)
            how, handed = commands.serve()
            request_status = commands.request_status
        mine.close()
        if how == "go":
            before = pid
            continue
        before = -1
        if request_status is not None:  # a reap found it dead
            return
        if not _reaped(pid) or how != "hand over":
            return


def _serve_in_c(loop: types.ModuleType, conn: _socket.socket, pid: int, uid: int
                ) -> tuple[str, int, int | None]:  # fmt: skip
    """`Commands.serve` in C: (how, handed, the request process's status if a reap found it
    dead). A function call's child returns here, forked as `os.fork` forks, and runs as
    `pyworker_call.spawned_child`; it never returns."""
    how, second, third = loop.serve(conn.fileno(), pid, uid)
    if how != "child":
        return how, second, third
    try:
        conn.detach()  # closed by the child's own sweep, never shut down
        pyworker_call.spawned_child(second, uid, third)
    finally:
        os._exit(2)


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


def _request_process(sock: int, uid: int, zygote_fd: int, turn_r: int, handed: int) -> int:
    """Requests, in a process of their own: 0 when it ends and the worker goes on (a call of
    another mode served, or passed on)."""
    pyworker_request._turn_fd = turn_r
    zygote_client.connect(zygote_fd)
    # The orphans of a call this process forks (a daemon, a child whose parent exited) become
    # this process's: its cleanup reaps them, and their rusage is the call's.
    _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    # A write to a pipe the program closed is an EPIPE this process handles as the program's
    # failure, never a SIGPIPE that kills it (a dead request process is the worker's failure:
    # the program's sample dropped as infrastructure; red team round 4). The call's children
    # inherit it, as `python3` itself ignores SIGPIPE.
    _signal.signal(_signal.SIGPIPE, _signal.SIG_IGN)
    global _ipc_error
    # A fresh /tmp and /dev/shm while it still may mount (`worker_forget`): the processes of a
    # call of another mode are this process's own forks, its first request.
    renewed = worker_forget.renew_tmpfs()
    _ipc_error = ipc_namespace.own(drop_admin=True) or (f"no fresh tmpfs: {renewed}" if renewed
                                                       else "")  # fmt: skip
    first = True
    while True:
        try:
            raw = _first_request(handed) if first and handed >= 0 else worker_framing.recv_raw(sock)
        except EOFError:
            return 1
        req = json.loads(raw)
        if type(req) is not dict:
            req = {"mode": "invalid"}
        if req.get("mode") in _MODES:
            if not first:  # it forks from this process: a fresh one serves it
                _hand_over(raw)
                return 0
            return 0 if _serve_one(sock, uid, req, go=True) else 1
        if not _serve_one(sock, uid, req, go=False):
            return 1
        first = False


def _first_request(fd: int) -> bytes:
    """The request the request process before this one passed on (a memfd, closed once read:
    no process this one forks inherits it)."""
    try:
        return os.pread(fd, os.fstat(fd).st_size, 0)
    finally:
        os.close(fd)


def _hand_over(raw: bytes) -> None:
    fd = os.memfd_create("request", 0)
    os.write(fd, raw)
    zygote_client.hand_over(fd)
    os.close(fd)


_MODES = {
    "program": _run_program,
    "check": _check_call,
    "batch": lambda req, uid: pyworker_batch.batch_call(req, uid, pyworker_request),
}


def _serve_one(sock: int, uid: int, req: dict, go: bool) -> bool:
    """Answer one request; False when the worker must end. `go`: a call of a mode that forks
    from this process, its only one (it says "go" once metered and clean). A call's child
    walking its frames up (`sys._getframe().f_back...`) finds its own request and nothing of
    another call's request or reply: a function call's child is the zygote's, and this
    process read nothing before a call of another mode."""
    pyworker_request._checker_unread = (
        str(req.get("mode")) == "check" or req.get("mode") not in _MODES
    )
    worker_forget.wanted = bool((req.get("limits") or {}).get("forget_page_cache"))
    try:
        if _ipc_error and go:  # never run a call in an IPC namespace another call could share
            raise OSError(f"no IPC namespace of the call's own: {_ipc_error}")
        reply = _MODES.get(str(req.get("mode")), _call)(req, uid)
    except Exception as exc:  # noqa: BLE001 - the worker's own fault, reported as such
        reply = {"status": "SANDBOX_ERROR", "error": f"{type(exc).__name__}: {exc}"}
        if not go:  # a call's child may live on: the zygote's cleanup
            _left, failed = worker_cleanup.clean(zygote_client.reap_exited)
            if failed:
                reply["cleanup_failed"] = failed
    if pyworker_request._checker_unread:  # its test code is still in the socket: end here
        reply.setdefault("cleanup_failed", "the worker failed before reading the test code or "
                         "the call's arguments")  # fmt: skip
    _await_turn()
    if go and not reply.get("cleanup_failed"):
        zygote_client.go()  # metered and clean: the next may start
    worker_framing.send(sock, reply)
    # something of the call stayed: this sandbox ends, the host starts afresh
    return not reply.get("cleanup_failed")


if __name__ == "__main__":
    main()
