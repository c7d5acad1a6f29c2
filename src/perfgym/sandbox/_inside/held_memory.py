"""RAM a run holds outside its processes' RSS (memfds, tmpfs files, SysV shm, pipe buffers):
read from the run's memory cgroup, or without one from what /proc and statvfs show (stdlib only).

Resident set size counts only pages mapped into a process. A memfd written with `write` and
read with `pread`, a file in the run's tmpfs (deleted or not), a SysV segment attached a piece
at a time, a pipe stuffed and never read: all RAM the run holds, none of it in any VmRSS.

* With a memory cgroup (v1 `memory.usage_in_bytes` / `memory.max_usage_in_bytes`, v2
  `memory.current` / `memory.peak`): the kernel charges every page the run allocates, of any
  kind, to it. The figure is the usage above what the cgroup held when the program started (a
  pooled cgroup may still hold a previous run's page cache); the peak file, reset at the start,
  catches what lies between two samples. One `pread` per sample. On v1, socket buffers are
  charged apart (`memory.kmem.tcp.usage_in_bytes`, counted once the host set the cgroup's TCP
  limit): added to the figure, to what is held against the limit, and to the peak (the two
  high-water marks summed: at most the true peak's upper bound). Two `pread`s then.
* Without one: the run's own tmpfs mounts (`statvfs` of /tmp and /dev/shm, deleted-but-open
  files included) above their size at the start, every memfd any process holds open (`/proc/<pid>/fd`, allocated
  blocks, each file once), and the SysV segments of the run's IPC namespace
  (`/proc/sysvipc/shm`). Pipe and socket buffers are not seen there, nor a memfd sent over a
  socket and closed (in flight, in no descriptor table): `how` says so. These
  are refreshed every `EVERY` samples (reading the descriptor tables costs a few system calls
  per descriptor).
"""

from __future__ import annotations

import os

#: Without a cgroup, the held objects are re-read every this many samples.
EVERY = 4
_MEMFD = "/memfd:"


class Held:
    """Memory the run holds beyond RSS; `start()` right before the program is let go."""

    def __init__(self, cgroups: dict[str, str], counters: dict[str, int] | None = None) -> None:
        """`counters`: 'usage' and 'peak' already open (see `Tree`); else opened here."""
        counters = counters or {}
        directory = cgroups.get("memory")
        v1 = "cpuacct" in cgroups
        self.usage_fd: int | None = None
        self.peak_fd: int | None = None
        if directory:
            names = ("memory.usage_in_bytes", "memory.max_usage_in_bytes") if v1 else (
                "memory.current", "memory.peak")  # fmt: skip
            self.version = "v1" if v1 else "v2"
            self.usage_fd = (
                counters["usage"] if "usage" in counters else open_counter(directory, names[0])
            )
            self.peak_fd = (
                counters["peak"]
                if "peak" in counters
                else open_counter(directory, names[1], os.O_RDWR)
            )
        self.tcp_usage_fd: int | None = None
        self.tcp_peak_fd: int | None = None
        if directory and v1:
            self.tcp_usage_fd = counters.get("tcp_usage") or open_counter(
                directory, "memory.kmem.tcp.usage_in_bytes"
            )
            self.tcp_peak_fd = counters.get("tcp_peak") or open_counter(
                directory, "memory.kmem.tcp.max_usage_in_bytes", os.O_RDWR
            )
        self.tmp_base = 0  # bytes in the run's tmpfs mounts when the program started
        self.tcp_base = 0  # v1 socket-buffer usage when the program started
        self.tcp_peak_ok = False
        self.base = 0  # cgroup usage, or tmpfs bytes used, when the program started
        self.peak_ok = False  # the peak file was reset at the start: its figure is this run's
        self.excluded: set[tuple[int, int]] = set()  # memfds that are not the run's (its stdin)
        self.objects = 0  # no cgroup: bytes in the held objects at the last refresh
        self.tmp_now = 0  # no cgroup: the part of them in the run's tmpfs (held by its size)
        self.errors = 0

    @property
    def by_cgroup(self) -> bool:
        return self.usage_fd is not None

    def exclude(self, fd: int) -> None:
        """The file open at `fd` (the run's stdin memfd) is not the run's own memory."""
        st = os.fstat(fd)
        self.excluded.add((st.st_dev, st.st_ino))

    def start(self) -> None:
        """The baseline, taken just before the program starts."""
        if self.usage_fd is not None:
            try:
                self.base = self._usage()
            except (OSError, ValueError):
                os.close(self.usage_fd)
                self.usage_fd = None
        if self.usage_fd is not None and self.peak_fd is not None:
            try:  # v1: "0" resets the high-water mark to the usage; v2 (6.12+): a per-fd reset
                os.write(self.peak_fd, b"0" if self.version == "v1" else b"reset")
                self.peak_ok = True
            except OSError:
                self.peak_ok = False
        self.tmp_base = _tmp_used()
        if self.usage_fd is None:
            self.base = self.tmp_base
        if self.tcp_usage_fd is not None:
            try:
                self.tcp_base = int(os.pread(self.tcp_usage_fd, 64, 0))
            except (OSError, ValueError):
                self.tcp_usage_fd = None
        if self.tcp_usage_fd is not None and self.tcp_peak_fd is not None:
            try:
                os.write(self.tcp_peak_fd, b"0")
                self.tcp_peak_ok = True
            except OSError:
                self.tcp_peak_ok = False

    def tmpfs(self) -> int:
        """Bytes in the run's own tmpfs mounts now above the start: its files, which the disk
        quota holds (the cgroup's hard limit is memory plus disk)."""
        return max(0, _tmp_used() - self.tmp_base)

    def sockets(self) -> int:
        """v1: the run's socket buffers now above its start (bytes); 0 without the counter."""
        if self.tcp_usage_fd is None:
            return 0
        try:
            return max(0, int(os.pread(self.tcp_usage_fd, 64, 0)) - self.tcp_base)
        except (OSError, ValueError):
            self.errors += 1
            return 0

    def _usage(self) -> int:
        assert self.usage_fd is not None
        return int(os.pread(self.usage_fd, 64, 0))

    def beyond_rss(self, tick: int) -> int:
        """Cgroup: the run's usage now above its start (bytes; see `Tree.sample`).
        No cgroup: bytes in held objects (refreshed every EVERY ticks)."""
        if self.usage_fd is not None:
            try:
                return max(0, self._usage() - self.base)
            except (OSError, ValueError):
                self.errors += 1
                return 0
        if tick % EVERY == 0:
            self.tmp_now = max(0, _tmp_used() - self.base)
            self.objects = self.tmp_now + self._memfds() + _sysv_shm()
        return self.objects

    def cgroup_peak(self) -> int:
        """The cgroup's high-water mark above the baseline (0 when not reset for this run)."""
        if not self.peak_ok or self.peak_fd is None:
            return 0
        try:
            peak = max(0, int(os.pread(self.peak_fd, 64, 0)) - self.base)
        except (OSError, ValueError):
            return 0
        if self.tcp_peak_ok and self.tcp_peak_fd is not None:
            try:
                peak += max(0, int(os.pread(self.tcp_peak_fd, 64, 0)) - self.tcp_base)
            except (OSError, ValueError):
                pass
        return peak

    def _memfds(self) -> int:
        seen = set(self.excluded)
        total = 0
        for name in os.listdir("/proc"):
            if not name.isdigit() or name == "1":
                continue
            fd_dir = f"/proc/{name}/fd"
            try:
                fds = os.listdir(fd_dir)
            except OSError:
                continue
            for fd in fds:
                path = f"{fd_dir}/{fd}"
                try:
                    if not os.readlink(path).startswith(_MEMFD):
                        continue
                    st = os.stat(path)
                except OSError:
                    continue
                key = (st.st_dev, st.st_ino)
                if key not in seen:
                    seen.add(key)
                    total += st.st_blocks * 512
        return total

    def _sockets_how(self) -> str:
        return _sockets_how_text(self.version == "v1" and self.tcp_usage_fd is not None)

    def how(self, sample_rate_hz: float) -> str:
        """Which way the held memory was measured, for `Measurement.mechanisms['memory']`."""
        if self.usage_fd is not None:
            files = ("memory.usage_in_bytes", "memory.max_usage_in_bytes") if self.version == "v1" else (
                "memory.current", "memory.peak")  # fmt: skip
            peak = (
                f" and its {files[1]} high-water mark reset at the start"
                if self.peak_ok
                else f" ({files[1]} could not be reset for this run: samples only)"
            )
            return (
                f"the tree's RSS plus the run's cgroup-{self.version} {files[0]} above its "
                f"start beyond the tree's resident anon and shmem pages (memfds, tmpfs files, "
                f"shared memory, pipe buffers, kernel memory: every page charged to the run)"
                f"{self._sockets_how()}, sampled at {sample_rate_hz:g} Hz{peak}"
            )
        return (
            "no memory cgroup: the larger of the tree's RSS and its RSS less mapped shmem plus the "
            "run's tmpfs usage, every open memfd and its SysV shared memory, sampled at "
            f"{sample_rate_hz / EVERY:g} Hz (pipe and socket buffers, and a memfd no process "
            "holds open, in flight in a socket, are not seen)"
        )


def _sockets_how_text(counted: bool) -> str:
    if counted:
        return " plus its socket buffers (memory.kmem.tcp.usage_in_bytes, which v1 keeps apart)"
    return ""


def open_counter(directory: str | None, name: str, flags: int = os.O_RDONLY) -> int | None:
    """The cgroup file `name` of `directory`, open; None without a directory or on failure."""
    if not directory:
        return None
    try:
        return os.open(os.path.join(directory, name), flags)
    except OSError:
        return None


def _tmp_used() -> int:
    """Bytes in the run's own tmpfs mounts (its work dir and its /dev/shm): data blocks, and
    inode space at 1 KiB a unit (tmpfs draws inodes, long names and extended attributes from
    it: 128 MiB of xattrs on three empty files were unseen with blocks alone)."""
    total = 0
    for path in ("/tmp", "/dev/shm"):
        try:
            st = os.statvfs(path)
        except OSError:
            continue
        total += (st.f_blocks - st.f_bfree) * st.f_frsize + (st.f_files - st.f_ffree) * 1024
    return total


def _sysv_shm() -> int:
    """Resident bytes of the SysV segments in this IPC namespace (the run's own)."""
    try:
        with open("/proc/sysvipc/shm", "rb") as f:
            lines = f.read().split(b"\n")[1:]
    except OSError:
        return 0
    total = 0
    for line in lines:
        fields = line.split()
        if len(fields) >= 15:
            try:
                total += int(fields[14])  # rss (bytes)
            except ValueError:
                continue
    return total
