"""`acquire`/`release`: a uid of its own for each run in flight, so no run can read another's
use of what the kernel counts per user.

Every sandboxed program ran as uid 65534, and the kernel counts some resources per user, not
per namespace: POSIX message queues' bytes (`RLIMIT_MSGQUEUE`), pipe buffer pages
(`fs.pipe-user-pages-soft`), inotify instances, processes (`RLIMIT_NPROC`). A run that filled
what was left of one and measured it read, to the byte, what a concurrent run held: red team
helper-75 passed answers between two copies of one program through message queue sizes (RLPF
0.45-0.53 against the honest twin's 0.15, unflagged). A run now gets a uid no other run in
flight on this host has: one of `SLOTS` per process, in a range of its own per process id
(pid_max is at most 2^22), above the Python workers' (`pyworker.worker`, their checks' at 2^31
and up). A run whose binds are writable (a build, a repository command) keeps the shared uid:
its files must stay the next run's to use.
"""

from __future__ import annotations

import os
import threading

from perfgym.sandbox.request import RUN_UID

#: Runs in flight per process that get a uid of their own (beyond: the shared one).
SLOTS = 128
BASE = 1_100_000_000
_PID_SPAN = 1 << 22  # the most process ids Linux hands out (pid_max's ceiling)

_lock = threading.Lock()
_free = set(range(SLOTS))


def acquire() -> int:
    """A uid no other run in flight on this host has (the shared `RUN_UID` once this process
    has `SLOTS` runs in flight)."""
    with _lock:
        if not _free:
            return RUN_UID
        slot = min(_free)
        _free.discard(slot)
    return BASE + (os.getpid() % _PID_SPAN) * SLOTS + slot


def release(uid: int) -> None:
    """Give back a uid `acquire` returned (the shared one is never held)."""
    if uid == RUN_UID:
        return
    slot = (uid - BASE) % SLOTS
    with _lock:
        _free.add(slot)
