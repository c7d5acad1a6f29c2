"""ENAMEL's outside count gives no exit allowance a program can buy (red team helper-85).

A call that writes its own result and exits without saying "done" is counted to its exit; the
count's allowance for releasing memory at exit was 0.1 ms per MiB of the call's peak RSS, a
high-water mark its module code (outside the count, with the worker's cgroup) could raise and
free again. 60 ms of work then stood behind a 2 us self-report, unflagged, 3 of 3."""

from __future__ import annotations

import pytest
from cgroupless import cgroupless_worker

from perfgym.enamel import timer
from perfgym.sandbox import Status
from perfgym.sandbox.limits import on_cpu
from perfgym.sandbox.pyworker import CallResult, PythonWorker

WORK_S = 0.06
#: The work, done by the entry point; its result written by the program itself with a forged
#: report, and the process gone before it says "done" (so the count runs to its exit).
BURN = f"""
import json, os, sys, time
def _burn():
    t0 = time.process_time()
    x = 0
    while time.process_time() - t0 < {WORK_S}:
        for i in range(1000):
            x += i
"""
FORGE = """
def f(n):
    _burn()
    frame = sys._getframe()
    while frame is not None and "res_fd" not in frame.f_locals:
        frame = frame.f_back
    import valuecodec
    os.pwrite(frame.f_locals["res_fd"], json.dumps({"ok": True, "value": valuecodec.encode(n * 2),
              "reported_call_ns": 2000, "reported_call_cpu_ns": 2000,
              "reported_call_own_ns": 2000}).encode(), 0)
    os._exit(0)
"""
#: Module code raising the peak: 400 MiB of anonymous memory, freed again.
ANON_PEAK = "_b = b'\\x01' * (400 << 20)\ndel _b\n"
#: Module code raising the peak cheaply: the largest mapped library mapped 1 GiB over with
#: MAP_POPULATE (its pages are cached: file-backed RSS, no zeroing), then unmapped.
FILE_PEAK = """
import ctypes, mmap
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                       ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_path, _size = max(((p, os.path.getsize(p)) for p in {l.split()[-1] for l in open("/proc/self/maps")
                    if l.split()[-1].startswith("/") and ".so" in l}), key=lambda t: t[1])
_fd = os.open(_path, os.O_RDONLY)
_maps = []
for _ in range((1 << 30) // _size):
    _a = _libc.mmap(None, _size, mmap.PROT_READ, mmap.MAP_PRIVATE | 0x8000, _fd, 0)
    _maps.append(_a)
for _a in _maps:
    _libc.munmap(_a, _size)
os.close(_fd)
"""
HONEST = BURN + "def f(n):\n    _burn()\n    return n * 2\n"


@pytest.fixture(scope="module")
def worker():
    w = PythonWorker()
    yield w
    w.close()


def _timed(r: CallResult) -> tuple[float, list[str]]:
    flags: list[str] = []
    return timer.call_time(r, flags, 0.0005), flags


@pytest.mark.parametrize("peak", [ANON_PEAK, FILE_PEAK], ids=["anonymous", "file-mapped"])
def test_a_peak_raised_outside_the_count_buys_no_allowance(worker, peak):
    lim = on_cpu(4.0, memory_mb=4096)  # 400 MiB of page faults took ~1 s on a slow VM
    honest = worker.call(HONEST, "f", [21], lim)
    assert honest.status is Status.OK and honest.value == 42, honest.error
    fair, _ = _timed(honest)
    forged = worker.call(BURN + peak + FORGE, "f", [21], lim)
    assert forged.status is Status.OK and forged.value == 42, forged.error
    assert forged.peak_rss_mb > 300, forged.peak_rss_mb  # the peak was raised
    assert not forged.program_cpu_call_only  # counted to its exit: it never said "done"
    t, flags = _timed(forged)
    # Before: 2e-06 s, no flag. Now the work is counted: the same order as the honest call.
    assert timer.MISMATCH in flags
    assert t > fair / 2, (t, fair, forged.peak_rss_mb)


@pytest.fixture(scope="module")
def cgroupless():
    with cgroupless_worker() as w:
        yield w


def test_without_the_cgroup_the_allowance_is_below_what_the_peak_costs(cgroupless):
    """Without the worker's cgroup every call's exit is counted, and so is its module: raising
    the peak by mapping a cached file (the cheapest way measured, ~0.03 ms per MiB) costs more
    than the allowance it buys (0.1 ms per MiB bought 1 GiB's 100 ms for about 30)."""
    lim = on_cpu(4.0, memory_mb=4096)  # 400 MiB of page faults took ~1 s on a slow VM
    # The least of three calls each: load only adds time, and one honest call beside a red
    # team's builds took 0.174 s against the forged one's 0.093 s (full74).
    fairs, times = [], []
    for _ in range(3):
        honest = cgroupless.call(HONEST, "f", [21], lim)
        assert "rusage" in honest.cpu_mechanism
        fairs.append(_timed(honest)[0])
        forged = cgroupless.call(BURN + FILE_PEAK + FORGE, "f", [21], lim)
        assert forged.status is Status.OK and forged.value == 42, forged.error
        assert forged.peak_rss_mb > 300, forged.peak_rss_mb
        t, flags = _timed(forged)
        assert timer.MISMATCH in flags
        times.append(t)
    assert min(times) > min(fairs) * 0.75, (times, fairs)
