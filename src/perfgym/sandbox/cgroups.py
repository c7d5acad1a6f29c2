"""Per-run cgroups (v1 or v2) for hard memory/process limits and exact CPU accounting."""

from __future__ import annotations

import atexit
import functools
import itertools
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

ROOT = "/sys/fs/cgroup"
PARENT = "perfgym"
_counter = itertools.count()
_lock = threading.Lock()


@functools.cache
def detect() -> str | None:
    """'v1', 'v2' or None when no writable cgroup hierarchy with the needed controllers exists."""
    try:
        if os.path.exists(os.path.join(ROOT, "cgroup.controllers")):
            controllers = _read(ROOT, "cgroup.controllers").split()
            if {"memory", "pids"} <= set(controllers) and _can_mkdir(ROOT):
                return "v2"
            return None
        if all(_can_mkdir(os.path.join(ROOT, c)) for c in ("memory", "pids", "cpuacct")):
            return "v1"
    except OSError:
        return None
    return None


def _can_mkdir(base: str) -> bool:
    probe = os.path.join(base, PARENT, f"probe-{os.getpid()}")
    try:
        os.makedirs(probe, exist_ok=True)
        os.rmdir(probe)
        return True
    except OSError:
        return False


CPUSET = os.path.join(ROOT, "cpuset")  # the v1 cpuset hierarchy
_cores: dict[tuple[int, ...], str] = {}


def cpu_list(cores: int | Sequence[int]) -> str:
    """`cores` as a cpuset.cpus value ("3", "0,1"), sorted."""
    return ",".join(str(int(c)) for c in sorted([cores] if isinstance(cores, int) else cores))


def parse_cpu_list(text: str) -> set[int]:
    """The cores of a kernel cpu list ("0-2,5"); an empty set for an empty text."""
    cores: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        cores.update(range(int(low), int(high or low) + 1))
    return cores


@functools.cache
def cpuset_parent() -> str | None:
    """v1: the perfgym cpuset cgroup (the root's cpus and mems), created once; None when the
    cpuset hierarchy is absent or not writable."""
    if not os.path.isfile(os.path.join(CPUSET, "cpuset.cpus")):
        return None
    parent = os.path.join(CPUSET, PARENT)
    try:
        os.makedirs(parent, exist_ok=True)
        for name in ("cpuset.cpus", "cpuset.mems"):  # a v1 cpuset holds no task until both are set
            if not _read(parent, name).strip():
                _write(parent, name, _read(CPUSET, name).strip())
    except OSError:
        return None
    return parent


def core_cpuset(core: int | Sequence[int]) -> str | None:
    """v1: the cpuset cgroup whose only CPUs are `core` (one core, or a multi-core run's set;
    created on first use, then shared by every run pinned there: a cpuset only confines, it
    counts nothing), or None.

    A process in it cannot run on any other core: sched_setaffinity to other cores is refused
    or cut down to the set, and only root may move a process to another cgroup."""
    key = tuple(sorted([core] if isinstance(core, int) else {int(c) for c in core}))
    with _lock:
        if key in _cores:
            return _cores[key]
        parent = cpuset_parent()
        if parent is None:
            return None
        name = f"core-{key[0]}" if len(key) == 1 else "cores-" + "-".join(map(str, key))
        d = os.path.join(parent, name)
        try:
            os.makedirs(d, exist_ok=True)
            if parse_cpu_list(_read(d, "cpuset.cpus")) != set(key):
                _write(d, "cpuset.cpus", cpu_list(key))
            if not _read(d, "cpuset.mems").strip():
                _write(d, "cpuset.mems", _read(parent, "cpuset.mems").strip())
        except OSError:
            return None
        _cores[key] = d
        return d


@dataclass
class RunCgroup:
    """The cgroup directories of one run, keyed by controller ('memory', 'pids', 'cpuacct')."""

    version: str
    dirs: dict[str, str] = field(default_factory=dict)
    oom_before: int = 0
    oom_current: bool = False  # oom_before is the counter as it stands (read after the last run)
    limits: tuple[int, int] = (0, 0)  # (memory bytes, pids) last written
    core: int | list[int] | None = None  # the core(s) the run is confined to (see pin)
    cpuset_dir: str | None = None  # v1: the cores' cpuset cgroup the run joins
    cpuset_v2: str = ""  # v2: cpuset.cpus last written to this run's own cgroup
    # Files of the cgroup kept open while it lives, by (directory, name, flags) (see _fd).
    _fds: dict[tuple[str, str, int], int] = field(default_factory=dict, repr=False)

    @classmethod
    def create(cls, memory_bytes: int, max_pids: int) -> RunCgroup:
        version = detect()
        if version is None:
            raise OSError("no writable cgroup hierarchy")
        name = f"run-{os.getpid()}-{next(_counter)}"
        cg = cls(version)
        with _lock:
            if version == "v1":
                for ctrl in ("memory", "pids", "cpuacct"):
                    d = os.path.join(ROOT, ctrl, PARENT, name)
                    os.makedirs(d)
                    cg.dirs[ctrl] = d
                _write(cg.dirs["memory"], "memory.limit_in_bytes", memory_bytes)
                try:  # no swap for the run when the kernel accounts it
                    _write(cg.dirs["memory"], "memory.memsw.limit_in_bytes", memory_bytes)
                except OSError:
                    pass
                _write(cg.dirs["memory"], "memory.swappiness", 0, optional=True)
                _write(cg.dirs["memory"], TCP_LIMIT_V1, memory_bytes, optional=True)
                _write(cg.dirs["pids"], "pids.max", max_pids)
            else:
                parent = os.path.join(ROOT, PARENT)
                _write(parent, "cgroup.subtree_control", "+memory +pids +cpu", optional=True)
                _write(parent, "cgroup.subtree_control", "+cpuset", optional=True)
                d = os.path.join(parent, name)
                os.makedirs(d)
                cg.dirs = {"memory": d, "pids": d, "cpuacct": d}
                _write(d, "memory.max", memory_bytes)
                _write(d, "memory.swap.max", 0, optional=True)
                _write(d, "pids.max", max_pids)
        cg.oom_before = cg.oom_kills()
        cg.limits = (memory_bytes, max_pids)
        return cg

    def pin(self, core: int | list[int] | None) -> bool:
        """Confine the next run to `core`, one core or a list of them (None: no confinement);
        whether it is enforced.

        v1: the run also joins the core's shared cpuset cgroup (`core_cpuset`); v2: the run's
        own cgroup gets `cpuset.cpus` (written only when it changes)."""
        self.core = core
        self.cpuset_dir = None
        if self.version == "v1":
            if core is None:
                return True
            self.cpuset_dir = core_cpuset(core)
            return self.cpuset_dir is not None
        want = "" if core is None else cpu_list(core)
        if want == self.cpuset_v2:
            return True
        try:
            # "" would be refused on some kernels: an unpinned run gets the parent's CPUs
            value = want or _read(os.path.dirname(self.dirs["memory"]), "cpuset.cpus.effective")
            _write(self.dirs["memory"], "cpuset.cpus", value.strip())
        except OSError:
            self.cpuset_v2 = "?"
            return core is None
        self.cpuset_v2 = want
        return True

    def supervisor_paths(self) -> dict[str, str]:
        """Directories the supervisor writes the program's pid into (v2: one directory), and
        v2's 'cpu': the directory whose cpu.stat counts the run's CPU (not joined again)."""
        if self.version == "v1":
            paths = dict(self.dirs)
            if self.cpuset_dir is not None:
                paths["cpuset"] = self.cpuset_dir
            return paths
        return {"memory": self.dirs["memory"], "cpu": self.dirs["memory"]}

    def cpu_usage_ns(self) -> int:
        """CPU used so far by every process this cgroup ever held (v1 cpuacct.usage, v2
        cpu.stat usage_usec), in ns; read it before and after a measured call for its CPU."""
        return cpu_usage_ns(self.version, self.dirs["cpuacct"])

    def oom_kills(self) -> int:
        try:
            if self.version == "v1":
                text = self._read("memory", "memory.oom_control")
                for line in text.splitlines():
                    if line.startswith("oom_kill "):
                        return int(line.split()[1])
                return int(self._read("memory", "memory.failcnt"))
            text = self._read("memory", "memory.events")
            for line in text.splitlines():
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
        except (OSError, ValueError):
            pass
        return 0

    def was_oom_killed(self) -> bool:
        """Whether the kernel OOM-killed a process of this run; the count read becomes the next
        run's baseline (nothing runs in a pooled cgroup between two runs)."""
        now = self.oom_kills()
        killed = now > self.oom_before
        self.oom_before, self.oom_current = now, True
        return killed

    def reset(self, memory_bytes: int, max_pids: int) -> None:
        """Prepare a reused cgroup for the next run: its limits (written only when they differ
        from the last run's: each write is a syscall on the run's critical path), a zero CPU
        counter and a fresh OOM baseline."""
        if self.limits != (memory_bytes, max_pids):
            if self.version == "v1":
                # memsw (memory + swap) may never be below the memory limit: raise it first
                # when raising, lower it last when lowering.
                order = ["memory.limit_in_bytes", "memory.memsw.limit_in_bytes"]
                if memory_bytes > self.limits[0]:
                    order.reverse()
                for name in order:
                    _write(self.dirs["memory"], name, memory_bytes, optional="memsw" in name)
                _write(self.dirs["memory"], TCP_LIMIT_V1, memory_bytes, optional=True)
            else:
                _write(self.dirs["memory"], "memory.max", memory_bytes)
            _write(self.dirs["pids"], "pids.max", max_pids)
            self.limits = (memory_bytes, max_pids)
        if self.version == "v1":
            try:
                os.pwrite(self._fd("cpuacct", "cpuacct.usage", os.O_WRONLY), b"0", 0)
            except OSError:
                pass
        if not self.oom_current:
            self.oom_before = self.oom_kills()
        self.oom_current = False

    def _fd(self, ctrl: str, name: str, flags: int = os.O_RDONLY) -> int:
        """The file `name` of the `ctrl` directory, opened once for the cgroup's life (a pooled
        cgroup serves many runs, and a path walk into the cgroup filesystem costs several
        times the read itself on the run's critical path)."""
        return self._fd_at(self.dirs[ctrl], name, flags)

    def _fd_at(self, directory: str, name: str, flags: int) -> int:
        key = (directory, name, flags)
        fd = self._fds.get(key)
        if fd is None:
            fd = self._fds[key] = os.open(os.path.join(directory, name), flags | os.O_CLOEXEC)
        return fd

    def join_fds(self) -> list[int]:
        """`cgroup.procs` of every cgroup a run joins (`supervisor_paths`: the run's own, and a
        pinned run's cores' cpuset), open for writing and kept: the warm sandbox's supervisor
        moves the run's process in through them, so a run's view needs no cgroup file system
        at all (see spare_view `Ready`). Writing is checked against the opener, root here."""
        paths = self.supervisor_paths()
        return [
            self._fd_at(paths[n], "cgroup.procs", os.O_WRONLY)
            for n in ("memory", "pids", "cpuacct", "cpuset")
            if n in paths and not (n != "memory" and paths[n] == paths["memory"])
        ]

    def _read(self, ctrl: str, name: str) -> str:
        """The whole of a (small) cgroup file, read from offset 0 of its kept descriptor (a
        counter or a stat file, shown afresh on every read: not cgroup.procs, see `empty`)."""
        return os.pread(self._fd(ctrl, name), 65536, 0).decode()

    def counter_fds(self) -> dict[str, int]:
        """The counter files a run's supervisor reads, kept open (see `_fd`): 'cpu' (v1
        cpuacct.usage, v2 cpu.stat), 'usage' (memory.usage_in_bytes / memory.current) and
        'peak' (memory.max_usage_in_bytes / memory.peak, read-write: the supervisor resets
        it); on v1 also 'tcp_usage' and 'tcp_peak' (`memory.kmem.tcp.*`: v1 charges socket
        buffers apart from `memory.usage_in_bytes`, see `TCP_LIMIT_V1`). One that cannot be
        opened is left out (the supervisor then opens it itself, or goes without it)."""
        v1 = self.version == "v1"
        wanted = {
            "cpu": ("cpuacct", "cpuacct.usage" if v1 else "cpu.stat", os.O_RDONLY),
            "usage": ("memory", "memory.usage_in_bytes" if v1 else "memory.current", os.O_RDONLY),
            "peak": ("memory", "memory.max_usage_in_bytes" if v1 else "memory.peak", os.O_RDWR),
        }
        if v1:
            wanted["tcp_usage"] = ("memory", "memory.kmem.tcp.usage_in_bytes", os.O_RDONLY)
            wanted["tcp_peak"] = ("memory", "memory.kmem.tcp.max_usage_in_bytes", os.O_RDWR)
        fds = {}
        for name, (ctrl, file, flags) in wanted.items():
            try:
                fds[name] = self._fd(ctrl, file, flags)
            except OSError:
                continue
        return fds

    def usage(self) -> int:
        """Bytes charged to the cgroup now (v1 memory.usage_in_bytes, v2 memory.current)."""
        try:
            return int(self._read("memory", "memory.usage_in_bytes" if self.version == "v1"
                                  else "memory.current"))  # fmt: skip
        except (OSError, ValueError):
            return 1 << 62

    def forget_page_cache(self) -> None:
        """Drop every page charged to this cgroup (its processes gone): the file pages its
        run brought into the host's page cache leave it, so no later run can time a read to
        learn which pages this one touched (red team helper-93: answers handed from one
        measured run to the next in the cache state of cold pages of big view files).
        v1: `memory.force_empty`; v2: `memory.reclaim` of its whole usage. Best effort."""
        try:
            if self.version == "v1":
                _write(self.dirs["memory"], "memory.force_empty", 0)
            elif (held := self.usage()) > 0:
                _write(self.dirs["memory"], "memory.reclaim", held, optional=True)
        except OSError:
            pass

    def empty(self) -> bool:
        try:  # opened afresh: v1 serves a kept descriptor a pid list cached for a second
            return not _read(self.dirs["pids"], "cgroup.procs").strip()
        except OSError:
            return False

    def destroy(self) -> None:
        for fd in self._fds.values():  # of no use once the cgroup is gone
            os.close(fd)
        self._fds.clear()
        for d in set(self.dirs.values()):
            for _ in range(50):
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:  # tasks still exiting; the supervisor already SIGKILLed them
                    _kill_all(d)
                    threading.Event().wait(0.01)


def cpu_usage_ns(version: str, directory: str) -> int:
    """CPU counted by the cgroup at `directory` (version 'v1': a cpuacct cgroup, 'v2': any),
    in ns. Auto-reaped and still-running processes are counted too: wait4 rusage is not."""
    if version == "v1":
        return int(_read(directory, "cpuacct.usage").strip() or 0)
    for line in _read(directory, "cpu.stat").splitlines():
        if line.startswith("usage_usec "):
            return int(line.split()[1]) * 1000
    raise OSError(f"no usage_usec in {directory}/cpu.stat")


def _kill_all(d: str) -> None:
    try:
        for pid in _read(d, "cgroup.procs").split():
            try:
                os.kill(int(pid), 9)
            except (ProcessLookupError, ValueError):
                pass
    except OSError:
        pass


# Plain os-level I/O: these run on every run's critical path, where a text-mode open() costs
# several times the system calls themselves.
def _read(d: str, name: str) -> str:
    fd = os.open(os.path.join(d, name), os.O_RDONLY | os.O_CLOEXEC)
    try:
        data = b""
        while chunk := os.read(fd, 65536):
            data += chunk
        return data.decode()
    finally:
        os.close(fd)


#: cgroup v1 charges a socket's TCP buffers to the run's memory cgroup only once this limit is
#: set, and apart from `memory.usage_in_bytes` (`memory.kmem.tcp.usage_in_bytes`); v2 charges
#: them to `memory.current` always. Without it, data a run parked in loopback TCP buffers was
#: in no figure and under no limit (red team helper-87: 400 MiB held, 19 MB measured, past a
#: 256 MiB limit). Set to the run's memory limit; the supervisor adds the usage to the run's
#: figure and to what it holds against that limit.
TCP_LIMIT_V1 = "memory.kmem.tcp.limit_in_bytes"


def _write(d: str, name: str, value: object, optional: bool = False) -> None:
    try:
        fd = os.open(os.path.join(d, name), os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(fd, str(value).encode())
        finally:
            os.close(fd)
    except OSError:
        if not optional:
            raise


#: A pooled cgroup is reused only while it holds at most this much: a run's memory figure is
#: its cgroup's usage above the start, and a previous run's charges still held then (its tmpfs,
#: freed when its namespace ends, after its result was sent) would vanish during the next run
#: and hide as much of that run's own memory.
STALE_BYTES = 1 << 20
#: Most free cgroups kept; beyond it the oldest goes (one kept busy by stale page cache).
MAX_FREE = 8


class CgroupPool:
    """Reuses per-run cgroups: creating one costs far more than rewriting two limits."""

    def __init__(self) -> None:
        self._free: list[RunCgroup] = []
        self._lock = threading.Lock()
        atexit.register(self.close)

    def acquire(self, memory_bytes: int, max_pids: int) -> RunCgroup:
        with self._lock:
            cg = None
            for i in range(len(self._free) - 1, -1, -1):  # the most recently released first
                if self._free[i].usage() <= STALE_BYTES:
                    cg = self._free.pop(i)
                    break
        if cg is None:
            return RunCgroup.create(memory_bytes, max_pids)
        try:
            cg.reset(memory_bytes, max_pids)
            return cg
        except OSError:
            cg.destroy()
            return RunCgroup.create(memory_bytes, max_pids)

    def release(self, cg: RunCgroup) -> None:
        if not cg.empty():  # a straggler: never hand a busy cgroup to the next run
            cg.destroy()
            return
        with self._lock:
            self._free.append(cg)
            extra = self._free[:-MAX_FREE] if len(self._free) > MAX_FREE else []
            del self._free[: len(extra)]
        for old in extra:
            old.destroy()

    def close(self) -> None:
        with self._lock:
            free, self._free = self._free, []
        for cg in free:
            cg.destroy()


def remove_stale() -> int:
    """Remove run cgroups left by perfgym processes that no longer exist; returns how many."""
    removed = 0
    bases = [os.path.join(ROOT, c, PARENT) for c in ("memory", "pids", "cpuacct")]
    bases.append(os.path.join(ROOT, PARENT))
    for base in bases:
        try:
            names = os.listdir(base)
        except OSError:
            continue
        for name in names:
            m = re.fullmatch(r"run-(\d+)-\d+", name)
            if m and not os.path.exists(f"/proc/{m.group(1)}"):
                try:
                    os.rmdir(os.path.join(base, name))
                    removed += 1
                except OSError:
                    pass
    return removed
