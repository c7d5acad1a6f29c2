"""Work that measures programs runs at normal priority: Ray starts its workers at nice 15, and
on a busy machine a niced judge (and every program it starts, which inherits the nice value)
gets a sliver of a core, so rewards stall and timings measure the neighbours' load."""

from __future__ import annotations

import logging
import os

#: Ray's raylet starts its workers at this nice value unless the environment says otherwise.
RAY_NICENESS_ENV = "RAY_worker_niceness"

_log = logging.getLogger(__name__)


def in_ray_worker() -> bool:
    """This process is a worker a raylet started (Ray sets RAY_RAYLET_PID in its workers)."""
    return "RAY_RAYLET_PID" in os.environ


def undo_ray_niceness() -> str | None:
    """In a Ray worker started niced, go back to nice 0 (lowering a nice value needs root or
    CAP_SYS_NICE). Returns None when the process now runs at nice <= 0 (or is no Ray worker),
    else one line saying at what nice value it stays and why; that line is also logged."""
    if not in_ray_worker():
        return None
    now = os.getpriority(os.PRIO_PROCESS, 0)
    if now <= 0:
        return None
    try:
        os.setpriority(os.PRIO_PROCESS, 0, 0)
    except OSError as exc:
        note = (f"this Ray worker runs at nice {now} and cannot lower it ({exc.strerror}): its "
                f"judging and timing get less CPU on a busy node; start Ray with "
                f"{RAY_NICENESS_ENV}=0")  # fmt: skip
        _log.warning(note)
        return note
    return None
