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
import itertools
import json
import os
import queue
import signal
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from perfgym.sandbox import spawner
from perfgym.sandbox._inside import valuecodec
from perfgym.sandbox.base import WORK_DIR, SandboxConfig
from perfgym.sandbox.bwrap import INSIDE, find_bwrap
from perfgym.sandbox.execution import Status
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.request import classify_exit, exit_of
from perfgym.sandbox.view import expose_args, hidden_paths, program_env

SERVER = INSIDE / "pyworker_server.py"
_uids = itertools.count(0)
_UID_BASE = 100_000
_WORKER_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_KILL", "CAP_FOWNER",
                "CAP_DAC_OVERRIDE")  # fmt: skip


class CallResult(BaseModel):
    """One call's outcome, measured from outside the call's process."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    status: Status
    phase: str = Field("run", description="'compile' when the source did not compile, else 'run'.")
    value: Any = Field(None, description="The entry point's return value (plain builtin types).")
    error: str = ""
    wall_s: float = Field(0.0, description="Fork of the call's child to its exit (external).")
    cpu_s: float = Field(0.0, description="User+system CPU of the call's child (wait4).")
    peak_rss_mb: float = Field(
        0.0, description="Resident memory the call added to the interpreter."
    )
    stdout: str = ""
    stdout_truncated: bool = False
    reported_call_s: float | None = Field(
        None, description="The entry point's duration as timed inside the child (untrusted)."
    )


class ProgramResult(BaseModel):
    """One program-mode run: what `Sandbox.run` would report for `python3 prog.py`, measured
    from outside the run's process (no memory sampling: peak RSS from the kernel)."""

    model_config = ConfigDict(extra="forbid")

    status: Status
    exit_code: int | None = None
    signal: int | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    wall_s: float = Field(0.0, description="Fork of the run's child to its exit (external).")
    cpu_s: float = Field(0.0, description="User+system CPU of every process of the run.")
    peak_rss_mb: float = Field(0.0, description="Resident memory the run added to the worker.")
    reason: str = ""

    @property
    def stdout_text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")

    @property
    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", errors="replace")


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
        argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *expose_args()]
        argv += ["--size", str(self.disk_bytes), "--perms", "1777", "--tmpfs", WORK_DIR]
        self._hidden = hidden_paths(self.config)
        for path in self._hidden:
            argv += ["--tmpfs", path]
        for cap in _WORKER_CAPS:
            argv += ["--cap-add", cap]
        argv += ["--", python, "-I", "-S", str(SERVER), str(fd), str(self.uid)]
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
        limits = limits or Limits(wall_s=10.0, memory_mb=512)
        try:
            encoded_args = valuecodec.encode(list(args))
        except valuecodec.UnsupportedValue as exc:
            raise ValueError(str(exc)) from exc
        req = {
            "source": source,
            "filename": filename,
            "entry": entry,
            "args": encoded_args,
            "limits": {**limits.model_dump(), "cpu_s": limits.effective_cpu_s},
        }
        reply = self._request(req)
        if "worker_failed" in reply:
            return CallResult(status=Status.SANDBOX_ERROR, error=reply["worker_failed"])
        return _to_result(reply, limits)

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
        return _to_program_result(reply, limits)

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


def _to_result(reply: dict[str, Any], limits: Limits) -> CallResult:
    if reply.get("status") == "COMPILE_ERROR":
        return CallResult(status=Status.RUNTIME_ERROR, phase="compile", error=reply["error"])
    if reply.get("status") == "SANDBOX_ERROR":
        return CallResult(status=Status.SANDBOX_ERROR, error=reply.get("error", ""))
    res = reply.get("result") or {}
    exit_status = int(reply.get("exit_status", 0))
    sig = os.WTERMSIG(exit_status) if os.WIFSIGNALED(exit_status) else None
    common = dict(
        wall_s=reply["wall_s"],
        cpu_s=reply["cpu_user_s"] + reply["cpu_system_s"],
        peak_rss_mb=reply["peak_rss_mb"],
        stdout=reply.get("stdout", ""),
        stdout_truncated=reply.get("stdout_truncated", False),
    )
    error = res.get("error", "")
    if reply.get("killed") == "TIMEOUT" or sig == signal.SIGXCPU:
        return CallResult(status=Status.TIMEOUT, error=f"over {limits.wall_s:g} s", **common)
    if error.startswith("MemoryError"):
        return CallResult(status=Status.MEMORY_LIMIT, error=error, **common)
    if res.get("ok"):
        try:
            value = valuecodec.decode(res.get("value"))
        except valuecodec.UnsupportedValue as exc:
            return CallResult(status=Status.RUNTIME_ERROR, error=str(exc), **common)
        reported = res.get("reported_call_ns")
        return CallResult(
            status=Status.OK,
            value=value,
            reported_call_s=None if reported is None else reported / 1e9,
            **common,
        )
    if sig is not None:
        error = error or f"killed by signal {signal.Signals(sig).name}"
    return CallResult(status=Status.RUNTIME_ERROR, error=error or "the call failed", **common)


def _to_program_result(reply: dict[str, Any], limits: Limits) -> ProgramResult:
    """Classify a program-mode reply as `request.decode` classifies a sandboxed run."""
    if reply.get("status") == "COMPILE_ERROR":  # what `python3 prog.py` does on a SyntaxError
        err = f"{reply['error']}\n".encode()
        return ProgramResult(status=Status.RUNTIME_ERROR, exit_code=1, stderr=err,
                             reason="exit code 1")  # fmt: skip
    if reply.get("status") == "SANDBOX_ERROR":
        return ProgramResult(status=Status.SANDBOX_ERROR, reason=reply.get("error", ""))
    if reply.get("setup_error"):
        return ProgramResult(status=Status.SANDBOX_ERROR,
                             reason=f"program mode setup failed: {reply['setup_error']}")  # fmt: skip
    code, sig = exit_of(int(reply["exit_status"]))
    out_cut, err_cut = bool(reply["stdout_truncated"]), bool(reply["stderr_truncated"])
    reason = reply.get("reason", "")
    if reply.get("killed"):
        status = Status(reply["killed"])
    elif reply.get("memory_error"):
        status = Status.MEMORY_LIMIT
        reason = f"memory limit of {limits.memory_mb:g} MiB (MemoryError, address-space limit)"
    else:
        status, why = classify_exit(code, sig, out_cut or err_cut, limits)
        reason = why or reason
    return ProgramResult(
        status=status,
        exit_code=code,
        signal=sig,
        stdout=base64.b64decode(reply["stdout"]),
        stderr=base64.b64decode(reply["stderr"]),
        stdout_truncated=out_cut,
        stderr_truncated=err_cut,
        wall_s=reply["wall_s"],
        cpu_s=reply["cpu_user_s"] + reply["cpu_system_s"],
        peak_rss_mb=reply["peak_rss_mb"],
        reason=reason,
    )


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
        futures = [self._executor.submit(self.call, s, e, a, limits) for s, e, a in calls]
        return [f.result() for f in futures]

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        for w in self.workers:
            w.close()

    def __enter__(self) -> PythonWorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _send(sock: socket.socket, obj: dict[str, Any]) -> None:
    data = json.dumps(obj).encode()
    sock.sendall(struct.pack(">I", len(data)) + data)


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
