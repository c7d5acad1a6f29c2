"""The page cache's probes fail in every sandbox (seccomp): a run cannot clear a page of a
file it can read from the host's page cache, nor ask whether one is cached, and so cannot keep
an answer there for a later run as red team helper-64 did (docs/security.md)."""

from __future__ import annotations

import errno
import platform

import pytest

from perfgym.sandbox import BwrapSandbox, Limits, Status, WarmSandbox
from perfgym.sandbox.pyworker import PythonWorker

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="x86-64's numbers")

#: Each probe's errno (0: it worked), then a plain read and a flag-less preadv (which must work).
PROBES = """import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open(os.__file__, os.O_RDONLY)
out = []
def errno_of(fn):
    try:
        fn()
        return 0
    except OSError as exc:
        return exc.errno
out.append(errno_of(lambda: os.posix_fadvise(fd, 0, 4096, os.POSIX_FADV_DONTNEED)))
out.append(errno_of(lambda: os.preadv(fd, [bytearray(1)], 0, os.RWF_NOWAIT)))
for nr, args in ((187, (fd, 0, 4096)),           # readahead
                 (451, (fd, 0, 0, 0)),           # cachestat
                 (425, (8, 0))):                 # io_uring_setup
    ctypes.set_errno(0)
    r = libc.syscall(nr, *[ctypes.c_long(a) for a in args])
    out.append(ctypes.get_errno() if r < 0 else 0)
out.append(len(os.pread(fd, 16, 0)))
out.append(os.preadv(fd, [bytearray(16)], 0))
print(*out)
"""


def _check(out: str) -> None:
    fadvise, nowait, readahead, cachestat, uring, pread, preadv = (int(v) for v in out.split())
    assert fadvise == errno.ENOSYS and readahead == errno.ENOSYS, out
    assert cachestat == errno.ENOSYS and uring == errno.ENOSYS, out
    # glibc's preadv2 answers a kernel without it (ENOSYS) with EOPNOTSUPP for a non-zero flag
    assert nowait in (errno.ENOSYS, errno.EOPNOTSUPP), out
    assert pread == 16 and preadv == 16, out  # honest reads are untouched


@pytest.mark.parametrize("kind", [WarmSandbox, BwrapSandbox])
def test_the_page_cache_probes_fail_in_a_sandbox(kind) -> None:  # type: ignore[no-untyped-def]
    with kind() as sb:
        ex = sb.run(["python3", "/tmp/p.py"], files={"p.py": PROBES},
                    limits=Limits(wall_s=30, cpu_s=10))  # fmt: skip
    assert ex.status == Status.OK, (ex.status, ex.stderr_text[-500:])
    _check(ex.stdout_text)


def test_the_page_cache_probes_fail_in_a_worker_call() -> None:
    w = PythonWorker()
    try:
        ran = w.run_program(PROBES)
    finally:
        w.close()
    assert ran.status == Status.OK, ran.stderr_text
    _check(ran.stdout_text)
