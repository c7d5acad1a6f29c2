"""`LocalSandbox`: what the local backends share — cgroups, the supervisor's spec, decoding."""

from __future__ import annotations

import abc
import os
import shutil
import sys
from typing import Any

from perfgym.errors import ConfigError, SandboxUnavailable
from perfgym.sandbox import cgroup_moves, cgroups, exec_stub, run_uids
from perfgym.sandbox.base import Sandbox, SandboxConfig
from perfgym.sandbox.execution import Execution
from perfgym.sandbox.request import RUN_UID, build_spec, decode
from perfgym.sandbox.run_request import RunRequest


def find_bwrap() -> str:
    path = shutil.which("bwrap")
    if not path:
        raise SandboxUnavailable("bubblewrap (bwrap) is not installed: run scripts/setup")
    return path


class LocalSandbox(Sandbox):
    """A backend that runs the supervisor on this machine; subclasses say how it is started."""

    #: Whether `_execute` takes the program's stdin apart from the spec (see `WarmSandbox`).
    stdin_by_fd = False
    #: Whether a run's cgroup is reused by later runs (its cumulative counters, such as
    #: `pids.events`, are never reset: a backend that pools must keep the cgroup file systems
    #: out of the program's view, as the warm launcher does).
    pool_cgroups = True

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

    def _run(self, request: RunRequest) -> Execution:
        limits = request.limits
        for b in request.binds:
            if not os.path.exists(b.host_path):
                raise ConfigError(f"bind source does not exist: {b.host_path}")
        cg = None
        if self.cgroup_version:
            # The hard limit also holds the files the run writes to its tmpfs; resident memory
            # itself is held to `memory_mb` by the supervisor.
            memory = int(limits.memory_mb * 1024 * 1024) + limits.disk_bytes
            cg = self._cgroups.acquire(memory, limits.max_processes)
            cg.pin(request.cpu)  # a pinned run's processes can never leave its cores (cpuset)
        by_fd = self.stdin_by_fd and bool(request.stdin)
        # A uid of its own unless its files must be the next run's (`run_uids`).
        shared = not self.config.uid_per_run or any(b.writable for b in request.binds)
        uid = RUN_UID if shared else run_uids.acquire()
        try:
            spec = build_spec(
                request,
                stdin=b"" if by_fd else request.stdin,
                sample_rate_hz=self.config.sample_rate_hz,
                cgroup=cg,
                exec_stub=self.exec_stub,
                uid=uid,
            )
            res = self._execute(spec, request, cg, request.stdin if by_fd else None)
            if isinstance(res, Execution):
                return res
            return decode(
                res,
                limits=limits,
                backend=self.name,
                cgroup=cg,
                sample_rate_hz=self.config.sample_rate_hz,
                cpu=request.cpu,
            )
        finally:
            run_uids.release(uid)
            if cg is not None:
                if limits.forget_page_cache:
                    cg.forget_page_cache()
                if self.pool_cgroups:
                    self._cgroups.release(cg)
                else:
                    cg.destroy()

    @abc.abstractmethod
    def _execute(
        self,
        spec: dict[str, Any],
        request: RunRequest,
        cg: cgroups.RunCgroup | None,
        stdin: bytes | None = None,
    ) -> dict[str, Any] | Execution:
        """Start the supervisor with `spec` (made of `request`, whose limits, binds and hidden
        paths the backend applies); its result dict, or a SANDBOX_ERROR Execution.
        `stdin`: the program's stdin when the backend takes it outside the spec
        (`stdin_by_fd`); otherwise None, and it is in the spec."""

    def close(self) -> None:
        self._cgroups.close()
