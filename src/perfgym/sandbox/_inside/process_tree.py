"""The supervisor's view of a run's processes: sampled memory (RSS and what the run holds
beyond it, see `held_memory`) and threads, and CPU that cannot be hidden (the run's cgroup
count, or without one every process ever seen)."""

from __future__ import annotations

import os

try:  # loaded as a package module or as a plain script next to held_memory.py
    from .held_memory import Held, open_counter  # type: ignore[no-redef]
except ImportError:  # pragma: no cover - script mode under `python3 -I -S`
    from held_memory import Held, open_counter  # type: ignore[no-redef]

TICKS = os.sysconf("SC_CLK_TCK")


class Tree:
    """Samples the processes of this PID namespace (everything but PID 1, the supervisor)."""

    def __init__(self, cgroups: dict[str, str], counters: dict[str, int] | None = None) -> None:
        """`counters`: the cgroup counter files already open ('cpu', 'usage', 'peak': the
        warm host keeps them open per pooled cgroup and sends them with the request, which
        saves this process three path walks into the cgroup filesystem on the run's
        critical path); those absent are opened here by path."""
        counters = counters or {}
        # v1: cpuacct.usage (ns); v2: cpu.stat's usage_usec. Read as a difference from now:
        # a pooled cgroup's counter need not start at zero.
        self.cpu_v2 = "cpuacct" not in cgroups
        if not cgroups:
            self.cpuacct_fd = None
        elif "cpu" in counters:
            self.cpuacct_fd = counters["cpu"]
        else:
            self.cpuacct_fd = (
                open_counter(cgroups.get("cpuacct"), "cpuacct.usage")
                if not self.cpu_v2
                else open_counter(cgroups.get("cpu"), "cpu.stat")
            )
        self.cpu_base = 0
        if self.cpuacct_fd is not None:
            try:
                self.cpu_base = self._cgroup_ns()
            except (OSError, ValueError):
                os.close(self.cpuacct_fd)
                self.cpuacct_fd = None
        self.seen: dict[tuple[str, bytes], int] = {}  # (pid, start time) -> own CPU ticks
        self.sampled_ns = 0  # no cgroup: the CPU of every process seen, at its last sample
        self.held = Held(cgroups, counters)
        self.peak_rss = 0.0  # bytes, the run's memory (tree RSS, or what it holds beyond it)
        self.peak_single = 0.0  # bytes, one process's own high-water mark
        self.max_procs = 0
        self.integral = 0.0  # byte-seconds
        self.samples = 0
        self._last: tuple[float, float] | None = None

    def sample(self, now: float) -> tuple[float, int]:
        """Take one sample at time `now` (seconds); returns (bytes held against the memory
        limit, thread count): the tree's RSS, and without a cgroup (whose hard limit holds the
        rest) also its memfds and shared memory."""
        rss = 0
        anon = 0
        shmem = 0
        threads = 0
        for name in os.listdir("/proc"):
            if not name.isdigit() or name == "1":
                continue
            try:
                with open(f"/proc/{name}/status", "rb") as f:
                    text = f.read()
            except OSError:
                continue  # exited between listdir and open
            for line in text.split(b"\n"):
                if line.startswith(b"VmRSS:"):
                    rss += int(line.split()[1]) * 1024
                elif line.startswith(b"RssAnon:"):
                    anon += int(line.split()[1]) * 1024
                elif line.startswith(b"RssShmem:"):
                    shmem += int(line.split()[1]) * 1024
                elif line.startswith(b"VmHWM:"):
                    self.peak_single = max(self.peak_single, int(line.split()[1]) * 1024)
                elif line.startswith(b"Threads:"):
                    threads += int(line.split()[1])
        beyond = self.held.beyond_rss(self.samples)
        self.samples += 1
        # The RSS plus what is held beyond it, each page once: RSS also holds file pages
        # charged to whoever read them first, the cgroup also holds the mapped anon and shmem.
        if self.held.by_cgroup:  # every page charged to the run, mapped or not
            sockets = self.held.sockets()  # v1 keeps socket buffers apart from the usage
            unmapped = max(0, beyond - anon - shmem)
            memory = rss + unmapped + sockets
            # Against `memory_mb`: all of it but the run's tmpfs files not mapped, which the disk
            # quota holds (the cgroup's hard limit is memory plus disk, so without this, SysV
            # messages, pipe and unix socket buffers, kernel objects went past `memory_mb` by
            # up to the disk quota unstopped: red team helper-88, 250 MiB under 128).
            files = max(0, self.held.tmpfs() - shmem)
            limited = rss + sockets + max(0, unmapped - files)
        else:  # shared pages: mapped (RssShmem) or held (the objects)
            memory = max(rss, rss - shmem + beyond)
            limited = max(rss, memory - self.held.tmp_now)  # tmpfs files: held by its size
        self.peak_rss = max(self.peak_rss, memory)
        self.max_procs = max(self.max_procs, threads)
        if self._last is not None:
            t_prev, mem_prev = self._last
            self.integral += (mem_prev + memory) / 2.0 * (now - t_prev)
        self._last = (now, float(memory))
        return limited, threads

    def peak(self) -> float:
        """The run's peak memory (bytes): sampled, each process's high-water mark, and the
        cgroup's own high-water mark."""
        return max(self.peak_rss, self.peak_single, float(self.held.cgroup_peak()))

    def close_at(self, now: float) -> None:
        """Close the integral at `now`: the tree's memory is released when it ends."""
        if self._last is not None and now > self._last[0]:
            t_prev, rss_prev = self._last
            self.integral += rss_prev / 2.0 * (now - t_prev)
            self._last = (now, 0.0)

    def _cgroup_ns(self) -> int:
        assert self.cpuacct_fd is not None
        data = os.pread(self.cpuacct_fd, 4096, 0)
        if not self.cpu_v2:
            return int(data.strip() or 0)
        for line in data.split(b"\n"):
            if line.startswith(b"usage_usec "):
                return int(line.split()[1]) * 1000
        raise ValueError("no usage_usec in cpu.stat")

    def cpu_ns(self, reaped_ns: int) -> int:
        """CPU of the tree so far: cgroup accounting, or (no cgroup) the larger of live /proc
        figures plus reaped rusage and the sum over every process ever seen of its own CPU at
        its last sample (which still holds a child the kernel reaped behind our back)."""
        if self.cpuacct_fd is not None:
            return self._cgroup_ns() - self.cpu_base
        live = 0
        for name in os.listdir("/proc"):
            if not name.isdigit() or name == "1":
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
                own = int(fields[11]) + int(fields[12])
                self.seen[(name, fields[19])] = own
                live += own
            except (OSError, IndexError, ValueError):
                continue
        self.sampled_ns = sum(self.seen.values()) * 1_000_000_000 // TICKS
        return max(reaped_ns + live * 1_000_000_000 // TICKS, self.sampled_ns)
