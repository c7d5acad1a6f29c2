"""`PythonWorker`: one warm, isolated interpreter serving calls (see `perfgym.sandbox.pyworker`)."""

from __future__ import annotations

import base64
import collections
import itertools
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from perfgym.sandbox import seccomp, spawner, zygote_ext
from perfgym.sandbox.base import SandboxConfig, private_mounts
from perfgym.sandbox.batch_messages import BatchResult, batch_request, batch_result
from perfgym.sandbox.bwrap import find_bwrap
from perfgym.sandbox.execution import Status
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.pyworker.framing import PIPELINE_BYTES, frame, recv, reply_backstop_s, send
from perfgym.sandbox.view import INSIDE_MOUNT, base_args, hidden_paths, program_env
from perfgym.sandbox.worker_cgroup import WorkerCgroup
from perfgym.sandbox.worker_messages import (
    DEFAULT_CALL_LIMITS,
    CallResult,
    ProgramResult,
    call_request,
    call_result,
    check_request,
    program_result,
)

#: The worker's server as its bubblewrap sees it (only `_inside` is bound there).
SERVER = f"{INSIDE_MOUNT}/pyworker_server.py"
_uids = itertools.count(0)
_UID_BASE = 100_000
#: An assertion call's test process runs as the worker's uid plus this: a uid the candidate's
#: process does not share (it can neither signal nor trace the test process).
_CHECK_UID_OFFSET = 1 << 31
#: Entries a call may leave in /tmp and /dev/shm for the worker to delete; beyond that the
#: worker is restarted (a fresh tmpfs) and the call fails.
CLEANUP_MAX_ENTRIES = 200_000
#: Set for the worker's interpreter only (see `_start`); never in a program's environment.
BIND_NOW = "LD_BIND_NOW"
#: CAP_SYS_ADMIN: each request process unshares its call's IPC namespace, then drops it.
_WORKER_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_KILL", "CAP_FOWNER",
                "CAP_DAC_OVERRIDE", "CAP_SYS_ADMIN")  # fmt: skip


class PythonWorker:
    """One isolated interpreter serving calls one at a time."""

    def __init__(
        self,
        config: SandboxConfig | None = None,
        disk_bytes: int = 64 << 20,
        cleanup_max_entries: int = CLEANUP_MAX_ENTRIES,
    ) -> None:
        self.config = config or SandboxConfig()
        # A uid of its own across every process on the host (RLIMIT_NPROC counts per uid: a
        # fork bomb in one worker must not starve a call in another process's worker).
        self.uid = _UID_BASE + os.getpid() * 256 + next(_uids) % 256
        #: The core a batch's asking parent and answering child share (None: the core the
        #: worker is on when the batch starts); a pool spreads its workers' over its cores.
        self.home_core: int | None = None
        self.disk_bytes = disk_bytes
        self.cleanup_max_entries = cleanup_max_entries
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None
        self._cgroup: WorkerCgroup | None = None
        #: Paths hidden in the running worker's view; `_also_hidden`: the per-call paths among
        #: them, kept on restarts (a worker hides every path a call asked it to, so calls that
        #: ask for fewer are served without a restart).
        self._hidden: list[str] = []
        self._also_hidden: list[str] = []
        self.calls = 0
        self.starts = 0
        #: Calls whose leftovers the worker could not clean (each restarted the worker).
        self.failed_cleanups = 0
        #: Why calls' CPU is rusage only ('' when the worker's cgroup counts it).
        self.cgroup_unavailable = ""

    @property
    def restarts(self) -> int:
        """Times the worker was started again after its first start (a failed cleanup, a
        crash, a call that hides paths this worker shows)."""
        return max(0, self.starts - 1)

    def _start(self) -> socket.socket:
        host_end, child_end = socket.socketpair()
        fd = child_end.fileno()
        python = self.config.python or os.path.realpath(sys.executable)
        argv = [find_bwrap(), "--unshare-ipc", "--unshare-uts", "--unshare-net", "--unshare-pid"]
        argv += ["--as-pid-1", "--die-with-parent", "--new-session", "--hostname", "sandbox"]
        # No keyring calls in the worker or any call (keys outlive namespaces); each request
        # process makes its call's own IPC namespace (pyworker_server.py).
        # A traced zombie hung the worker; its calls share one network namespace.
        filter_fd = seccomp.filter_fd(refuse_ptrace=True, refuse_inet=True,
                                      isolate_locks=self.config.isolate_locks)
        argv += seccomp.bwrap_args(filter_fd)
        self._hidden = hidden_paths(self.config, self._also_hidden)
        argv += base_args(self.config, hide=self._also_hidden)  # the allow-list view
        for private, size in private_mounts(self.disk_bytes):  # emptied after every call
            argv += ["--size", str(size), "--perms", "1777", "--tmpfs", private]
        for cap in _WORKER_CAPS:
            argv += ["--cap-add", cap]
        self._cgroup, self.cgroup_unavailable = WorkerCgroup.create()
        cg_fd, cg_kind, mem_fds, calls_fds = -1, "none", (-1, -1), (-1, -1)
        if self._cgroup is not None:
            cg_fd, cg_kind = self._cgroup.usage_fd(), self._cgroup.kind
            mem_fds = self._cgroup.memory_fds()
            calls_fds = self._cgroup.calls_fds()
            argv = self._cgroup.wrap(argv)
        argv += ["--", python, "-I", "-S", SERVER, str(fd), str(self.uid),
                 str(self.uid + _CHECK_UID_OFFSET), str(cg_fd), cg_kind,
                 str(self.cleanup_max_entries), str(mem_fds[0]), str(mem_fds[1]),
                 zygote_ext.extension_path(self.config.python) or "-",
                 str(calls_fds[0]), str(calls_fds[1])]  # fmt: skip
        passed = tuple(f for f in (fd, filter_fd, cg_fd, *mem_fds, *calls_fds) if f >= 0)
        self.starts += 1
        try:
            # The programs' default environment, never this host's: the worker's initial
            # environment stays in every call's stack (/proc/self/environ, os.environ), and the
            # host's may hold credentials (an API key, a token). LD_BIND_NOW: the zygote binds
            # every symbol at start, so no request process or call child resolves (and writes)
            # the same PLT entries again; the server drops it from the environment it passes on.
            env = {**program_env(None), BIND_NOW: "1"}
            self._proc = spawner.popen(argv, pass_fds=passed, stdin=subprocess.DEVNULL, env=env)
        finally:
            child_end.close()
            os.close(filter_fd)
            for f in (cg_fd, *mem_fds, *calls_fds):
                if f >= 0:
                    os.close(f)
        self._sock = host_end
        hello = recv(host_end)
        if not hello.get("ready"):
            raise RuntimeError(f"python worker failed to start: {hello}")
        #: Which loop the zygote serves its commands with ("c": zygote_loop.c; "python").
        self.zygote_loop = str(hello.get("zygote_loop", "python"))
        #: Why the zygote serves its commands in Python ('' when in C).
        self.zygote_loop_error = str(hello.get("zygote_loop_error", ""))
        if self._cgroup is not None and not hello.get("cgroup"):
            self.cgroup_unavailable = "the worker could not read its cgroup's CPU counter"
        return host_end

    def call(
        self,
        source: str,
        entry: str | None,
        args: Sequence[Any] = (),
        limits: Limits | None = None,
        filename: str = "solution.py",
        *,
        hide: Sequence[str] = (),
        core: int | Sequence[int] | None = None,
    ) -> CallResult:
        """Run `source` as a fresh module and call `entry(*args)` in an isolated child
        (`hide`: host paths the call must not see, beyond the configured ones), on one core:
        `core` (the one its measurement owns), else this worker's home core, else the one the
        worker runs on when the call starts."""
        limits = limits or DEFAULT_CALL_LIMITS
        req = self._pinned(call_request(source, entry, args, limits, filename), core)
        return call_result(self._request(req, hide), limits, self.cgroup_unavailable)

    def check_call(
        self,
        source: str,
        checker: str,
        entry: str,
        limits: Limits | None = None,
        filename: str = "solution.py",
        *,
        hide: Sequence[str] = (),
        core: int | Sequence[int] | None = None,
    ) -> CallResult:
        """Judge `source` by an assertion oracle: `checker` defines `check(candidate)`, which is
        called with the program's `entry`. The test code runs in a process of its own that
        calls the program's functions across a pipe (see `_inside/pyworker_check.py`); OK
        when `check` returned, RUNTIME_ERROR when it raised. Wall time and CPU are both
        processes'; both run on one core, as `call`'s child does."""
        limits = limits or DEFAULT_CALL_LIMITS
        req = self._pinned(check_request(source, checker, entry, limits, filename), core)
        return call_result(self._request(req, hide), limits, self.cgroup_unavailable)

    def _pinned(self, req: dict[str, Any], core: int | Sequence[int] | None) -> dict[str, Any]:
        """`req` with the core(s) its processes run on (see `call`)."""
        if core is None:
            core = self.home_core
        if isinstance(core, int):
            req["core"] = core
        elif core is not None:
            req["core"] = [int(c) for c in core]
        return req

    def batch(
        self,
        source: str,
        entry: str,
        tests: Sequence[tuple[Sequence[Any], Limits]],
        limits: Limits,
        *,
        fail_fast: bool = False,
        hide: Sequence[str] = (),
    ) -> BatchResult:
        """Call `entry(*args)` for every (args, limits) of `tests`, in order, in one fresh
        child of `source`'s module (see `_inside/pyworker_batch.py`): one verdict per test
        asked; a crash or timeout ends the batch at its test."""
        req = batch_request(source, entry, tests, limits, fail_fast=fail_fast)
        if self.home_core is not None:
            req["core"] = self.home_core
        return batch_result(self._request(req, hide))

    def run_program(
        self,
        source: str,
        *,
        stdin: bytes | str = b"",
        argv: Sequence[str] = ("/tmp/main.py",),
        limits: Limits | None = None,
        env: Mapping[str, str] | None = None,
        hide: Sequence[str] = (),
    ) -> ProgramResult:
        """Run `source` as `python3 argv[0] argv[1:]` would, stdin fed from `stdin`, stdout and
        stderr captured under the limits' caps, in an isolated child (program mode)."""
        limits = limits or Limits()
        data = stdin.encode() if isinstance(stdin, str) else bytes(stdin)
        req = {
            "mode": "program",
            "source": source,
            "argv": list(argv),
            "stdin": base64.b64encode(data).decode(),
            "env": program_env(env),
            "limits": {**limits.model_dump(), "cpu_s": limits.effective_cpu_s},
        }
        reply = self._request(req, hide)
        if "worker_failed" in reply:
            return ProgramResult(status=Status.SANDBOX_ERROR, reason=reply["worker_failed"])
        if "undecodable" in reply:  # the program's output made the reply too deep to decode
            return ProgramResult(status=Status.RUNTIME_ERROR, reason=reply["undecodable"])
        return program_result(reply, limits, self.cgroup_unavailable)

    def _request(self, req: dict[str, Any], hide: Sequence[str] = ()) -> dict[str, Any]:
        with self._lock:
            try:
                sock = self._sock if self._alive() and self._hides(hide) else self._restart(hide)
                assert sock is not None
                send(sock, req)
                sock.settimeout(reply_backstop_s(req))
                try:
                    reply = recv(sock)
                finally:
                    sock.settimeout(None)
            except (OSError, EOFError, RuntimeError) as exc:
                self._stop()
                return {"worker_failed": f"worker failed: {exc}"}
            self._served(reply)
        return reply

    def _served(self, reply: dict[str, Any]) -> None:
        """Count a reply; a failed cleanup ended the worker's sandbox: stop it (the next
        request starts a fresh one)."""
        self.calls += 1
        if reply.get("cleanup_failed"):
            self.failed_cleanups += 1
            self._stop()

    def stats(self) -> dict[str, int]:
        """Counters for a health check: calls served, restarts, failed cleanups."""
        return {"calls": self.calls, "restarts": self.restarts,
                "failed_cleanups": self.failed_cleanups}  # fmt: skip

    def usage(self) -> dict[str, int]:
        """The running worker's cgroup counters (`WorkerCgroup.usage`: CPU in ns and page
        faults of every process it ran); empty without a cgroup or a running worker."""
        cgroup = self._cgroup
        return cgroup.usage() if cgroup is not None else {}

    def stream(
        self,
        take: Callable[[], tuple[int, dict[str, Any]] | None],
        window: int = 4,
        hide: Sequence[str] = (),
    ) -> dict[int, dict[str, Any]]:
        """Serve the requests `take` hands out (until it returns None), pipelined: up to
        `window` are sent ahead, so the worker goes from one reply straight to the next
        request instead of waiting for this host to read, decide and send. Returns the raw
        replies by index. Calls still run one at a time, each in its own child.

        Only a few small requests are ever in flight (at most `PIPELINE_BYTES`): a worker
        blocked writing a large reply can then never meet this host blocked sending. When the
        worker dies, the request it was serving fails (as `call` would); the rest are sent
        again to a restarted worker, which had not started them."""
        out: dict[int, dict[str, Any]] = {}
        pending: collections.deque[tuple[int, bytes, float]] = collections.deque()
        job: tuple[int, dict[str, Any]] | None = None
        with self._lock:
            sock: socket.socket | None = None
            while True:
                try:
                    if sock is None:
                        sock = (
                            self._sock
                            if self._alive() and self._hides(hide)
                            else self._restart(hide)
                        )
                        assert sock is not None
                        for _i, data, _s in pending:
                            sock.sendall(data)
                    while len(pending) < window:
                        job = job or take()
                        if job is None:
                            break
                        data = frame(job[1])
                        ahead = sum(len(d) for _i, d, _s in pending)
                        if pending and ahead + len(data) > PIPELINE_BYTES:
                            break
                        sock.sendall(data)
                        pending.append((job[0], data, reply_backstop_s(job[1])))
                        job = None
                    if not pending:
                        return out
                    sock.settimeout(sum(p[2] for p in pending))  # the head's, and the rest's
                    try:
                        reply = recv(sock)
                    finally:
                        sock.settimeout(None)
                except (OSError, EOFError, RuntimeError) as exc:
                    self._stop()
                    sock = None
                    failed = {"worker_failed": f"worker failed: {exc}"}
                    if pending:
                        out[pending.popleft()[0]] = failed
                    elif job is not None:
                        out[job[0]] = failed
                        job = None
                    continue
                out[pending.popleft()[0]] = reply
                self._served(reply)
                if reply.get("cleanup_failed"):  # the rest go to a fresh worker: none started
                    sock = None

    def _alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None and self._sock is not None

    def _hides(self, hide: Sequence[str]) -> bool:
        """The paths hidden when this worker started cover every path a call with `hide` must
        not see (the configured ones too: a caller may have added to them)."""
        return set(hidden_paths(self.config, hide)) <= set(self._hidden)

    def _restart(self, hide: Sequence[str] = ()) -> socket.socket:
        """A fresh worker hiding `hide` as well as every path an earlier call asked for."""
        self._stop()
        self._also_hidden = list(dict.fromkeys([*self._also_hidden, *map(str, hide)]))
        return self._start()

    def _stop(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait()
            self._proc = None
        if self._cgroup is not None:
            self._cgroup.destroy()
            self._cgroup = None

    def close(self) -> None:
        with self._lock:
            self._stop()
