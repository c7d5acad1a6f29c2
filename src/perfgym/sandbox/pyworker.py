"""Warm Python workers: already-isolated interpreters that fork a fresh child per call.

For function-level tasks (thousands of calls per RL step) starting an interpreter per call
dominates the cost. A `PythonWorker` is one long-lived bubblewrap holding a pristine
interpreter (`_inside/pyworker_server.py`); each `call` forks an unprivileged child that runs
the program's module in a fresh namespace and calls its entry point, and each `run_program`
forks one that runs a whole stdio program as `python3 prog.py` would. Nothing a call leaves
behind (files, module state, processes) is visible to the next call.
"""

from __future__ import annotations

import base64
import collections
import itertools
import json
import os
import queue
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from perfgym.sandbox import spawner
from perfgym.sandbox.base import WORK_DIR, SandboxConfig
from perfgym.sandbox.bwrap import find_bwrap
from perfgym.sandbox.execution import Status
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.view import INSIDE_MOUNT, base_args, hidden_paths, program_env
from perfgym.sandbox.worker_messages import (
    DEFAULT_CALL_LIMITS,
    CallResult,
    ProgramResult,
    call_request,
    call_result,
    program_result,
)

__all__ = ["CallResult", "ProgramResult", "PythonWorker", "PythonWorkerPool"]

#: The worker's server as its bubblewrap sees it (only `_inside` is bound there).
SERVER = f"{INSIDE_MOUNT}/pyworker_server.py"
_uids = itertools.count(0)
_UID_BASE = 100_000
_WORKER_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_KILL", "CAP_FOWNER",
                "CAP_DAC_OVERRIDE")  # fmt: skip


class PythonWorker:
    """One isolated interpreter serving calls one at a time."""

    def __init__(self, config: SandboxConfig | None = None, disk_bytes: int = 64 << 20) -> None:
        self.config = config or SandboxConfig()
        # A uid of its own across every process on the host (RLIMIT_NPROC counts per uid: a
        # fork bomb in one worker must not starve a call in another process's worker).
        self.uid = _UID_BASE + os.getpid() * 256 + next(_uids) % 256
        self.disk_bytes = disk_bytes
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None
        self._hidden: list[str] = []
        self.calls = 0

    def _start(self) -> socket.socket:
        host_end, child_end = socket.socketpair()
        fd = child_end.fileno()
        python = self.config.python or os.path.realpath(sys.executable)
        argv = [find_bwrap(), "--unshare-ipc", "--unshare-uts", "--unshare-net", "--unshare-pid"]
        argv += ["--as-pid-1", "--die-with-parent", "--new-session", "--hostname", "sandbox"]
        self._hidden = hidden_paths(self.config)
        argv += base_args(self.config)  # the allow-list view (hidden paths included)
        argv += ["--size", str(self.disk_bytes), "--perms", "1777", "--tmpfs", WORK_DIR]
        for cap in _WORKER_CAPS:
            argv += ["--cap-add", cap]
        argv += ["--", python, "-I", "-S", SERVER, str(fd), str(self.uid)]
        self._proc = spawner.popen(argv, pass_fds=(fd,), stdin=subprocess.DEVNULL)
        child_end.close()
        self._sock = host_end
        hello = _recv(host_end)
        if not hello.get("ready"):
            raise RuntimeError(f"python worker failed to start: {hello}")
        return host_end

    def call(
        self,
        source: str,
        entry: str | None,
        args: Sequence[Any] = (),
        limits: Limits | None = None,
        filename: str = "solution.py",
    ) -> CallResult:
        """Run `source` as a fresh module and call `entry(*args)` in an isolated child."""
        limits = limits or DEFAULT_CALL_LIMITS
        return call_result(self._request(call_request(source, entry, args, limits, filename)),
                           limits)  # fmt: skip

    def run_program(
        self,
        source: str,
        *,
        stdin: bytes | str = b"",
        argv: Sequence[str] = ("/tmp/main.py",),
        limits: Limits | None = None,
        env: Mapping[str, str] | None = None,
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
        reply = self._request(req)
        if "worker_failed" in reply:
            return ProgramResult(status=Status.SANDBOX_ERROR, reason=reply["worker_failed"])
        return program_result(reply, limits)

    def _request(self, req: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            try:
                sock = self._sock if self._alive() and self._current() else self._restart()
                assert sock is not None
                _send(sock, req)
                reply = _recv(sock)
            except (OSError, EOFError, RuntimeError) as exc:
                self._stop()
                return {"worker_failed": f"worker failed: {exc}"}
            self.calls += 1
        return reply

    def stream(
        self, take: Callable[[], tuple[int, dict[str, Any]] | None], window: int = 4
    ) -> dict[int, dict[str, Any]]:
        """Serve the requests `take` hands out (until it returns None), pipelined: up to
        `window` are sent ahead, so the worker goes from one reply straight to the next
        request instead of waiting for this host to read, decide and send. Returns the raw
        replies by index. Calls still run one at a time, each in its own child.

        Only a few small requests are ever in flight (at most `_PIPELINE_BYTES`): a worker
        blocked writing a large reply can then never meet this host blocked sending. When the
        worker dies, the request it was serving fails (as `call` would); the rest are sent
        again to a restarted worker, which had not started them."""
        out: dict[int, dict[str, Any]] = {}
        pending: collections.deque[tuple[int, bytes]] = collections.deque()
        job: tuple[int, dict[str, Any]] | None = None
        with self._lock:
            sock: socket.socket | None = None
            while True:
                try:
                    if sock is None:
                        sock = self._sock if self._alive() and self._current() else self._restart()
                        assert sock is not None
                        for _i, data in pending:
                            sock.sendall(data)
                    while len(pending) < window:
                        job = job or take()
                        if job is None:
                            break
                        data = _frame(job[1])
                        ahead = sum(len(d) for _i, d in pending)
                        if pending and ahead + len(data) > _PIPELINE_BYTES:
                            break
                        sock.sendall(data)
                        pending.append((job[0], data))
                        job = None
                    if not pending:
                        return out
                    reply = _recv(sock)
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
                self.calls += 1

    def _alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None and self._sock is not None

    def _current(self) -> bool:
        """The paths hidden when this worker started still cover every path to hide now (a
        judge hides each suite's directory as it reaches the suite's tasks)."""
        return set(hidden_paths(self.config)) <= set(self._hidden)

    def _restart(self) -> socket.socket:
        self._stop()
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

    def close(self) -> None:
        with self._lock:
            self._stop()


class PythonWorkerPool:
    """`size` warm workers (default: one per core) serving calls concurrently."""

    def __init__(self, size: int | None = None, config: SandboxConfig | None = None) -> None:
        self.size = size or len(os.sched_getaffinity(0))
        self.workers = [PythonWorker(config) for _ in range(self.size)]
        self._free: queue.Queue[PythonWorker] = queue.Queue()
        for w in self.workers:
            self._free.put(w)
        self._executor = ThreadPoolExecutor(max_workers=self.size)

    def call(self, source: str, entry: str | None, args: Sequence[Any] = (),
             limits: Limits | None = None) -> CallResult:  # fmt: skip
        worker = self._free.get()
        try:
            return worker.call(source, entry, args, limits)
        finally:
            self._free.put(worker)

    def run_program(
        self,
        source: str,
        *,
        stdin: bytes | str = b"",
        argv: Sequence[str] = ("/tmp/main.py",),
        limits: Limits | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ProgramResult:
        """`PythonWorker.run_program` on the next free worker."""
        worker = self._free.get()
        try:
            return worker.run_program(source, stdin=stdin, argv=argv, limits=limits, env=env)
        finally:
            self._free.put(worker)

    def map(self, calls: Iterable[tuple[str, str | None, Sequence[Any]]],
            limits: Limits | None = None) -> list[CallResult]:  # fmt: skip
        """Every call, in order, spread over the workers as they free up (pipelined: see
        `PythonWorker.stream`)."""
        limits = limits or DEFAULT_CALL_LIMITS
        reqs = [call_request(s, e, a, limits) for s, e, a in calls]
        jobs = iter(enumerate(reqs))
        lock = threading.Lock()

        def take() -> tuple[int, dict[str, Any]] | None:
            with lock:
                return next(jobs, None)

        def drive() -> dict[int, dict[str, Any]]:
            worker = self._free.get()
            try:
                return worker.stream(take)
            finally:
                self._free.put(worker)

        replies: dict[int, dict[str, Any]] = {}
        for f in [self._executor.submit(drive) for _ in range(min(self.size, len(reqs)))]:
            replies.update(f.result())
        return [call_result(replies[i], limits) for i in range(len(reqs))]

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        for w in self.workers:
            w.close()

    def __enter__(self) -> PythonWorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: Bytes of requests a pipelined worker may have unanswered (see `PythonWorker.stream`).
_PIPELINE_BYTES = 64 << 10


def _frame(obj: dict[str, Any]) -> bytes:
    data = json.dumps(obj).encode()
    return struct.pack(">I", len(data)) + data


def _send(sock: socket.socket, obj: dict[str, Any]) -> None:
    sock.sendall(_frame(obj))


def _recv(sock: socket.socket) -> dict[str, Any]:
    head = _recv_exact(sock, 4)
    (n,) = struct.unpack(">I", head)
    return json.loads(_recv_exact(sock, n))


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError("worker closed the connection")
        buf += chunk
    return bytes(buf)
