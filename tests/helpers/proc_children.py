"""A process's children as the kernel lists them (tests that find a worker's processes)."""

from __future__ import annotations


def children(pid: int) -> list[int]:
    """The pids of `pid`'s children (its main thread's: /proc/PID/task/PID/children)."""
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(p) for p in f.read().split()]
