"""`BwrapSandbox`: a fresh bubblewrap per run (the simple, cold backend)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from perfgym.errors import ConfigError, SandboxUnavailable
from perfgym.sandbox import cgroups
from perfgym.sandbox.base import WORK_DIR, Bind, Sandbox, SandboxConfig
from perfgym.sandbox.execution import Execution
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.request import build_spec, decode, sandbox_error
from perfgym.sandbox.view import expose_args, hidden_paths

INSIDE = Path(__file__).resolve().parent / "_inside"
SUPERVISOR = INSIDE / "supervisor.py"
# The supervisor needs these to drop to the run's uid, place it, signal it and own its files.
SUPERVISOR_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_KILL", "CAP_CHOWN", "CAP_FOWNER")


def find_bwrap() -> str:
    path = shutil.which("bwrap")
    if not path:
        raise SandboxUnavailable("bubblewrap (bwrap) is not installed: run scripts/setup")
    return path


def view_args(config: SandboxConfig, limits: Limits, binds: Sequence[Bind]) -> list[str]:
    """bubblewrap arguments for a run's view of the host (shared with the warm launcher)."""
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    args += expose_args()
    args += ["--size", str(limits.disk_bytes), "--perms", "1777", "--tmpfs", WORK_DIR]
    for b in binds:
        if not os.path.exists(b.host_path):
            raise ConfigError(f"bind source does not exist: {b.host_path}")
        args += ["--bind" if b.writable else "--ro-bind", b.host_path, b.sandbox_path]
    for path in hidden_paths(config):
        args += ["--tmpfs", path]
    return args


class BwrapSandbox(Sandbox):
    """Starts `bwrap` + the supervisor for every run. Simple and robust; ~1.7x a bare spawn."""

    name = "bwrap"

    def __init__(self, config: SandboxConfig | None = None) -> None:
        self.config = config or SandboxConfig()
        self.bwrap = find_bwrap()
        self.python = self.config.python or os.path.realpath(sys.executable)
        self.cgroup_version = cgroups.detect() if self.config.use_cgroups else None
        self._cgroups = cgroups.CgroupPool()
        if self.cgroup_version:
            cgroups.remove_stale()

    def run(
        self,
        command: Sequence[str],
        *,
        stdin: bytes | str = b"",
        files: Mapping[str, bytes | str] | None = None,
        env: Mapping[str, str] | None = None,
        limits: Limits | None = None,
        binds: Sequence[Bind] = (),
        collect: Sequence[str] = (),
        cpu: int | None = None,
    ) -> Execution:
        limits = limits or Limits()
        cg = None
        if self.cgroup_version:
            memory = int(limits.memory_mb * 1024 * 1024) + limits.disk_bytes
            cg = self._cgroups.acquire(memory, limits.max_processes)
        try:
            spec = build_spec(
                command,
                stdin=stdin,
                files=files,
                env=env,
                limits=limits,
                collect=collect,
                cpu=cpu,
                sample_rate_hz=self.config.sample_rate_hz,
                cgroup=cg,
            )
            argv = [self.bwrap, *self._namespace_args(limits)]
            argv += view_args(self.config, limits, binds)
            if cg is not None:
                for d in set(cg.dirs.values()):
                    argv += ["--bind", d, d]
            for cap in SUPERVISOR_CAPS:
                argv += ["--cap-add", cap]
            argv += ["--", self.python, "-I", "-S", str(SUPERVISOR)]
            return self._spawn(argv, spec, limits, cg)
        finally:
            if cg is not None:
                self._cgroups.release(cg)

    def close(self) -> None:
        self._cgroups.close()

    @staticmethod
    def _namespace_args(limits: Limits) -> list[str]:
        args = ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--as-pid-1"]
        if not limits.network:
            args.append("--unshare-net")
        return [*args, "--die-with-parent", "--new-session", "--hostname", "sandbox"]

    def _spawn(
        self, argv: list[str], spec: dict, limits: Limits, cg: cgroups.RunCgroup | None
    ) -> Execution:
        r, w = os.pipe()
        try:
            proc = subprocess.Popen(
                [*argv, str(w)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(w,),
                close_fds=True,
            )
        except OSError as exc:
            os.close(r)
            os.close(w)
            return sandbox_error(limits, self.name, f"could not start bwrap: {exc}")
        os.close(w)
        assert proc.stdin is not None
        try:
            proc.stdin.write(json.dumps(spec).encode())
            proc.stdin.close()
        except BrokenPipeError:
            pass
        chunks = []
        with os.fdopen(r, "rb") as f:
            chunks.append(f.read())
        err = proc.stderr.read() if proc.stderr else b""
        proc.wait()
        data = b"".join(chunks)
        if not data:
            msg = err.decode(errors="replace").strip() or f"bwrap exited {proc.returncode}"
            return sandbox_error(limits, self.name, f"sandbox produced no result: {msg}")
        try:
            res = json.loads(data)
        except json.JSONDecodeError as exc:
            return sandbox_error(limits, self.name, f"unreadable supervisor result: {exc}")
        return decode(
            res,
            limits=limits,
            backend=self.name,
            cgroup=cg,
            sample_rate_hz=self.config.sample_rate_hz,
        )
