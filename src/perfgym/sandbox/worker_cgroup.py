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

from perfgym.child_reaper import process_stat

ROOT = "/sys/fs/cgroup"
PARENT = "perfgym"
#: The calls' cgroup's name, below a worker's memory cgroup (`_calls_cgroup`).
CALLS = "calls"
_counter = itertools.count()
#: worker-PID-START-N: the creating process's PID and start time (clock ticks since boot), so a
#: dead worker's cgroup is never taken for a live one's when its PID comes back (pid_max is
#: often 32,768): its name was then taken, the new worker ran without a cgroup, and (before
#: that path was fixed) every function call failed. Names without START are an older perfgym's.
_NAME = re.compile(r"worker-(\d+)(?:-(\d+))?-\d+")


def start_ticks(pid: int) -> str:
    """Process `pid`'s start time in clock ticks since boot ('' when it is gone or a zombie)."""
    st = process_stat(pid)
    return "" if st is None else str(st[1])


class WorkerCgroup:
    """One worker's cgroup: `wrap` an argv so it starts inside, `usage_fd` to read its CPU,
    `memory_fds` to read (and reset) its memory high-water mark where there is one."""

    def __init__(self, path: str, usage_file: str, kind: str, memory: str | None = None) -> None:
        self.path, self.usage_file, self.kind = path, usage_file, kind
        #: The worker's memory cgroup (v1: in the memory hierarchy; v2: `path` itself), None
        #: when none could be made: a call's memory is then its processes' rusage only.
        self.memory = memory
        #: The calls' own memory cgroup below it (v1 only), emptied after every call
        #: (`_inside/worker_forget.py`); None where there is none.
        self.calls = _calls_cgroup(kind, memory)

    @classmethod
    def create(cls) -> tuple[WorkerCgroup | None, str]:
        """A fresh cgroup, or None and why there is none."""
        if os.path.exists(os.path.join(ROOT, "cgroup.controllers")):
            base, usage, kind = os.path.join(ROOT, PARENT), "cpu.stat", "v2"
        else:
            base, usage, kind = os.path.join(ROOT, "cpuacct", PARENT), "cpuacct.usage", "v1"
        me = os.getpid()
        path = os.path.join(base, f"worker-{me}-{start_ticks(me)}-{next(_counter)}")
        try:
            os.makedirs(base, exist_ok=True)
            _remove_stale(base)
            os.mkdir(path)
        except OSError as exc:
            return None, f"no writable cpu-accounting cgroup ({base}: {exc.strerror})"
        return cls(path, usage, kind, _memory_cgroup(kind, path)), ""

    def memory_fds(self) -> tuple[int, int]:
        """(usage read-only, high-water mark read-write) descriptors of the memory cgroup,
        inheritable by the worker; (-1, -1) without one."""
        if self.memory is None:
            return -1, -1
        usage, mark = MEMORY_FILES[self.kind]
        return _inheritable_pair(self.memory, (usage, os.O_RDONLY), (mark, os.O_RDWR))

    def calls_fds(self) -> tuple[int, int]:
        """(`cgroup.procs`, `memory.force_empty`) of the calls' cgroup, write-only and
        inheritable by the worker; (-1, -1) without one."""
        if self.calls is None:
            return -1, -1
        return _inheritable_pair(self.calls, ("cgroup.procs", os.O_WRONLY),
                                 ("memory.force_empty", os.O_WRONLY))  # fmt: skip

    def usage_fd(self) -> int:
        """A read-only descriptor of the CPU counter, inheritable by the worker."""
        fd = os.open(os.path.join(self.path, self.usage_file), os.O_RDONLY)
        os.set_inheritable(fd, True)
        return fd

    def usage(self) -> dict[str, int]:
        """What the worker's every process used so far, for benches and health checks: `cpu_ns`
        (the CPU counter) and `page_faults` (the memory cgroup's count, copy-on-write faults
        after each fork included: a figure that, unlike time, a loaded machine does not
        stretch); a counter that cannot be read is left out."""
        out: dict[str, int] = {}
        try:
            with open(os.path.join(self.path, self.usage_file), "rb") as f:
                data = f.read()
            if self.kind == "v1":
                out["cpu_ns"] = int(data)
            else:
                for line in data.split(b"\n"):
                    if line.startswith(b"usage_usec "):
                        out["cpu_ns"] = int(line.split()[1]) * 1000
        except (OSError, ValueError):
            pass
        if self.memory is not None:
            try:
                with open(os.path.join(self.memory, "memory.stat"), "rb") as f:
                    for line in f:
                        if line.startswith(b"pgfault "):
                            out["page_faults"] = int(line.split()[1])
                            break
            except (OSError, ValueError):
                pass
        return out

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv` run from inside the cgroup (it joins before it starts anything)."""
        if self.memory is None or self.memory == self.path:
            join = 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"'
            return ["/bin/sh", "-c", join, "sh", self.path, *argv]
        join = 'echo $$ > "$1/cgroup.procs" && echo $$ > "$2/cgroup.procs" && shift 2 && exec "$@"'
        return ["/bin/sh", "-c", join, "sh", self.path, self.memory, *argv]

    def destroy(self) -> None:
        """Remove the cgroup once its processes are gone (the worker was killed first)."""
        for path in [p for p in (self.calls, self.path, self.memory) if p is not None]:
            if not os.path.isdir(path):
                continue
            for _ in range(100):
                try:
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError:  # processes still exiting
                    threading.Event().wait(0.01)


#: kind -> (usage, high-water mark) files of a memory cgroup.
MEMORY_FILES = {
    "v1": ("memory.usage_in_bytes", "memory.max_usage_in_bytes"),
    "v2": ("memory.current", "memory.peak"),
}


def _memory_cgroup(kind: str, path: str) -> str | None:
    """The worker's memory cgroup (made here for v1), or None where there can be none."""
    if kind == "v2":
        try:  # the memory controller for the workers' cgroups (already on when runs used it)
            with open(os.path.join(os.path.dirname(path), "cgroup.subtree_control"), "w") as f:
                f.write("+memory")
        except OSError:
            pass
        return path if os.path.exists(os.path.join(path, "memory.peak")) else None
    base = os.path.join(ROOT, "memory", PARENT)
    memory = os.path.join(base, os.path.basename(path))
    try:
        os.makedirs(base, exist_ok=True)
        _remove_stale(base)
        os.mkdir(memory)
    except OSError:
        return None
    return memory


def _inheritable_pair(directory: str, *files: tuple[str, int]) -> tuple[int, int]:
    """Two files of `directory` opened (name, mode) and inheritable; (-1, -1) when either
    cannot be (none is left open)."""
    fds: list[int] = []
    try:
        for name, mode in files:
            fds.append(os.open(os.path.join(directory, name), mode))
            os.set_inheritable(fds[-1], True)
    except OSError:
        for fd in fds:
            os.close(fd)
        return -1, -1
    return fds[0], fds[1]


def _calls_cgroup(kind: str, memory: str | None) -> str | None:
    """The calls' memory cgroup below the worker's (v1), or None. Under v2 a cgroup with
    processes cannot give a child the memory controller (the worker's is such a cgroup)."""
    if kind != "v1" or memory is None:
        return None
    calls = os.path.join(memory, CALLS)
    try:
        os.mkdir(calls)
    except OSError:
        return None
    return calls


def _remove_stale(base: str) -> None:
    """Remove worker cgroups of perfgym processes that no longer exist (by PID and start time:
    a PID that came back is another process). One still in use is never removed (rmdir fails)."""
    try:
        names = os.listdir(base)
    except OSError:
        return
    for name in names:
        m = _NAME.fullmatch(name)
        if m is None:
            continue
        ticks = start_ticks(int(m.group(1)))
        if not ticks or (m.group(2) is not None and m.group(2) != ticks):
            for path in (os.path.join(base, name, CALLS), os.path.join(base, name)):
                try:
                    os.rmdir(path)
                except OSError:
                    pass
