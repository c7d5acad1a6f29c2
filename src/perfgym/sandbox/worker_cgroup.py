"""A CPU-accounting cgroup per warm Python worker (cgroup v1 cpuacct, or v2).

Every process the worker's sandbox ever runs is in it, including a child reaped by the kernel
because its parent ignored SIGCHLD, whose CPU no wait4 ever reports. The worker is handed a
read-only descriptor of the cgroup's CPU counter and reads it around each call
(`_inside/pyworker_server.py`); a call whose processes used more CPU than their rusage says is
charged the difference and flagged. Where no writable hierarchy exists, `WorkerCgroup.create`
says why and the worker reports its calls' CPU as rusage only (`CallResult.cpu_mechanism`).
"""

from __future__ import annotations

import itertools
import os
import re
import threading

ROOT = "/sys/fs/cgroup"
PARENT = "perfgym"
_counter = itertools.count()
_NAME = re.compile(r"worker-(\d+)-\d+")


class WorkerCgroup:
    """One worker's cgroup: `wrap` an argv so it starts inside, `usage_fd` to read its CPU."""

    def __init__(self, path: str, usage_file: str, kind: str) -> None:
        self.path, self.usage_file, self.kind = path, usage_file, kind

    @classmethod
    def create(cls) -> tuple[WorkerCgroup | None, str]:
        """A fresh cgroup, or None and why there is none."""
        if os.path.exists(os.path.join(ROOT, "cgroup.controllers")):
            base, usage, kind = os.path.join(ROOT, PARENT), "cpu.stat", "v2"
        else:
            base, usage, kind = os.path.join(ROOT, "cpuacct", PARENT), "cpuacct.usage", "v1"
        path = os.path.join(base, f"worker-{os.getpid()}-{next(_counter)}")
        try:
            os.makedirs(base, exist_ok=True)
            _remove_stale(base)
            os.mkdir(path)
        except OSError as exc:
            return None, f"no writable cpu-accounting cgroup ({base}: {exc.strerror})"
        return cls(path, usage, kind), ""

    def usage_fd(self) -> int:
        """A read-only descriptor of the CPU counter, inheritable by the worker."""
        fd = os.open(os.path.join(self.path, self.usage_file), os.O_RDONLY)
        os.set_inheritable(fd, True)
        return fd

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv` run from inside the cgroup (it joins before it starts anything)."""
        join = 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"'
        return ["/bin/sh", "-c", join, "sh", self.path, *argv]

    def destroy(self) -> None:
        """Remove the cgroup once its processes are gone (the worker was killed first)."""
        for _ in range(100):
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError:  # processes still exiting
                threading.Event().wait(0.01)


def _remove_stale(base: str) -> None:
    """Remove worker cgroups of perfgym processes that no longer exist."""
    try:
        names = os.listdir(base)
    except OSError:
        return
    for name in names:
        m = _NAME.fullmatch(name)
        if m and not os.path.exists(f"/proc/{m.group(1)}"):
            try:
                os.rmdir(os.path.join(base, name))
            except OSError:
                pass
