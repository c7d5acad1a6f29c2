"""`WarmSandbox`: an already-isolated launcher forks each run's private namespaces (the default)."""

from __future__ import annotations

import array
import json
import os
import select
import socket
import subprocess
import threading
import time
from typing import Any

from perfgym.sandbox import cgroups, seccomp, spawner
from perfgym.sandbox._inside.stub import seal
from perfgym.sandbox.base import SandboxConfig, private_mounts
from perfgym.sandbox.bwrap import BwrapSandbox
from perfgym.sandbox.execution import Execution
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.local import LocalSandbox
from perfgym.sandbox.request import sandbox_error
from perfgym.sandbox.run_request import RunRequest
from perfgym.sandbox.view import INSIDE_MOUNT, base_args, hidden_paths

#: The launcher as its bubblewrap sees it (only `_inside` is bound there).
LAUNCHER = f"{INSIDE_MOUNT}/launcher.py"
#: The largest spec (JSON bytes) sent in the request message itself; a larger one, which holds
#: files to write, goes as a memfd (a spare reads at most 64 KiB of a message).
INLINE_SPEC_BYTES = 48 * 1024
# Slack beyond a run's own wall limit before the host gives up on the launcher.
_RESULT_GRACE_S = 30.0


class WarmSandbox(LocalSandbox):
    """One long-lived bubblewrap holds a launcher; every run is forked from it into fresh
    PID and mount namespaces with its own tmpfs work dir. Runs that ask for network go through
    a fresh bubblewrap instead (the launcher has none), and say so in `Execution.backend`."""

    name = "warm"
    stdin_by_fd = True

    def __init__(self, config: SandboxConfig | None = None) -> None:
        super().__init__(config)
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None
        self._cold: BwrapSandbox | None = None
        self.restarts = 0

    # -- launcher lifecycle -------------------------------------------------------------------
    def _launcher_argv(self, fd: int, filter_fd: int) -> list[str]:
        args = [self.bwrap, "--unshare-ipc", "--unshare-uts", "--unshare-net", "--unshare-pid"]
        # No keyring calls in the launcher or any run (keys outlive namespaces); each spare
        # makes its run's own IPC namespace (launcher.py).
        args += seccomp.bwrap_args(filter_fd)
        args += ["--as-pid-1", "--die-with-parent", "--new-session", "--hostname", "sandbox"]
        # The runs' allow-list view, plus the host's root at HOST_MOUNT for the spares to
        # resolve each run's binds from (each spare covers it before its program starts).
        args += base_args(self.config, host_root=True)
        args += ["--perms", "0755", "--dir", "/tmp"]  # each spare mounts its own tmpfs here
        for parent in self._cgroup_parents():
            args += ["--bind", parent, parent]
        # Each spare mounts its work dir at the default run's sizes before its request.
        mounts = json.dumps(private_mounts(Limits().disk_bytes))
        args += ["--cap-add", "ALL", "--", self.python, "-I", "-S", LAUNCHER, str(fd), mounts]
        if self.exec_stub:  # spares start their run's stub ahead of the request
            args.append(self.exec_stub)
        return args

    def _cgroup_parents(self) -> list[str]:
        if self.cgroup_version == "v1":
            ctrls = ("memory", "pids", "cpuacct")
            parents = [os.path.join(cgroups.ROOT, c, cgroups.PARENT) for c in ctrls]
            cpuset = cgroups.cpuset_parent()  # the per-core cpusets pinned runs join
            if cpuset is not None:
                parents.append(cpuset)
        elif self.cgroup_version == "v2":
            parents = [os.path.join(cgroups.ROOT, cgroups.PARENT)]
        else:
            return []
        for p in parents:
            os.makedirs(p, exist_ok=True)
        return parents

    def _ensure_started(self) -> socket.socket:
        if self._proc is not None and self._proc.poll() is None and self._sock is not None:
            return self._sock
        self._stop()
        # Its runs have no network (those that ask for it go cold): no AF_INET/AF_INET6 socket
        # either, so none on loopback, whose buffers the memory cgroup misses (see `seccomp`).
        filter_fd = seccomp.filter_fd(refuse_inet=True, isolate_locks=self.config.isolate_locks)
        host_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        fd = child_end.fileno()
        try:
            self._proc = spawner.popen(
                self._launcher_argv(fd, filter_fd),
                pass_fds=(fd, filter_fd),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        finally:
            child_end.close()
            os.close(filter_fd)
        self._sock = host_end
        return host_end

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
        if self._cold is not None:
            self._cold.close()
        super().close()

    # -- runs -----------------------------------------------------------------------------------
    def _run(self, request: RunRequest) -> Execution:
        if request.limits.network:  # the launcher has no network: such runs get a fresh bubblewrap
            if self._cold is None:
                self._cold = BwrapSandbox(self.config)
            return self._cold._run(request)
        return super()._run(request)

    def _execute(
        self,
        spec: dict[str, Any],
        request: RunRequest,
        cg: cgroups.RunCgroup | None,
        stdin: bytes | None = None,
    ) -> dict[str, Any] | Execution:
        limits = request.limits
        spec["view"] = {
            "mounts": private_mounts(limits.disk_bytes),
            # Resolved here: the spare looks a source up under the host's root at HOST_MOUNT,
            # where an absolute symlink would lead into the run's view instead.
            "binds": [
                [os.path.realpath(b.host_path), b.sandbox_path, b.writable] for b in request.binds
            ],
            # The launcher's view covers the configured paths already; each spare covers them
            # again with the run's own, so a run may hide more than the launcher does.
            "hide": hidden_paths(self.config, request.hide),
        }
        fds = {}
        if cg is not None:
            fds = cg.counter_fds()
            fds.update({f"join{i}": fd for i, fd in enumerate(cg.join_fds())})
        return self._submit(spec, limits, stdin, fds)

    def _submit(
        self,
        spec: dict,
        limits: Limits,
        stdin: bytes | None = None,
        counters: dict[str, int] | None = None,
    ) -> dict | Execution:
        """Hand the launcher's next spare the spec, the result pipe, (when given) the
        program's stdin as a sealed memfd, which the spare copies in the kernel (a run reading
        2 MiB of stdin: 46 ms with it base64'd in the JSON spec, 16 ms so, a bare spawn 13 ms;
        `bench/sandbox_overhead.py` (c)), and the run's cgroup counter files, open (`counters`,
        see `RunCgroup.counter_fds`). The message names the descriptors it carries, in order,
        and carries a spec of up to `INLINE_SPEC_BYTES` itself; a larger one (files to write)
        goes as a memfd."""
        body = json.dumps(spec)
        inline = len(body) <= INLINE_SPEC_BYTES
        spec_fd = -1 if inline else os.memfd_create("perfgym-spec", os.MFD_CLOEXEC)
        stdin_fd = -1
        r, w = os.pipe2(os.O_CLOEXEC)
        try:
            if spec_fd >= 0:
                _write_all(spec_fd, body.encode())
            if stdin:
                stdin_fd = _sealed_memfd(stdin)
            named = {"result": w, **(counters or {})}
            if spec_fd >= 0:
                named["spec"] = spec_fd
            if stdin_fd >= 0:
                named["stdin"] = stdin_fd
            fds = array.array("i", named.values()).tobytes()
            # The spec's own JSON spliced in: it is not decoded and encoded again here.
            names = json.dumps(list(named))
            header = f'{{"fds": {names}, "spec": {body if inline else "null"}}}'.encode()
            with self._lock:
                sock = self._ensure_started()
                try:
                    sock.sendmsg([header], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
                except OSError as exc:
                    self._stop()
                    self.restarts += 1
                    return sandbox_error(limits, self.name, f"launcher unreachable: {exc}")
            os.close(w)
            w = -1
            return self._read_result(r, limits)
        finally:
            for fd in (spec_fd, stdin_fd, w):
                if fd >= 0:
                    os.close(fd)
            os.close(r)

    def _read_result(self, r: int, limits: Limits) -> dict | Execution:
        """The launcher's answer: an 8-byte little-endian length, then that much JSON. Read
        exactly that (not to EOF), so the host need not wait for the run's namespace to exit."""
        deadline = time.monotonic() + limits.wall_s * 2 + _RESULT_GRACE_S
        data = bytearray()
        want = 8
        while len(data) < want:
            left = deadline - time.monotonic()
            if left <= 0:
                return sandbox_error(limits, self.name, "no result from the launcher in time")
            ready, _, _ = select.select([r], [], [], min(left, 1.0))
            if not ready:
                if self._proc is None or self._proc.poll() is not None:
                    self.restarts += 1
                    return sandbox_error(limits, self.name, "the launcher died during the run")
                continue
            chunk = os.read(r, max(want - len(data), 1 << 16))
            if not chunk:
                break
            data += chunk
            if want == 8 and len(data) >= 8:
                want = 8 + int.from_bytes(data[:8], "little")
        if not data:
            return sandbox_error(limits, self.name, "the run ended without a result")
        if len(data) < want:
            return sandbox_error(limits, self.name, "the run ended with a partial result")
        try:
            return json.loads(bytes(data[8:want]))
        except json.JSONDecodeError as exc:
            return sandbox_error(limits, self.name, f"unreadable supervisor result: {exc}")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _sealed_memfd(data: bytes) -> int:
    """A memfd holding `data`, sealed against every change (the program may get it as fd 0)."""
    fd = os.memfd_create("perfgym-stdin", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        _write_all(fd, data)
        seal(fd)
    except BaseException:
        os.close(fd)
        raise
    return fd
