"""The warm worker's calls forget what they cached: their own memory cgroup, emptied after each.

Every process that runs a call's program first joins a memory cgroup of the calls' own, below
the worker's (`WorkerCgroup.calls`); the worker itself (its zygote, its request processes) is
never in it. Pages a call brings into the host's page cache and the directory entries its
lookups leave (a name that does not exist, cached as missing) are charged there, and when the
call's every process is gone the cleanup reclaims all of it (`memory.force_empty`), where the
call's limits ask it to (`Limits.forget_page_cache`, a candidate's timed call). Without
it the next call could time a lookup or a read to learn what an earlier call looked up or read:
red team helper-95 carried HumanEval/59's answer from one call to the next in which made-up
names under /usr/bin were cached as missing (~2.5 us a cold lookup, ~1.3 us a cached one).

Two counters of the worker's are reset too, which no cache reclaim touches (red team helper-97:
a call that forked k processes moved the next call's `os.getpid()` by exactly k, and one that
made k files moved the next new file's inode number by k): the zygote writes a random value to
its PID namespace's `ns_last_pid` before each fork (`shuffle_pids`; `zygote_loop.c` the same),
and a forgetting call's child, or a request process that forks its call's processes, puts a
fresh tmpfs over `/tmp` and `/dev/shm` before any program runs (`renew_tmpfs`).

Best effort: where the host made no such cgroup (cgroup v2, whose worker cgroup cannot have
both processes and a child with the memory controller; no writable hierarchy) nothing is
joined and nothing is forgotten (docs/security.md, section 13).
"""

from __future__ import annotations

import ctypes
import os

#: (the calls cgroup's `cgroup.procs`, its `memory.force_empty`), write-only; -1: none.
fds = (-1, -1)
#: The request being served asked to forget (`Limits.forget_page_cache`: a candidate's timed
#: or counted call). Reclaiming costs the host's other core a drain of its page lists (warm
#: calls/s fell 18% when every call forgot), so correctness calls keep their pages.
wanted = False


def join() -> None:
    """In a child about to run a program, before its descriptors are closed: move this process
    into the calls' cgroup (its children follow)."""
    if fds[0] >= 0:
        try:
            os.write(fds[0], b"0")
        except OSError:
            pass


def forget() -> None:
    """Once every process of the call is gone, where the call asked to: reclaim every page and
    directory entry charged to the calls' cgroup (an earlier call's that did not ask too)."""
    if wanted and fds[1] >= 0:
        try:
            os.write(fds[1], b"0")
        except OSError:
            pass


_libc = ctypes.CDLL(None, use_errno=True)
_MNT_DETACH = 2
_MS_NOSUID, _MS_NODEV = 0x2, 0x4
#: The PID namespace's next-PID cursor (writable by the zygote: root, CAP_SYS_ADMIN).
NS_LAST_PID = "/proc/sys/kernel/ns_last_pid"
_PID_LOW = 300


def _pid_max() -> int:
    try:
        with open("/proc/sys/kernel/pid_max") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 32768


def _tmpfs_options() -> dict[str, str]:
    """The worker's private tmpfs mounts (mount point -> their options: size, mode), read once
    in the zygote at its start."""
    found: dict[str, str] = {}
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                point, fstype = left.split()[4], right.split()[0]
                if fstype == "tmpfs" and point in ("/tmp", "/dev/shm"):
                    opts = [o for o in right.split()[2].split(",")
                            if o.startswith(("size=", "mode=", "nr_inodes="))]  # fmt: skip
                    found[point] = ",".join(opts)
    except (OSError, IndexError):
        pass
    return found


PID_MAX = _pid_max()
TMPFS = _tmpfs_options()


def shuffle_pids() -> None:
    """In the zygote, before it forks: the next PID of its namespace at random, so that no
    process of a call can tell from a PID how many processes an earlier call forked."""
    try:
        fd = os.open(NS_LAST_PID, os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        span = max(1, PID_MAX - 2 * _PID_LOW)
        os.write(fd, str(_PID_LOW + int.from_bytes(os.urandom(4), "big") % span).encode())
    except OSError:
        pass
    finally:
        os.close(fd)


def renew_tmpfs() -> str:
    """Before a call's program runs, in a process that still has CAP_SYS_ADMIN: a fresh tmpfs,
    with the same options, over each of the worker's private ones (whose inode numbers count
    every file an earlier call made). '' or why one could not be renewed."""
    for point, opts in TMPFS.items():
        path = point.encode()
        if _libc.umount2(path, _MNT_DETACH) != 0:
            return f"umount {point}: {os.strerror(ctypes.get_errno())}"
        if _libc.mount(b"tmpfs", path, b"tmpfs", _MS_NOSUID | _MS_NODEV, opts.encode()) != 0:
            return f"mount {point}: {os.strerror(ctypes.get_errno())}"
    return ""
