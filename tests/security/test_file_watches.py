"""No run watches files (seccomp: `inotify_init`, `inotify_init1`, `fanotify_init` fail with
ENOSYS). A watch's events belong to the file, and runs share the view's read-only files: red
team helper-77 watched a directory of them and read which file a concurrent run opened, 7 bits
an open, and two copies of one program split the work that way (RLPF 0.59 on average against
the honest twin's 0.15, 18 of 18 verdicts, unflagged)."""

from __future__ import annotations

import errno
import platform
import subprocess
import sys
import threading
import time

import pytest
from bpf import run_bpf

from perfgym.sandbox import BwrapSandbox, Limits, Status, WarmSandbox, seccomp
from perfgym.sandbox.pyworker import PythonWorker

#: A directory of the view whose files the holder opens (any run can read them).
SHARED = sys.base_prefix + "/lib/python3.11/json"
#: Watches SHARED for opens (inotify), for LOOK_S seconds: the names it saw opened, or the
#: errno of a call that failed; then the errnos of inotify_init and fanotify_init.
LOOK = """
import ctypes, os, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
IN_OPEN, IN_NONBLOCK = 0x20, 0x800
out = []
fd = libc.inotify_init1(IN_NONBLOCK)
if fd < 0:
    out.append(f"init1:{ctypes.get_errno()}")
else:
    wd = libc.inotify_add_watch(fd, DIR.encode(), IN_OPEN)
    seen = set()
    end = time.monotonic() + LOOK_S
    while time.monotonic() < end:
        try:
            buf = os.read(fd, 65536)
        except BlockingIOError:
            time.sleep(0.01)
            continue
        at = 0
        while at < len(buf):
            _wd, _mask, _cookie, n = struct.unpack_from("iIII", buf, at)
            name = buf[at + 16 : at + 16 + n].rstrip(b"\\0").decode()
            if name:
                seen.add(name)
            at += 16 + n
    out.append("seen:" + ",".join(sorted(seen)))
for name, args in (("inotify_init", ()), ("fanotify_init", (0, 0))):
    nr = {"inotify_init": 253, "fanotify_init": 300}[name]
    ctypes.set_errno(0)
    r = libc.syscall(nr, *args)
    out.append(f"{name}:{ctypes.get_errno() if r < 0 else 0}")
print(" ".join(out))
"""
#: Opens SHARED's `decoder.py` again and again, for HOLD_S seconds.
HOLD = """
import time
end = time.monotonic() + HOLD_S
while time.monotonic() < end:
    open(DIR + "/decoder.py").close()
    time.sleep(0.005)
print("held")
"""

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="x86-64's numbers")


def _program(body: str, **values: object) -> str:
    return "".join(f"{k} = {v!r}\n" for k, v in values.items()) + body


def _looked_beside_a_holder(run_look) -> str:  # type: ignore[no-untyped-def]
    """What a looking run printed while another process opened a shared file."""
    holder = threading.Thread(target=subprocess.run, args=(
        [sys.executable, "-c", _program(HOLD, DIR=SHARED, HOLD_S=3.0)],),
        kwargs={"capture_output": True})  # fmt: skip
    holder.start()
    try:
        time.sleep(0.3)
        return run_look(_program(LOOK, DIR=SHARED, LOOK_S=1.5))
    finally:
        holder.join()


def test_the_looker_sees_opens_outside_a_sandbox() -> None:
    """The control: unsandboxed, the same looker names the file another process opens."""
    out = _looked_beside_a_holder(lambda src: subprocess.run(
        [sys.executable, "-c", src], capture_output=True, text=True, check=True).stdout)  # fmt: skip
    assert "seen:" in out and "decoder.py" in out.split("seen:")[1].split()[0], out


@pytest.mark.parametrize("kind", [WarmSandbox, BwrapSandbox])
def test_no_run_watches_a_file(kind) -> None:  # type: ignore[no-untyped-def]
    with kind() as sb:

        def look(src: str) -> str:
            ex = sb.run(["python3", "-c", src], limits=Limits(wall_s=30))
            assert ex.status == Status.OK, ex.stderr_text[-500:]
            return ex.stdout_text

        out = _looked_beside_a_holder(look)
    e = errno.ENOSYS
    assert out.split() == [f"init1:{e}", f"inotify_init:{e}", f"fanotify_init:{e}"], out


def test_no_worker_call_watches_a_file() -> None:
    w = PythonWorker()
    try:

        def look(src: str) -> str:
            ran = w.run_program(src)
            assert ran.status == Status.OK, ran.stderr_text
            return ran.stdout_text

        out = _looked_beside_a_holder(look)
    finally:
        w.close()
    e = errno.ENOSYS
    assert out.split() == [f"init1:{e}", f"inotify_init:{e}", f"fanotify_init:{e}"], out


@pytest.mark.parametrize("machine", sorted(seccomp.ARCHES))
def test_every_abi_refuses_the_watch_calls(machine: str) -> None:
    """inotify_init (where the ABI has it), inotify_init1 and fanotify_init, in every ABI the
    filter knows: ENOSYS; inotify's other calls have nothing to act on then, and are left."""
    numbers = {
        seccomp.AUDIT_ARCH_X86_64: (253, 294, 300, seccomp.X32_BIT | 294),
        seccomp.AUDIT_ARCH_I386: (291, 332, 338),
        seccomp.AUDIT_ARCH_AARCH64: (26, 262),
        seccomp.AUDIT_ARCH_ARM: (316, 360, 367),
    }
    prog = seccomp.program(machine)
    for arch, _nrs in seccomp.ARCHES[machine]:
        for nr in numbers[arch]:
            assert run_bpf(prog, arch, nr) == 0x00050000 | errno.ENOSYS, (machine, arch, nr)
        assert run_bpf(prog, arch, 0) == 0x7FFF0000  # read (i386: restart_syscall): allowed


#: dnotify (fcntl F_NOTIFY) on SHARED for reads, for LOOK_S seconds: the signals it got, or
#: the errno of a refused F_NOTIFY.
DNOTIFY = """
import fcntl, os, signal, time
hits = []
signal.signal(signal.SIGIO, lambda s, f: hits.append(1))
fd = os.open(DIR, os.O_RDONLY)
try:
    fcntl.fcntl(fd, fcntl.F_NOTIFY, fcntl.DN_ACCESS | fcntl.DN_MULTISHOT)
except OSError as exc:
    print("refused", exc.errno)
else:
    time.sleep(LOOK_S)
    signal.signal(signal.SIGIO, signal.SIG_IGN)  # none may end it on its way out
    print("signals", len(hits))
"""


def _dnotified(run_look) -> str:  # type: ignore[no-untyped-def]
    holder = threading.Thread(target=subprocess.run, args=(
        [sys.executable, "-c", _program(HOLD.replace(".close()", ".read(10)"), DIR=SHARED, HOLD_S=3.0)],),
        kwargs={"capture_output": True})  # fmt: skip
    holder.start()
    try:
        time.sleep(0.3)
        return run_look(_program(DNOTIFY, DIR=SHARED, LOOK_S=1.5)).strip()
    finally:
        holder.join()


def test_no_run_is_told_of_reads_in_a_directory() -> None:
    """fcntl's F_NOTIFY (dnotify) signals a read of any file in the directory, whoever reads
    it: a signal a concurrent run's read sends. Outside a sandbox the looker gets them; in
    one, F_NOTIFY fails with EINVAL (as without dnotify in the kernel)."""
    outside = _dnotified(lambda src: subprocess.run(
        [sys.executable, "-c", src], capture_output=True, text=True, check=True).stdout)  # fmt: skip
    assert outside.startswith("signals") and int(outside.split()[1]) >= 10, outside
    with WarmSandbox() as sb:
        inside = _dnotified(lambda src: sb.run(["python3", "-c", src],
                                               limits=Limits(wall_s=30)).stdout_text)  # fmt: skip
    assert inside == f"refused {errno.EINVAL}", inside


@pytest.mark.parametrize("isolate_locks", [True, False])
@pytest.mark.parametrize("machine", sorted(seccomp.ARCHES))
def test_every_abi_refuses_dnotify(machine: str, isolate_locks: bool) -> None:
    """fcntl(F_NOTIFY) -> EINVAL under every ABI, whether or not locks are kept to the run
    (a repository's sandbox keeps real locks, not dnotify); other commands pass."""
    prog = seccomp.program(machine, isolate_locks=isolate_locks)
    for arch, _nrs in seccomp.ARCHES[machine]:
        for nr in seccomp.LOCK_CALLS[arch][1]:
            assert run_bpf(prog, arch, nr, 3, seccomp.F_NOTIFY) == 0x00050000 | errno.EINVAL
            assert run_bpf(prog, arch, nr, 3, 1) == 0x7FFF0000  # F_GETFD
            lock = run_bpf(prog, arch, nr, 3, 6)  # F_SETLK
            assert lock == (0x00050000 if isolate_locks else 0x7FFF0000), (arch, nr, lock)
