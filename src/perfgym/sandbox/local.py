"""`LocalSandbox`: what the local backends share — cgroups, the supervisor's spec, decoding."""

from __future__ import annotations

import abc
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from perfgym.errors import ConfigError, SandboxUnavailable
from perfgym.sandbox import cgroup_moves, cgroups, exec_stub
from perfgym.sandbox.base import Bind, Sandbox, SandboxConfig
from perfgym.sandbox.execution import Execution
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.request import as_bytes, build_spec, decode


def find_bwrap() -> str:
    path = shutil.which("bwrap")
    if not path:
        raise SandboxUnavailable("bubblewrap (bwrap) is not installed: run scripts/setup")
    return path


class LocalSandbox(Sandbox):
    """A backend that runs the supervisor on this machine; subclasses say how it is started."""

    #: Whether `_execute` takes the program's stdin apart from the spec (see `WarmSandbox`).
    stdin_by_fd = False

    def __init__(self, config: SandboxConfig | None = None) -> None:
        self.config = config or SandboxConfig()
        self.bwrap = find_bwrap()
        self.python = self.config.python or os.path.realpath(sys.executable)
        self.cgroup_version = cgroups.detect() if self.config.use_cgroups else None
        self._cgroups = cgroups.CgroupPool()
        self.exec_stub = exec_stub.stub_path() if self.config.exec_stub else None
        self.cgroup_moves = "off: cgroups not used"
        if self.cgroup_version:
            cgroups.remove_stale()
            self.cgroup_moves = (
                cgroup_moves.favor_dynamic_moves()
                if self.config.favor_cgroup_moves
                else "off: SandboxConfig.favor_cgroup_moves is False"
            )

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
        for b in binds:
            if not os.path.exists(b.host_path):
                raise ConfigError(f"bind source does not exist: {b.host_path}")
        cg = None
        if self.cgroup_version:
            # The hard limit also holds the files the run writes to its tmpfs; resident memory
            # itself is held to `memory_mb` by the supervisor.
            memory = int(limits.memory_mb * 1024 * 1024) + limits.disk_bytes
            cg = self._cgroups.acquire(memory, limits.max_processes)
            cg.pin(cpu)  # a pinned run's processes can never leave its core (cpuset)
        raw_stdin = as_bytes(stdin)
        by_fd = self.stdin_by_fd and bool(raw_stdin)
        try:
            spec = build_spec(
                command,
                stdin=b"" if by_fd else raw_stdin,
                files=files,
                env=env,
                limits=limits,
                collect=collect,
                cpu=cpu,
                sample_rate_hz=self.config.sample_rate_hz,
                cgroup=cg,
                exec_stub=self.exec_stub,
            )
            res = self._execute(spec, limits, binds, cg, raw_stdin if by_fd else None)
            if isinstance(res, Execution):
                return res
            return decode(
                res,
                limits=limits,
                backend=self.name,
                cgroup=cg,
                sample_rate_hz=self.config.sample_rate_hz,
                cpu=cpu,
            )
        finally:
            if cg is not None:
                self._cgroups.release(cg)

    @abc.abstractmethod
    def _execute(
        self,
        spec: dict[str, Any],
        limits: Limits,
        binds: Sequence[Bind],
        cg: cgroups.RunCgroup | None,
        stdin: bytes | None = None,
    ) -> dict[str, Any] | Execution:
        """Start the supervisor with `spec`; its result dict, or a SANDBOX_ERROR Execution.
        `stdin`: the program's stdin when the backend takes it outside the spec
        (`stdin_by_fd`); otherwise None, and it is in the spec."""

    def close(self) -> None:
        self._cgroups.close()
