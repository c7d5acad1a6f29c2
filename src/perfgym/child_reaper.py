"""`ChildReaper`: processes perfgym started for a user (a local Ray cluster) end when the process
that started them ends, however it ends (SIGKILL included), even those that left its tree.

A small watcher process, in its own session (a terminal's Ctrl-C does not reach it), is given
the roots perfgym started (e.g. the GCS and raylet that `ray.init` spawned). While the owner
lives it records every descendant of those roots, each by (pid, start time), so a reused pid is
never taken for one of them; when the owner is gone it sends SIGTERM to every recorded process
still alive, then SIGKILL after a grace period. Ray's own reaper misses processes in other
process groups (its per-node agents), which then outlived their parent for minutes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

POLL_S = 0.25
GRACE_S = 2.0


def process_stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time in clock ticks) of a live process; None if gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[1]), int(fields[19])


def children_of(pid: int) -> set[int]:
    """The direct children of `pid`, from /proc."""
    out = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = process_stat(int(name))
            if st is not None and st[0] == pid:
                out.add(int(name))
    return out


def _tree(roots: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """The live processes among `roots` and all their descendants, as (pid, start)."""
    by_parent: dict[int, list[tuple[int, int]]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = process_stat(int(name))
            if st is not None:
                by_parent.setdefault(st[0], []).append((int(name), st[1]))
    found = {r for r in roots if _alive(r)}
    todo = [pid for pid, _ in found]
    while todo:
        for child in by_parent.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child[0])
    return found


def _alive(p: tuple[int, int]) -> bool:
    st = process_stat(p[0])
    return st is not None and st[1] == p[1]


def _signal(procs: set[tuple[int, int]], sig: int) -> None:
    for p in procs:
        if _alive(p):
            try:
                os.kill(p[0], sig)
            except OSError:
                pass


def end_trees(roots: set[int] | list[int]) -> None:
    """End `roots` and all their descendants now: SIGTERM, then SIGKILL after the grace period."""
    procs = _tree({(pid, st[1]) for pid in roots if (st := process_stat(pid)) is not None})
    _signal(procs, signal.SIGTERM)
    end = time.monotonic() + GRACE_S
    while time.monotonic() < end and any(map(_alive, procs)):
        time.sleep(0.05)
    _signal(procs, signal.SIGKILL)


def reap(owner: int, roots: list[int]) -> None:
    """The watcher's loop: record `roots`' tree while `owner` lives, then end what is left."""
    seen = {(pid, st[1]) for pid in roots if (st := process_stat(pid)) is not None}
    while os.getppid() == owner:
        seen |= _tree(seen)
        time.sleep(POLL_S)
    seen |= _tree(seen)
    _signal(seen, signal.SIGTERM)
    end = time.monotonic() + GRACE_S
    while time.monotonic() < end and any(map(_alive, seen)):
        time.sleep(0.05)
    _signal(seen, signal.SIGKILL)


class ChildReaper:
    """Starts the watcher for `roots` (children of this process); `stop()` when they were ended
    the ordinary way (the watcher then has nothing to do)."""

    def __init__(self, roots: set[int] | list[int]) -> None:
        self.roots = sorted(roots)
        argv = [sys.executable, "-m", "perfgym.child_reaper", str(os.getpid())]
        self.proc = subprocess.Popen([*argv, *map(str, self.roots)], stdin=subprocess.DEVNULL,
                                     start_new_session=True)  # fmt: skip

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def main(argv: list[str]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    reap(int(argv[1]), [int(a) for a in argv[2:]])


if __name__ == "__main__":
    main(sys.argv)
