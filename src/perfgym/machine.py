"""Machine fingerprint: which host a measurement came from."""

from __future__ import annotations

import functools
import hashlib
import os
import platform


@functools.cache
def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


@functools.cache
def fingerprint() -> str:
    """A short stable id of this host's hardware and kernel: `<hostname>/<cpu-hash>`."""
    mem_kb = 0
    try:
        with open("/proc/meminfo") as f:
            mem_kb = int(f.readline().split()[1])
    except (OSError, ValueError, IndexError):
        pass
    key = f"{cpu_model()}|{os.cpu_count()}|{mem_kb // (1024 * 1024)}G|{platform.release()}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    return f"{platform.node() or 'host'}/{digest}"


def describe() -> dict[str, str | int | None]:
    """Everything a result file records about the machine."""
    return {
        "fingerprint": fingerprint(),
        "cpu_model": cpu_model(),
        "cpus": os.cpu_count(),
        "kernel": platform.release(),
        "python": platform.python_version(),
    }
