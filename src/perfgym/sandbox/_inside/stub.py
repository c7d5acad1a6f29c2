"""The supervisor's side of the exec stub (exec_stub.c): start it ahead of its run, then order it.

A warm launcher's spare starts its stub before any request arrives, so posix_spawn, the stub's
own exec and the run's pipes cost nothing on the run's critical path; the stub then waits at
the gate. The run's orders (core, limits, uid, cgroups, argv, env) go through the gate; the
stub joins the cgroups itself, so the supervisor has no second hand-off to make.
"""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import time
from typing import Any

#: Every catchable signal: reset to its default in the spawned stub (Python ignores SIGPIPE and
#: SIGXFSZ, the launcher SIGCHLD; an exec keeps ignored signals ignored).
_ALL_SIGNALS = tuple(signal.valid_signals() - {signal.SIGKILL, signal.SIGSTOP})

Sched = tuple[int, os.sched_param] | None  # a scheduling policy to start the stub with


class Stub:
    """A started exec stub waiting at its gate, with the run's stdio ready: `stdin` (a memfd
    to fill), `out_r` and `err_r` (the read ends of its stdout and stderr), `exec_err_r`
    (end of file once the program is exec'd; an error message if it could not be)."""

    def __init__(self, path: str, sched: Sched = None) -> None:
        self.stdin = os.memfd_create("stdin", os.MFD_ALLOW_SEALING)
        self.out_r, out_w = os.pipe()
        self.err_r, err_w = os.pipe()
        gate_r, self.gate_w = os.pipe2(os.O_CLOEXEC)
        self.exec_err_r, exec_err_w = os.pipe2(os.O_CLOEXEC)
        theirs = (self.stdin, out_w, err_w, exec_err_w, gate_r)  # become fds 0-4, in order
        # Lift the sources above the targets first, so no dup2 overwrites a later source.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in theirs]
        try:
            actions = [(os.POSIX_SPAWN_DUP2, fd, target) for target, fd in enumerate(high)]
            extra: dict[str, Any] = {"scheduler": sched} if sched is not None else {}
            self.pid = os.posix_spawn(path, [path], {}, file_actions=actions, setsid=True,
                                      setsigdef=_ALL_SIGNALS, **extra)  # fmt: skip
        finally:
            for fd in (*high, out_w, err_w, gate_r, exec_err_w):
                os.close(fd)
        os.set_inheritable(self.stdin, False)

    def give_stdin(self, data: bytes) -> None:
        """The program's stdin (the stub's fd 0 shares this file and its offset), sealed."""
        view = memoryview(data)
        while view:
            view = view[os.write(self.stdin, view) :]
        os.lseek(self.stdin, 0, os.SEEK_SET)
        seal(self.stdin)

    def copy_stdin(self, source: int) -> None:
        """The program's stdin, copied in the kernel from the file open at `source` (the
        host's memfd: no bytes pass through this process)."""
        size, offset = os.fstat(source).st_size, 0
        while offset < size:
            sent = os.sendfile(self.stdin, source, offset, size - offset)
            if sent == 0:
                break
            offset += sent
        os.lseek(self.stdin, 0, os.SEEK_SET)
        seal(self.stdin)

    def go(self, spec: dict, cgroup_procs: list[str]) -> None:
        """Send the run's orders: from here the stub joins the cgroups, drops and execs."""
        data = memoryview(orders(spec, cgroup_procs))
        try:
            while data:
                data = data[os.write(self.gate_w, data) :]
        finally:
            os.close(self.gate_w)
            self.gate_w = -1

    def abandon(self) -> None:
        """No run for this stub: it sees end of file at the gate and exits (reaped by PID 1)."""
        for fd in (self.gate_w, self.stdin, self.out_r, self.err_r, self.exec_err_r):
            if fd >= 0:
                os.close(fd)
        self.gate_w = -1


#: Every seal a run's input memfd carries: no write, no size change, no more seals.
SEALS = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL
#: Tries at sealing before the kernel's EBUSY is the caller's error (each try waits ~150 ms in
#: the kernel first; a CI run on a loaded 2-core machine saw one EBUSY in ~10^5 seals).
SEAL_TRIES = 5


def seal(fd: int) -> None:
    """Seal the memfd at `fd` against every change: the program's fd 0 is this file, opened
    read-write, and the supervisor does not count the run's input as memory it holds (red
    team rt66 held 300 MiB written into an unsealed fd 0, unmeasured and unlimited).

    F_SEAL_WRITE fails with EBUSY while a page of the file holds a reference beyond its cache
    entry; the reference is transient (the write that filled the page has returned), so the
    seal is tried again after a short sleep rather than failing the run."""
    for attempt in range(SEAL_TRIES):
        try:
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, SEALS)
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY or attempt == SEAL_TRIES - 1:
                raise
            time.sleep(0.02 * 2**attempt)


def _cores_field(cpu: int | list[int] | None) -> str:
    """CORES as the stub reads it: -1 (not pinned) or the cores, comma-separated."""
    if cpu is None:
        return "-1"
    return ",".join(str(int(c)) for c in (cpu if isinstance(cpu, list) else [cpu]))


def orders(spec: dict, cgroup_procs: list[str]) -> bytes:
    """The gate message for `spec` (format: see exec_stub.c)."""
    lim = spec["limits"]
    uid = int(spec["uid"])
    cpu = spec.get("cpu")
    nproc = int(lim["max_processes"]) if "pids" not in (spec.get("cgroups") or {}) else -1
    env = [f"{k}={v}" for k, v in spec["env"].items()]
    fields = [
        _cores_field(cpu), str(uid), str(int(spec.get("gid", uid))),
        str(int(lim["cpu_s"]) + 1), str(int(lim["file_size_bytes"])),
        str(int(lim["open_files"])), str(nproc), spec.get("cwd") or "/tmp",
        str(len(cgroup_procs)), *cgroup_procs,
        str(len(spec["argv"])), *spec["argv"],
        str(len(env)), *env,
    ]  # fmt: skip
    body = b"".join(os.fsencode(f) + b"\0" for f in fields)
    return len(body).to_bytes(4, "little") + body
