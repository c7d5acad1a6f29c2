"""`BwrapSandbox`: a fresh bubblewrap per run (the simple, cold backend)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from typing import Any

from perfgym.sandbox import cgroups, seccomp
from perfgym.sandbox.base import Bind, SandboxConfig, private_mounts
from perfgym.sandbox.execution import Execution
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.local import LocalSandbox, find_bwrap
from perfgym.sandbox.request import sandbox_error
from perfgym.sandbox.run_request import RunRequest
from perfgym.sandbox.view import INSIDE, INSIDE_MOUNT, base_args

__all__ = ["INSIDE", "SUPERVISOR", "BwrapSandbox", "find_bwrap", "view_args"]

SUPERVISOR = INSIDE / "supervisor.py"
#: The supervisor as the run's bubblewrap sees it (only `_inside` is bound there, not the
#: package or checkout holding it).
SUPERVISOR_IN_VIEW = f"{INSIDE_MOUNT}/{SUPERVISOR.name}"
#: Where the cgroup file systems are (read-only, with /sys, in every view).
CGROUPS = "/sys/fs/cgroup"
# The supervisor needs these to drop to the run's uid, place it, signal it and own its files.
SUPERVISOR_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_KILL", "CAP_CHOWN", "CAP_FOWNER")


def view_args(
    config: SandboxConfig, limits: Limits, binds: Sequence[Bind], hide: Sequence[str] = ()
) -> list[str]:
    """bubblewrap arguments for a run's view of the host: the allow-list (`view.base_args`,
    with the run's own `hide` paths covered too), a fresh work dir and the run's binds."""
    args = base_args(config, hide=hide)
    for private, size in private_mounts(limits.disk_bytes):
        args += ["--size", str(size), "--perms", "1777", "--tmpfs", private]
    for b in binds:
        args += ["--bind" if b.writable else "--ro-bind", b.host_path, b.sandbox_path]
    return args


class BwrapSandbox(LocalSandbox):
    """Starts `bwrap` + the supervisor for every run. Simple and robust, but slow: 65-72 ms for
    `python3 -S -c pass` on this project's VMs, ~6.5x a bare spawn (`bench/sandbox_overhead.py`)."""

    name = "bwrap"
    #: A fresh cgroup per run: its own cgroup is all a run sees of the cgroup file systems
    #: (see `_execute`), so nothing of an earlier run's is in its counters.
    pool_cgroups = False

    def _execute(
        self,
        spec: dict[str, Any],
        request: RunRequest,
        cg: cgroups.RunCgroup | None,
        stdin: bytes | None = None,
    ) -> dict[str, Any] | Execution:
        limits = request.limits
        argv = [self.bwrap, *self._namespace_args(limits)]
        argv += view_args(self.config, limits, request.binds, request.hide)
        if cg is not None:
            # The cgroup file systems covered, the run's own cgroups bound back (its supervisor
            # moves the program in): no other run's counters, concurrent or earlier, are seen
            # (red team rt66 read a number an earlier run left in a cgroup's pids.events).
            # The supervisor moves the program in through descriptors of their cgroup.procs,
            # a pinned run's cores' cpuset (shared by the runs pinned there: not bound back)
            # among them.
            argv += ["--tmpfs", CGROUPS]
            for d in sorted(set(cg.dirs.values())):
                argv += ["--bind", d, d]
            argv += ["--remount-ro", CGROUPS]
            spec["join_fds"] = cg.join_fds()
        for cap in SUPERVISOR_CAPS:
            argv += ["--cap-add", cap]
        argv += ["--", self.python, "-I", "-S", SUPERVISOR_IN_VIEW]
        return self._spawn(argv, spec, limits, tuple(spec.get("join_fds", ())))

    @staticmethod
    def _namespace_args(limits: Limits) -> list[str]:
        args = ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--as-pid-1"]
        if not limits.network:
            args.append("--unshare-net")
        return [*args, "--die-with-parent", "--new-session", "--hostname", "sandbox"]

    def _spawn(
        self, argv: list[str], spec: dict[str, Any], limits: Limits, extra_fds: tuple = ()
    ) -> dict[str, Any] | Execution:
        # No keyring calls in the run (keys outlive every namespace), and without network no
        # AF_INET/AF_INET6 socket at all: see `seccomp`.
        filter_fd = seccomp.filter_fd(
            refuse_inet=not limits.network, isolate_locks=self.config.isolate_locks
        )
        argv = [argv[0], *seccomp.bwrap_args(filter_fd), *argv[1:]]
        r, w = os.pipe()
        try:
            proc = subprocess.Popen(
                [*argv, str(w)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(w, filter_fd, *extra_fds),
                close_fds=True,
            )
        except OSError as exc:
            os.close(r)
            os.close(w)
            return sandbox_error(limits, self.name, f"could not start bwrap: {exc}")
        finally:
            os.close(filter_fd)
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
            res: dict[str, Any] = json.loads(data)
        except json.JSONDecodeError as exc:
            return sandbox_error(limits, self.name, f"unreadable supervisor result: {exc}")
        return res
