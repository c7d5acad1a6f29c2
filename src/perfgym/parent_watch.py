"""`watch_parent`: a process perfgym starts on a user's behalf ends when the process that started
it ends, however that one ended (SIGTERM skips `__exit__`; SIGKILL skips everything).

A daemon thread polls the parent's pid (a thread, not PR_SET_PDEATHSIG: that signal follows the
*thread* that forked, which may end long before the process). When the parent is gone (this
process was reparented), the process is asked to stop as an interrupt would (SIGTERM, so its own
shutdown runs and its children go with it) and, if still alive after `grace_s`, killed.
"""

from __future__ import annotations

import os
import signal
import threading
import time


def watch_parent(parent_pid: int | None = None, *, interval_s: float = 0.2,
                 grace_s: float = 10.0) -> threading.Thread | None:  # fmt: skip
    """Start watching `parent_pid` (default: the current parent). None if it is already gone
    (this process then stops at once)."""
    parent = os.getppid() if parent_pid is None else parent_pid

    def gone() -> bool:
        return os.getppid() != parent

    if gone():
        _stop(grace_s)
        return None

    def loop() -> None:
        while not gone():
            time.sleep(interval_s)
        _stop(grace_s)

    thread = threading.Thread(target=loop, name="perfgym-parent-watch", daemon=True)
    thread.start()
    return thread


def _stop(grace_s: float) -> None:
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(grace_s)
    os.kill(os.getpid(), signal.SIGKILL)
