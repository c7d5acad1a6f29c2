"""Cheap cgroup migrations: the kernel's `favordynmods` mode, switched on where we may.

Every run moves its program into the run's cgroups. By default the kernel makes that move wait
for an RCU grace period (the threadgroup lock is a per-CPU rwsem tuned for rare writers): on
this 2-core VM, in an instrumented warm sandbox, moving a run into its three v1 cgroups took
0.5 ms back to back but 11 ms (median) when runs were spaced 20 ms apart, and 0.6 ms with
`favordynmods` (Linux >= 6.0), which keeps that lock in its slow-reader mode instead; every
fork and exit on the machine pays a few atomic operations more. The mode is global once any hierarchy asks for it; on cgroup v2 the one
hierarchy is remounted with it, on v1 an empty named hierarchy is mounted with it.
"""

from __future__ import annotations

import functools
import os
import subprocess

from perfgym.sandbox import cgroups

#: Where the empty named v1 hierarchy is mounted (it holds no controllers and no processes).
V1_MOUNT = "/run/perfgym/cgroup-favordynmods"


def _mounted_with_favor() -> bool:
    try:
        with open("/proc/mounts") as f:
            return any(
                line.split()[2] in ("cgroup", "cgroup2") and "favordynmods" in line.split()[3]
                for line in f
                if len(line.split()) > 3
            )
    except OSError:
        return False


@functools.cache
def favor_dynamic_moves() -> str:
    """Switch the kernel's cgroup favordynmods mode on (idempotent); returns what happened."""
    if _mounted_with_favor():
        return "on (already)"
    version = cgroups.detect()
    if version is None:
        return "off: no writable cgroup hierarchy"
    if version == "v2":
        argv = ["mount", "-o", "remount,favordynmods", cgroups.ROOT]
    else:
        os.makedirs(V1_MOUNT, exist_ok=True)
        argv = ["mount", "-t", "cgroup", "-o", "none,name=perfgym_favor,favordynmods",
                "cgroup", V1_MOUNT]  # fmt: skip
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"off: {exc}"
    if p.returncode != 0 or not _mounted_with_favor():
        return f"off: {' '.join(argv)} failed: {p.stderr.strip()[:200]}"
    return "on"
