"""A warm spare's view: its namespaces and what it mounts, before its request (`Ready`) and
with it (`prepare_view`): work dir, binds, hidden paths, and the covers over the host's root and
the cgroup file systems (see launcher.py, which forks the spares)."""

from __future__ import annotations

import os
import stat

import linux

NOSUID = linux.MS_NOSUID | linux.MS_NODEV


def prepare_namespace() -> None:
    """In a spare, before any request: its own mount namespace, a /proc of its PID namespace,
    an IPC namespace of its own (no SysV segment, queue or semaphore set, nor POSIX message
    queue, of another run is there, and the kernel frees the run's own when its last process
    exits), and a network namespace of its own: no socket of another run, concurrent or
    earlier (two concurrent runs talked over an abstract unix socket, red team rt66). Its
    loopback stays down and no run opens an AF_INET/AF_INET6 socket (the launcher's seccomp
    filter refuses them): loopback TCP buffers were memory the run's cgroup missed (red team
    helper-87, helper-88: 800 MiB held in connections never accepted, 40 MB measured)."""
    linux.unshare(linux.CLONE_NEWNS | linux.CLONE_NEWIPC | linux.CLONE_NEWNET)
    # A devpts instance of its own (/dev/ptmx is bubblewrap's link to pts/ptmx): a concurrent
    # run opened another's pseudo-terminal, a channel both ways (red team rt67). Its ptmx
    # opens for nobody (mode 0): the host's count of ptys, which any run reads, moved with a
    # run's own ptys, a channel too (helper-76; see `view.base_args`).
    if os.path.isdir("/dev/pts"):
        linux.mount(
            "devpts",
            "/dev/pts",
            "devpts",
            linux.MS_NOSUID | linux.MS_NOEXEC,
            "newinstance,ptmxmode=0000,mode=620",
        )  # fmt: skip (devices: not nodev)
    linux.mount("none", "/", None, linux.MS_REC | linux.MS_PRIVATE)
    linux.mount("proc", "/proc", "proc", NOSUID | linux.MS_NOEXEC)
    for sub in ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"):
        if os.path.exists(sub):
            linux.mount(sub, sub, None, linux.MS_BIND | linux.MS_REC)
            linux.mount("none", sub, None, linux.MS_REMOUNT | linux.MS_BIND | linux.MS_RDONLY)
    _freeze_counters()


#: The frozen copies of the host's counters, where the launcher's view shows them
#: (perfgym.sandbox.host_counters.MOUNT; absent when the sandbox shows the live ones).
COUNTERS = "/run/perfgym/counters"


def _freeze_counters() -> None:
    """Cover this /proc's counters of the whole host with their frozen copies, as bubblewrap
    covered the launcher's (perfgym.sandbox.host_counters): a new /proc shows the live ones,
    which a concurrent run moves. The copies are read-only and root's: a bind of them needs no
    remount."""
    try:
        with open(COUNTERS + "/covers") as f:
            covers = [line.strip() for line in f if line.startswith("proc/")]
    except OSError:
        return
    for rel in covers:
        if os.path.exists("/" + rel):
            linux.mount(f"{COUNTERS}/{rel}", "/" + rel, None, linux.MS_BIND)


#: Where the cgroup file systems are (read-only, with /sys, in every view).
CGROUPS = "/sys/fs/cgroup"
#: Where a warm run finds its own cgroup's CPU counter (repos/_inside/workload_timer.py).
OWN_CPU_COUNTER = CGROUPS + "/perfgym-run/cpuacct.usage"
#: The host's root as the launcher sees it (perfgym.sandbox.view.HOST_MOUNT): bind sources are
#: looked up there, and each spare covers it before its program starts.
HOST_MOUNT = "/run/perfgym/host"


class Ready:
    """What a spare mounts before its request (`build`): the work dir and /dev/shm at the
    sizes most runs ask for (the launcher's argv), and the cover over the host's root, keeping
    a descriptor of that root for bind sources. A request then finds its view mostly built
    (three tmpfs mounts off its critical path: 0.1 ms on this VM)."""

    def __init__(self) -> None:
        self.mounts: dict[str, int] = {}  # path -> size of a tmpfs mounted empty
        self.host_root = -1  # O_PATH descriptor of the host's root, kept for bind sources
        self.covered = False  # the host's root is covered already
        self.cgroups_covered = False  # the cgroup file systems are (see _cover_cgroups)
        self.cgroups_root = -1  # O_PATH descriptor of what lies beneath that cover

    @classmethod
    def build(cls, mounts: list[tuple[str, int]]) -> Ready:
        """As much as can be done now; what fails is left to the request, which redoes it
        and reports the error as the run's (a spare that died here would be forked again
        and again)."""
        ready = cls()
        try:
            for path, size in mounts:
                linux.mount("tmpfs", path, "tmpfs", NOSUID, _sized(size) + ",mode=1777")
                ready.mounts[path] = int(size)
            if os.path.isdir(HOST_MOUNT):
                ready.host_root = os.open(HOST_MOUNT, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
                _cover_host()
                ready.covered = True
            if os.path.isdir(CGROUPS):  # kept: the run's own counter is found through it
                ready.cgroups_root = os.open(CGROUPS, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
                ready.cgroups_covered = _cover_cgroups()
        except (OSError, RuntimeError):
            pass
        return ready

    def source(self, path: str) -> int:
        """An O_PATH descriptor of host `path` (absolute, resolved by the host), looked up
        under the host's root when the launcher has it."""
        if self.host_root >= 0:
            rel = os.path.normpath("/" + path).lstrip("/") or "."
            return os.open(rel, os.O_PATH | os.O_CLOEXEC, dir_fd=self.host_root)
        if not self.covered and os.path.isdir(HOST_MOUNT):
            path = HOST_MOUNT + os.path.normpath("/" + path)
        return os.open(path, os.O_PATH | os.O_CLOEXEC)

    def close(self) -> None:
        if self.host_root >= 0:
            os.close(self.host_root)
            self.host_root = -1


def _sized(size: int) -> str:
    """A private tmpfs's size options: `size` bytes of data, and as many KiB of inode space
    (files, long names and extended attributes draw on it, not on the size: 600 MiB of xattrs
    passed a 1 MiB quota, red team rt66)."""
    return f"size={int(size)},nr_inodes={max(1024, int(size) // 1024)}"


def _cover_cgroups() -> bool:
    """Cover the cgroup file systems with an empty read-only tmpfs: the host sends the run's
    counter files and `cgroup.procs` open, so nothing of this run needs a path there, and its
    program must not read any cgroup's files (a pooled cgroup's cumulative counters carried a
    number from one run to a later one, and concurrent runs watched each other's CPU and
    memory: red team rt66). One empty file is left in it, OWN_CPU_COUNTER, for the run's own
    CPU counter (`show_own_counter`)."""
    if not os.path.isdir(CGROUPS):
        return False
    linux.mount("tmpfs", CGROUPS, "tmpfs", NOSUID | linux.MS_NOEXEC, "size=64k,mode=0755")
    try:
        os.makedirs(os.path.dirname(OWN_CPU_COUNTER), mode=0o755)
        os.close(os.open(OWN_CPU_COUNTER, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o444))
    finally:
        linux.mount("none", CGROUPS, None, linux.MS_REMOUNT | linux.MS_BIND | linux.MS_RDONLY
                    | NOSUID | linux.MS_NOEXEC)  # fmt: skip
    return True


def show_own_counter(spec: dict, ready: Ready) -> None:
    """At OWN_CPU_COUNTER under the cover: the run's own v1 `cpuacct.usage` (the repository
    agent's workload timer reads it), which the host resets before every run, so it holds
    nothing of an earlier one (v2's cpu.stat is never reset: not shown, and the file stays
    empty)."""
    try:
        own = (spec.get("cgroups") or {}).get("cpuacct")
        if (
            ready.cgroups_covered
            and own
            and own.startswith(CGROUPS + "/")
            and ready.cgroups_root >= 0
        ):
            rel = own[len(CGROUPS) + 1 :] + "/cpuacct.usage"
            source = os.open(rel, os.O_PATH | os.O_CLOEXEC, dir_fd=ready.cgroups_root)
            try:
                linux.mount(f"/proc/self/fd/{source}", OWN_CPU_COUNTER, None, linux.MS_BIND)
            finally:
                os.close(source)
            linux.mount("none", OWN_CPU_COUNTER, None, linux.MS_REMOUNT | linux.MS_BIND
                        | linux.MS_RDONLY | NOSUID | linux.MS_NOEXEC)  # fmt: skip
    finally:
        if ready.cgroups_root >= 0:
            os.close(ready.cgroups_root)
            ready.cgroups_root = -1


def _cover_host() -> None:
    """Cover the host's root: the program's view is the allow-list alone.

    Covered, not unmounted: a lazy unmount waits for an RCU grace period (0.1 ms median,
    1.6 ms p90 on this VM), a tmpfs on top costs 17 us. What lies beneath cannot be reached:
    the program has no capability to unmount it, holds no descriptor into it, and in a user
    namespace of its own the mounts it inherits are locked together (the kernel refuses to
    unmount the cover, EINVAL)."""
    linux.mount("tmpfs", HOST_MOUNT, "tmpfs", NOSUID | linux.MS_NOEXEC | linux.MS_RDONLY,
                "size=4k,mode=0755")  # fmt: skip
    if os.listdir(HOST_MOUNT):
        raise RuntimeError(f"the host's root is still visible at {HOST_MOUNT}")


def prepare_view(spec: dict, ready: Ready) -> None:
    """Once the request is known: work dir (resized when it asks for another size), binds and
    hidden paths; the host's root is covered already, and its descriptor closed here."""
    view = spec["view"]
    try:
        sources = []  # opened first: a source may live under the host's /tmp
        for src, _d, _w in view["binds"]:
            fd = ready.source(src)
            sources.append((fd, stat.S_ISDIR(os.fstat(fd).st_mode)))
    finally:
        ready.close()
    nosuid = NOSUID
    for private, size in view["mounts"]:  # the work dir; POSIX shm and semaphores
        have = ready.mounts.get(private)
        if have == int(size):
            continue
        if have is None:
            linux.mount("tmpfs", private, "tmpfs", nosuid, _sized(size) + ",mode=1777")
        else:  # mounted empty before the request: only its size changes
            linux.mount("tmpfs", private, "tmpfs", nosuid | linux.MS_REMOUNT, _sized(size))
    for (_src, dst, writable), (fd, is_dir) in zip(view["binds"], sources, strict=True):
        if is_dir:
            os.makedirs(dst, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            open(dst, "ab").close()
        linux.mount(f"/proc/self/fd/{fd}", dst, None, linux.MS_BIND | linux.MS_REC)
        os.close(fd)
        flags = linux.MS_REMOUNT | linux.MS_BIND | linux.MS_NOSUID
        if not writable:
            flags |= linux.MS_RDONLY
        linux.mount("none", dst, None, flags)
    for path in view["hide"]:
        linux.mount("tmpfs", path, "tmpfs", nosuid, "size=4k,mode=0755")
    if not ready.covered and os.path.isdir(HOST_MOUNT):
        _cover_host()
