"""A run's stdin arrives byte for byte on every backend, large or empty, and stays the run's own.

The warm backend hands non-empty stdin to its spare as a sealed memfd (not base64 in the spec);
these runs check that path and the inline one give programs the same stdin.
"""

import errno
import hashlib
import os
import sys

from perfgym.sandbox.execution import Status
from perfgym.sandbox.warm import WarmSandbox

PY = os.path.realpath(sys.executable)
READ = (
    "import hashlib, os, sys\n"
    "d = sys.stdin.buffer.read()\n"
    "fds = sorted(int(f) for f in os.listdir('/proc/self/fd'))\n"
    "print(len(d), hashlib.sha256(d).hexdigest(), ','.join(map(str, fds)))\n"
)


def test_large_binary_stdin_arrives_exactly(sandbox):
    data = bytes(range(256)) * 12_289 + b"\x00tail"  # ~3 MiB, every byte value, ends in NUL
    ex = sandbox.run([PY, "-c", READ], stdin=data)
    assert ex.status is Status.OK, ex.reason
    size, digest, fds = ex.stdout_text.split()
    assert (int(size), digest) == (len(data), hashlib.sha256(data).hexdigest())
    # 0, 1, 2 and the listing's own descriptor: nothing the host or the spare received leaks in.
    assert fds == "0,1,2,3", ex.stdout_text


def test_empty_and_text_stdin(sandbox):
    ex = sandbox.run([PY, "-c", READ])
    assert ex.stdout_text.split()[:2] == ["0", hashlib.sha256(b"").hexdigest()]
    text = "héllo\n" * 1000
    ex = sandbox.run([PY, "-c", "import sys; sys.stdout.write(sys.stdin.read()[::-1])"], stdin=text)
    assert ex.stdout_text == text[::-1]


def test_a_program_cannot_change_the_stdin_a_later_run_gets(sandbox):
    data = b"original input\n" * 10_000
    scribble = (
        "import os, sys\n"
        "try:\n"
        "    os.lseek(0, 0, 0); os.write(0, b'X' * 64); os.ftruncate(0, 1)\n"
        "except OSError as e:\n"
        "    print('refused', e.errno)\n"
    )
    first = sandbox.run([PY, "-c", scribble], stdin=data)
    assert first.status is Status.OK, first.reason
    if isinstance(sandbox, WarmSandbox) and sandbox.exec_stub is None:
        # Without a stub the program's fd 0 is the host's memfd itself: its seals refuse writes.
        assert first.stdout_text == f"refused {errno.EPERM}\n", first.stdout_text
    again = sandbox.run([PY, "-c", READ], stdin=data)
    assert again.stdout_text.split()[:2] == [str(len(data)), hashlib.sha256(data).hexdigest()]


def test_stdin_is_read_from_the_start_even_when_the_program_seeks(sandbox):
    code = "import os, sys\nprint(os.read(0, 5)); os.lseek(0, 0, 0); print(os.read(0, 5))\n"
    ex = sandbox.run([PY, "-c", code], stdin=b"abcdefgh")
    assert ex.stdout_text == "b'abcde'\nb'abcde'\n"


def test_a_seal_refused_for_a_moment_is_tried_again() -> None:
    """F_SEAL_WRITE answers EBUSY while anything still holds the file's pages writable (CI saw
    one transient EBUSY on a loaded machine fail a whole batch): the seal waits it out, and a
    lasting refusal is still the caller's error."""
    import fcntl
    import mmap
    import threading

    import pytest

    from perfgym.sandbox._inside.stub import SEALS, seal

    fd = os.memfd_create("t", os.MFD_ALLOW_SEALING)
    try:
        os.write(fd, b"x" * 4096)
        held = mmap.mmap(fd, 4096, mmap.MAP_SHARED, mmap.PROT_WRITE)
        with pytest.raises(OSError) as refused:
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, SEALS)
        assert refused.value.errno == errno.EBUSY  # the kernel's answer while the map is held
        timer = threading.Timer(0.01, held.close)  # let go while seal() is waiting
        timer.start()
        seal(fd)
        timer.join()
        assert fcntl.fcntl(fd, fcntl.F_GET_SEALS) & SEALS == SEALS
    finally:
        os.close(fd)

    fd = os.memfd_create("t", os.MFD_ALLOW_SEALING)
    try:
        os.write(fd, b"x" * 4096)
        held = mmap.mmap(fd, 4096, mmap.MAP_SHARED, mmap.PROT_WRITE)
        with pytest.raises(OSError) as lasting:
            seal(fd)
        assert lasting.value.errno == errno.EBUSY
        held.close()
    finally:
        os.close(fd)
