"""The worker's /proc shows a call its own processes alone: the zygote and the long-lived
request process are not there to read (red team rt65 read the request process's peak memory,
page faults and CPU in /proc/<pid>/status and stat, and so the size of earlier calls)."""

from __future__ import annotations

import ctypes
import os

_libc = ctypes.CDLL(None, use_errno=True)
_MS_REMOUNT, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_RELATIME = 32, 2, 4, 8, 1 << 21


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
