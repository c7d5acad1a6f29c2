"""What a worker's calls see of the worker: in /proc only their own processes (the zygote and
the long-lived request process are not there to read: red team rt65 read the request process's
peak memory, page faults and CPU in /proc/<pid>/status and stat, and so the size of earlier
calls), and no cgroup file at all (the worker's cgroup lives on from call to call, and its
cumulative counters are a channel from one call to a later one: red team rt66 stored a number
in a pooled cgroup's `pids.events` by failing forks, and read it back in a later run)."""

from __future__ import annotations

import ctypes
import os

_libc = ctypes.CDLL(None, use_errno=True)
_MS_RDONLY, _MS_REMOUNT, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_RELATIME = 1, 32, 2, 4, 8, 1 << 21
#: Where the cgroup file systems are (bound read-only into every sandbox's view with /sys).
CGROUPS = "/sys/fs/cgroup"


def hide_other_users() -> str:
    """Remount this sandbox's /proc (its own instance, bubblewrap's `--proc`) so that a process
    sees only those of its own uid (`hidepid=invisible`; `hidepid=2` before Linux 5.8). Needs
    CAP_SYS_ADMIN: the zygote, at its start. '' or why it failed."""
    flags = _MS_REMOUNT | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC | _MS_RELATIME  # bubblewrap's, kept
    for option in (b"hidepid=invisible", b"hidepid=2"):
        if _libc.mount(b"proc", b"/proc", b"proc", flags, option) == 0:
            return ""
        err = ctypes.get_errno()
    return f"remount /proc with hidepid: {os.strerror(err)}"


def hide_cgroups() -> str:
    """Cover the cgroup file systems with an empty read-only tmpfs (the worker meters its
    cgroup through descriptors opened by the host). Needs CAP_SYS_ADMIN: the zygote, at its
    start. '' or why it failed."""
    if not os.path.isdir(CGROUPS):
        return ""
    flags = _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    if _libc.mount(b"tmpfs", CGROUPS.encode(), b"tmpfs", flags, b"size=4k,mode=0755") == 0:
        return ""
    return f"cover {CGROUPS}: {os.strerror(ctypes.get_errno())}"
