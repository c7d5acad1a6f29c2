"""Probe for hardware instruction counters (perf_event_open); says why when they are missing."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import platform

_SYS_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}
PERF_TYPE_HARDWARE = 0
PERF_COUNT_HW_INSTRUCTIONS = 1


class _PerfEventAttr(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_uint32),
        ("size", ctypes.c_uint32),
        ("config", ctypes.c_uint64),
        ("sample_period", ctypes.c_uint64),
        ("sample_type", ctypes.c_uint64),
        ("read_format", ctypes.c_uint64),
        ("flags", ctypes.c_uint64),
        ("wakeup_events", ctypes.c_uint32),
        ("bp_type", ctypes.c_uint32),
        ("config1", ctypes.c_uint64),
        ("config2", ctypes.c_uint64),
        ("branch_sample_type", ctypes.c_uint64),
        ("sample_regs_user", ctypes.c_uint64),
        ("sample_stack_user", ctypes.c_uint32),
        ("clockid", ctypes.c_int32),
        ("sample_regs_intr", ctypes.c_uint64),
        ("aux_watermark", ctypes.c_uint32),
        ("sample_max_stack", ctypes.c_uint16),
        ("reserved", ctypes.c_uint16),
    ]


@functools.cache
def instructions_unavailable_reason() -> str | None:
    """None when user-space instruction counting works here; otherwise why it does not."""
    nr = _SYS_PERF_EVENT_OPEN.get(platform.machine())
    if nr is None:
        return f"perf_event_open syscall number unknown for {platform.machine()}"
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    attr = _PerfEventAttr()
    attr.type = PERF_TYPE_HARDWARE
    attr.size = ctypes.sizeof(_PerfEventAttr)
    attr.config = PERF_COUNT_HW_INSTRUCTIONS
    attr.flags = 1 | (1 << 5) | (1 << 6)  # disabled, exclude_kernel, exclude_hv
    fd = libc.syscall(nr, ctypes.byref(attr), 0, -1, -1, 0)
    if fd < 0:
        err = ctypes.get_errno()
        paranoid = "?"
        try:
            with open("/proc/sys/kernel/perf_event_paranoid") as f:
                paranoid = f.read().strip()
        except OSError:
            pass
        return (
            f"hardware instruction counters unavailable: perf_event_open failed with "
            f"{os.strerror(err)} (perf_event_paranoid={paranoid}); use the timing layer's "
            f"Valgrind instruction-count mode for deterministic counts"
        )
    os.close(fd)
    return None
