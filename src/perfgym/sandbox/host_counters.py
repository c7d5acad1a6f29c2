"""Counters of the whole host that a run could read and move: every run sees them frozen.

The kernel keeps some numbers for the whole machine, not per namespace, and shows them to
every process: open file handles (`/proc/sys/fs/file-nr`), inodes and dentries, AIO contexts,
ptys, forks and context switches (`/proc/stat`), free memory (`/proc/meminfo`, a NUMA node's
`meminfo`), threads in existence (`/proc/loadavg`), each core's idle time (`/proc/stat`,
`/proc/uptime`, `cpuidle`), pressure stalls, disk I/O. A run moves them (it opens 500 files,
allocates 200 MiB, forks, sleeps on its core) and a concurrent run reads the move: a channel
between two copies of one program that split the work (red team helper-76 swapped halves of
it through the pty count). Every view now shows these files as a copy frozen once per boot
(`frozen_dir`, bound at `MOUNT`) and covers the directories holding only such counters with an
empty read-only tmpfs; a program that reads them gets well-formed numbers that never move.

Not covered (docs/security.md): `sysinfo(2)` (free memory, the thread count: glibc's
`sysconf(_SC_PHYS_PAGES)` reads it, and a call that failed would leave it garbage), and the
contention two runs cause each other on shared caches and memory.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import os
import shutil
import tempfile

from perfgym.sandbox.exec_stub import HELPERS

#: What under /proc holds counters of the whole host: files, and directories frozen whole
#: (one mount each; what else they hold, settings such as `file-max`, is as static frozen).
PROC_COVERS = (
    "stat", "vmstat", "meminfo", "loadavg", "uptime", "interrupts", "softirqs", "diskstats",
    "buddyinfo", "zoneinfo", "pagetypeinfo", "swaps", "key-users", "schedstat", "pressure",
    "sys/fs", "sys/kernel/pty",
)  # fmt: skip
#: Files under /sys with such counters (globs).
SYS_FILE_GLOBS = (
    "/sys/devices/system/node/node*/meminfo",
    "/sys/devices/system/node/node*/numastat",
    "/sys/devices/system/node/node*/vmstat",
)
#: Directories under /sys that hold nothing but such counters, or little else (each core's
#: idle states and frequency, KSM's and khugepaged's page counts, the block devices with their
#: I/O counts: each directory that holds one, found through /sys/block): covered by an empty
#: read-only tmpfs, one mount where each file would take its own.
SYS_DIR_GLOBS = (
    "/sys/devices/system/cpu/cpu[0-9]*/cpuidle",
    "/sys/devices/system/cpu/cpu[0-9]*/cpufreq",
    "/sys/devices/system/cpu/cpufreq",
    "/sys/kernel/mm/ksm",
    "/sys/kernel/mm/transparent_hugepage/khugepaged",
)
#: Where every view shows the frozen copies (a warm spare binds its own /proc's from here).
MOUNT = "/run/perfgym/counters"


def _boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()[:8] or "unknown"
    except OSError:
        return "unknown"


@functools.cache
def frozen_paths() -> tuple[str, ...]:
    """The host paths this host has of `PROC_COVERS` and `SYS_FILE_GLOBS` (real paths): what
    each view shows frozen."""
    found = [f"/proc/{name}" for name in PROC_COVERS if os.path.exists(f"/proc/{name}")]
    for pattern in SYS_FILE_GLOBS:
        found += [os.path.realpath(p) for p in sorted(glob.glob(pattern)) if os.path.isfile(p)]
    return tuple(dict.fromkeys(found))


@functools.cache
def covered_dirs() -> tuple[str, ...]:
    """The host's directories of `SYS_DIR_GLOBS` (real paths)."""
    found = [os.path.realpath(p) for g in SYS_DIR_GLOBS for p in sorted(glob.glob(g))]
    found += [os.path.dirname(os.path.realpath(p)) for p in sorted(glob.glob("/sys/block/*"))]
    return tuple(dict.fromkeys(p for p in found if os.path.isdir(p)))


@functools.cache
def frozen_dir() -> str | None:
    """A directory mirroring `frozen_paths()` (its `proc/...`, `sys/...`), each a copy read
    once per boot of this host and never again (made once, atomically, by whichever process
    comes first), with `COVERS`, their list; None when it cannot be made (the files are then
    shown empty, and a directory's files as none)."""
    listed = hashlib.sha256("\n".join(frozen_paths()).encode()).hexdigest()[:8]
    target = HELPERS / f"host-counters-{_boot_id()}-{listed}"
    if (target / COVERS).is_file():
        return str(target)
    try:
        HELPERS.mkdir(parents=True, exist_ok=True)
        tmp = tempfile.mkdtemp(dir=HELPERS, prefix=".counters-")
        for path in frozen_paths():
            _copy(path, os.path.join(tmp, path.lstrip("/")))
        with open(os.path.join(tmp, COVERS), "w") as f:
            f.write("".join(p.lstrip("/") + "\n" for p in frozen_paths()))
        for d, _subs, _files in os.walk(tmp):
            os.chmod(d, 0o755)
        try:
            os.rename(tmp, target)  # atomic: concurrent makers agree on one copy
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
            if not (target / COVERS).is_file():
                return None
    except OSError:
        return None
    return str(target)


#: The list of what a frozen directory covers, one path a line relative to / (a warm spare
#: reads it to cover its own /proc).
COVERS = "covers"


def _copy(path: str, copy: str) -> None:
    """`path`'s content at `copy`: a file's bytes, read-only with the original's read bits
    (empty where others could not read it), a directory's files, recursively."""
    if os.path.isdir(path):
        os.makedirs(copy, exist_ok=True)
        for name in sorted(os.listdir(path)):
            if os.path.isdir(os.path.join(path, name)) or os.path.isfile(os.path.join(path, name)):
                _copy(os.path.join(path, name), os.path.join(copy, name))
        return
    os.makedirs(os.path.dirname(copy), exist_ok=True)
    data = b""
    mode = os.stat(path).st_mode & 0o444
    if mode & 0o004:  # what a run may read (root's alone, `pagetypeinfo`, stays root's)
        try:
            with open(path, "rb") as src:
                data = src.read()
        except OSError:  # write-only
            pass
    with open(copy, "wb") as dst:
        dst.write(data)
    os.chmod(copy, mode)


def bwrap_args(empty_file: str) -> list[str]:
    """bubblewrap arguments (after /proc and /sys are in the view) showing every counter
    frozen (empty where no frozen copy could be made) and every counter directory empty."""
    frozen = frozen_dir()
    args: list[str] = []
    if frozen is not None:
        args += ["--ro-bind", frozen, MOUNT]
    for path in frozen_paths():
        copy = os.path.join(frozen, path.lstrip("/")) if frozen is not None else ""
        if os.path.exists(copy):
            args += ["--ro-bind", copy, path]
        elif os.path.isdir(path):
            args += ["--perms", "0755", "--tmpfs", path, "--remount-ro", path]
        else:
            args += ["--ro-bind", empty_file, path]
    for d in covered_dirs():
        args += ["--perms", "0755", "--tmpfs", d, "--remount-ro", d]
    return args
