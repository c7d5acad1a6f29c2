"""The warm worker's CPU meter: a call's CPU is every process it had, cross-checked with a cgroup.

The rusage of every process the worker reaped for the call, and the worker cgroup's CPU
counter less the worker's own CPU: what the cgroup saw and no rusage did (a child the kernel
reaped because SIGCHLD was ignored) is added to the call's and reported as hidden.
"""

from __future__ import annotations

import os
import resource
import time

cg_fd, cg_kind = -1, ""  # the worker's cgroup CPU counter (read-only), when the host gave one
#: CPU the cgroup may show beyond the reaped processes' rusage before the call is flagged for
#: hidden CPU (kernel work around fork/exit, the bubblewrap monitor).
HIDDEN_TOL_S, HIDDEN_TOL_REL = 0.002, 0.05

PAGE = os.sysconf("SC_PAGE_SIZE")
#: The worker's memory cgroup: (usage, high-water mark) fds, (-1, -1) without one. A call's
#: memory is also the mark's rise over the call (reset before its first fork): RAM its
#: processes held where no RSS shows it (a memfd written and never mapped, files in /tmp,
#: pipe buffers) is charged there.
mem_fds = (-1, -1)


def statm() -> tuple[int, int]:
    """(virtual size, resident) of this process in bytes. Read in the server just before the
    fork, whose child starts with the same figures: reading it in the child cost ~0.15 ms of
    CPU and 34 copy-on-write faults per call."""
    fd = os.open("/proc/self/statm", os.O_RDONLY)
    try:
        fields = os.read(fd, 200).split()
    finally:
        os.close(fd)
    return int(fields[0]) * PAGE, int(fields[1]) * PAGE


def cgroup_ns() -> int:
    """The worker cgroup's CPU counter in ns (every process the worker ever ran), or -1."""
    if cg_fd < 0:
        return -1
    try:
        data = os.pread(cg_fd, 4096, 0)
        if cg_kind == "v1":
            return int(data)
        for line in data.split(b"\n"):
            if line.startswith(b"usage_usec "):
                return int(line.split()[1]) * 1000
    except (OSError, ValueError):
        pass
    return -1


#: The zygote's CPU as its last reply said (`zygote_client`): its fork of a call's child, its
#: reaping, are the worker's own work, not the call's.
zygote_cpu_s = 0.0
#: (user, system) CPU of the processes the zygote reaped for this request process's calls.
reaped_cpu_s = (0.0, 0.0)


def self_cpu() -> float:
    """The CPU of the worker's own processes: this one's and the zygote's (as last reported)."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime + zygote_cpu_s


def children_cpu() -> tuple[float, float]:
    """(user, system) CPU of every process reaped for this request process: its own children's
    and those the zygote reaped for it."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + reaped_cpu_s[0], ru.ru_stime + reaped_cpu_s[1]


def memory_base() -> int:
    """Reset the memory cgroup's high-water mark to its usage now and return that usage; -1
    without a memory cgroup, or where the mark cannot be reset (cgroup v2 before Linux 6.12)."""
    usage_fd, peak_fd = mem_fds
    if usage_fd < 0 or peak_fd < 0:
        return -1
    try:
        os.write(peak_fd, b"0" if cg_kind == "v1" else b"reset")
        return int(os.pread(usage_fd, 64, 0))
    except (OSError, ValueError):
        return -1


def meter() -> tuple[int, float, tuple[float, float], int]:
    """The counters a call's CPU and memory are the difference of (read just before its first
    fork)."""
    return cgroup_ns(), self_cpu(), children_cpu(), memory_base()


def metered(start: tuple[int, float, tuple[float, float], int], reply: dict) -> dict:
    """Fill `reply` with the call's CPU, read after every process of the call was reaped: the
    rusage of all of them (the main process, and whatever this PID 1 reaped), and the cgroup's
    CPU less this process's own. CPU the cgroup saw and no rusage did (a child reaped by the
    kernel because SIGCHLD was ignored) is added to the call's and reported as hidden."""
    cg0, self0, ch0, mem0 = start
    _memory(mem0, reply)
    ch1 = children_cpu()
    self1, cg1 = self_cpu(), cgroup_ns()
    user, system = ch1[0] - ch0[0], ch1[1] - ch0[1]
    reply["cpu_user_s"], reply["cpu_system_s"] = user, system
    if cg0 < 0 or cg1 < 0:
        reply["cpu_cgroup_s"] = None
        return reply
    others = max(0.0, (cg1 - cg0) / 1e9 - (self1 - self0))
    reply["cpu_cgroup_s"] = others
    hidden = others - (user + system)
    if hidden > HIDDEN_TOL_S + HIDDEN_TOL_REL * (user + system):
        reply["cpu_hidden_s"] = hidden
    return reply


def _memory(base: int, reply: dict) -> None:
    """The call's peak memory: also the memory cgroup's rise over the call, where it has one
    (`memory_cgroup` in the reply says so)."""
    if base < 0:
        return
    try:
        peak = int(os.pread(mem_fds[1], 64, 0))
    except (OSError, ValueError):
        return
    reply["peak_rss_mb"] = max(float(reply.get("peak_rss_mb") or 0.0), (peak - base) / 1048576.0)
    reply["memory_cgroup"] = True


def send_stamp(fd: int) -> None:
    """In the call's child, before any program code runs: the clock and the child's CPU so far,
    sent and the pipe closed, so the program can neither take them back nor send others (the
    parent reads the first 16 bytes)."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    cpu_ns = int((ru.ru_utime + ru.ru_stime) * 1e9)
    os.write(fd, time.monotonic_ns().to_bytes(8, "big") + cpu_ns.to_bytes(8, "big"))
    os.close(fd)


def program_figures(fd: int, exit_ns: int, ru: resource.struct_rusage, reply: dict) -> float:
    """`program_wall_s` / `program_cpu_s` from the child's stamp to its exit, by the worker's
    clock and the kernel's CPU count; left out when the child never got that far. The child's
    CPU at the stamp (-1 without one), for `program_cpu_all`."""
    try:
        data = os.read(fd, 16)
    finally:
        os.close(fd)
    if len(data) != 16:
        return -1.0
    wall_ns, cpu_ns = int.from_bytes(data[:8], "big"), int.from_bytes(data[8:], "big")
    reply["program_wall_s"] = max(0, exit_ns - wall_ns) / 1e9
    reply["program_cpu_s"] = max(0.0, ru.ru_utime + ru.ru_stime - cpu_ns / 1e9)
    return cpu_ns / 1e9


def call_window(stamp_cpu_s: float, ready_cpu_s: float, done_cpu_s: float, reply: dict) -> None:
    """After `metered`, with the cgroup: `program_cpu_s` is the CPU of the call's every process
    (its child and whatever it forked, waited for or not, reaped by anyone) from the child's
    "ready" (its module run, the arguments not yet given) to its "done" (its result written;
    the end when it never said so); from its stamp when it never said ready. Work moved into a
    child nobody waits for is the program's too, and neither an import nor the exit is the
    call's (ENAMEL times the call alone). Without a cgroup: the child's own rusage from its
    stamp to its exit (`program_figures`)."""
    every = reply.get("cpu_cgroup_s")
    if "program_cpu_s" not in reply or every is None:
        return
    if ready_cpu_s >= 0:
        end = done_cpu_s if done_cpu_s >= 0 else every
        reply["program_cpu_s"] = max(0.0, end - ready_cpu_s)
        reply["program_cpu_call_only"] = done_cpu_s >= 0
    elif stamp_cpu_s >= 0:
        reply["program_cpu_s"] = max(reply["program_cpu_s"], every - stamp_cpu_s)
