"""No state survives a run in SysV IPC, POSIX message queues or the kernel keyring.

Every run of the warm launcher and every call of a warm Python worker has an IPC namespace of
its own (freed with its last process), and every sandboxed process runs under a seccomp filter
in which add_key, request_key and keyctl fail with ENOSYS, under every ABI the kernel accepts.
Each test is an attack a program would use to carry an answer from one run to a later (or a
concurrent) one; all run real programs in real sandboxes.
"""

from __future__ import annotations

import errno
import itertools
import platform
import threading

import pytest

from perfgym.errors import SandboxUnavailable
from perfgym.sandbox import Limits, Status, seccomp
from perfgym.sandbox.bwrap import BwrapSandbox
from perfgym.sandbox.pyworker import PythonWorker
from perfgym.sandbox.warm import WarmSandbox

_PRELUDE = """import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
KEY = 0x7A5E0001
"""

# A segment keyed by a fixed key, holding a marker: the later run looks it up by that key.
SHM_LEAVE = (
    _PRELUDE
    + """
sid = libc.shmget(KEY, 4096, 0o1000 | 0o666)
at = libc.shmat(sid, None, 0)
ctypes.memmove(at, b"ANSWER42", 8)
print("left", sid)
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 0)
"""
)
SHM_FIND = (
    _PRELUDE
    + """
deadline = time.monotonic() + (float(sys.argv[1]) if len(sys.argv) > 1 else 0)
while True:
    sid = libc.shmget(KEY, 0, 0)
    if sid >= 0:
        at = libc.shmat(sid, None, 0o10000)
        print("found", ctypes.string_at(at, 8).decode())
        break
    if time.monotonic() >= deadline:
        print("none")
        break
    time.sleep(0.05)
"""
)
MSG_LEAVE = (
    _PRELUDE
    + """
q = libc.msgget(KEY, 0o1000 | 0o666)
buf = ctypes.create_string_buffer(ctypes.sizeof(ctypes.c_long) + 8)
ctypes.memmove(buf, (1).to_bytes(8, "little") + b"ANSWER42", 16)
print("sent", libc.msgsnd(q, buf, 8, 0))
"""
)
MSG_FIND = (
    _PRELUDE
    + """
q = libc.msgget(KEY, 0)
buf = ctypes.create_string_buffer(64)
n = libc.msgrcv(q, buf, 32, 0, 0o4000) if q >= 0 else -1  # IPC_NOWAIT
print("found", buf.raw[8:8 + n].decode() if n > 0 else "none")
"""
)
SEM_LEAVE = (
    _PRELUDE
    + """
s = libc.semget(KEY, 1, 0o1000 | 0o666)
print("set", libc.semctl(s, 0, 16, 42))  # SETVAL
"""
)
SEM_FIND = (
    _PRELUDE
    + """
s = libc.semget(KEY, 1, 0)
print("found", libc.semctl(s, 0, 12) if s >= 0 else "none")  # GETVAL
"""
)
# POSIX message queues live in the IPC namespace's own mqueue filesystem (no /dev/mqueue
# needed): mq_open by name finds another run's queue in a shared namespace.
MQ_LEAVE = (
    _PRELUDE
    + """
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
q = libc.mq_open(b"/perfgym-red", 0o100 | 2, 0o666, None)  # O_CREAT | O_RDWR
print("sent", libc.mq_send(q, b"ANSWER42", 8, 0), q)
"""
)
MQ_FIND = (
    _PRELUDE
    + """
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int]
q = libc.mq_open(b"/perfgym-red", 0o4000)  # O_RDONLY | O_NONBLOCK
buf = ctypes.create_string_buffer(8192)
n = libc.mq_receive(q, buf, 8192, None) if q >= 0 else -1
print("found", buf.raw[:n].decode() if n > 0 else "none")
"""
)
# Each keyring call, as a program would make it: the numbers of this host's native ABI.
_NATIVE = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}.get(platform.machine())
KEYRING_CALLS = (
    _PRELUDE
    + f"ADD, REQ, CTL = {_NATIVE}\n"
    + """
out = []
out.append(libc.syscall(ADD, b"user", b"perfgym-red", b"ANSWER42", 8, -4))  # user keyring
out.append(ctypes.get_errno())
out.append(libc.syscall(REQ, b"user", b"perfgym-red", None, 0))
out.append(ctypes.get_errno())
out.append(libc.syscall(CTL, 1, b"perfgym-shared"))  # join a named (per-user) session keyring
out.append(ctypes.get_errno())
out.append(libc.syscall(CTL, 0, ctypes.c_long(-4), 1))  # the user keyring's id
out.append(ctypes.get_errno())
print(*out)
"""
)


@pytest.fixture(scope="module")
def warm():
    sb = WarmSandbox()
    yield sb
    sb.close()


@pytest.fixture(scope="module")
def cold():
    sb = BwrapSandbox()
    yield sb
    sb.close()


@pytest.fixture(scope="module")
def worker():
    w = PythonWorker()
    yield w
    w.close()


def _py(sb, src: str, *args: str) -> str:  # type: ignore[no-untyped-def]
    ex = sb.run(["python3", "/tmp/p.py", *args], files={"p.py": src},
                limits=Limits(wall_s=30, cpu_s=10))  # fmt: skip
    assert ex.status == Status.OK, (ex.status, ex.stderr[-500:])
    return ex.stdout_text.strip()


# --- SysV IPC and POSIX message queues --------------------------------------------------------


@pytest.mark.parametrize("backend", ["warm", "cold"])
@pytest.mark.parametrize(
    "leave,find", [(SHM_LEAVE, SHM_FIND), (MSG_LEAVE, MSG_FIND), (SEM_LEAVE, SEM_FIND),
                   (MQ_LEAVE, MQ_FIND)], ids=["shm", "msg", "sem", "mqueue"])  # fmt: skip
def test_an_ipc_object_a_run_leaves_is_not_in_a_later_run(backend, leave, find, request):  # type: ignore[no-untyped-def]
    sb = request.getfixturevalue(backend)
    left = _py(sb, leave)
    assert "-1" not in left.split(), f"the first run could not make its object: {left}"
    assert _py(sb, find) in ("found none", "none")


def test_concurrent_warm_runs_do_not_share_an_ipc_namespace(warm) -> None:  # type: ignore[no-untyped-def]
    """A GRPO group's copies run at once: one holds its segment while the other looks for it
    (polling for 3 s, the holder staying 6 s: the two overlap however the runs are placed)."""
    held: list[str] = []
    holder = threading.Thread(target=lambda: held.append(_py(warm, SHM_LEAVE, "6")))
    holder.start()
    try:
        seen = _py(warm, SHM_FIND, "3")
    finally:
        holder.join()
    assert held and held[0].startswith("left")
    assert seen == "none"


SHM_LEAVE_CALL = (
    _PRELUDE
    + """
def f():
    sid = libc.shmget(KEY, 4096, 0o1000 | 0o666)
    ctypes.memmove(libc.shmat(sid, None, 0), b"ANSWER42", 8)
    return sid
"""
)
SHM_FIND_CALL = (
    _PRELUDE
    + """
def f():
    sid = libc.shmget(KEY, 0, 0)
    return ctypes.string_at(libc.shmat(sid, None, 0o10000), 8).decode() if sid >= 0 else "none"
"""
)


def test_a_worker_call_cannot_leave_a_segment_for_its_next_call(worker) -> None:  # type: ignore[no-untyped-def]
    """A function call's segment, looked for by the next call and by a program run."""
    got = worker.call(SHM_LEAVE_CALL, "f")
    assert got.status == Status.OK and isinstance(got.value, int) and got.value >= 0, got
    again = worker.call(SHM_FIND_CALL, "f")
    assert again.status == Status.OK and again.value == "none", again
    ran = worker.run_program(SHM_FIND)
    assert ran.status == Status.OK and ran.stdout_text.strip() == "none", ran.stdout_text


def test_concurrent_worker_calls_do_not_share_an_ipc_namespace(worker) -> None:  # type: ignore[no-untyped-def]
    """Two workers (a pool's), one call each at once: the holder's segment is not the
    finder's (a guard: each worker is a bubblewrap with its own IPC namespace already)."""
    other = PythonWorker()
    try:
        held: list[str] = []

        def hold() -> None:
            r = other.run_program(SHM_LEAVE, argv=("/tmp/main.py", "6"),
                                  limits=Limits(wall_s=30, cpu_s=10))  # fmt: skip
            held.append(r.stdout_text.strip())

        holder = threading.Thread(target=hold)
        holder.start()
        try:
            seen = worker.run_program(SHM_FIND, argv=("/tmp/main.py", "3"),
                                      limits=Limits(wall_s=30, cpu_s=10))  # fmt: skip
        finally:
            holder.join()
    finally:
        other.close()
    assert held and held[0].startswith("left"), held
    assert seen.stdout_text.strip() == "none"


# Nothing left to clean, still a channel: SysV ids carry a per-namespace sequence number, so
# the id a later run's first segment gets says how many an earlier run made (and removed).
ID_SIGNAL = (
    _PRELUDE
    + """
for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 0):
    libc.shmctl(libc.shmget(0, 4096, 0o1000 | 0o600), 0, None)  # IPC_PRIVATE, then IPC_RMID
sid = libc.shmget(0, 4096, 0o1000 | 0o600)
libc.shmctl(sid, 0, None)
print(sid)
"""
)


@pytest.mark.parametrize("backend", ["warm", "worker"])
def test_a_run_cannot_signal_a_later_one_through_the_next_sysv_id(backend, request) -> None:  # type: ignore[no-untyped-def]
    """A cleanup that removes every object leaves this open; a namespace per run does not:
    the later run's segment id is the one a fresh namespace gives, however many came before."""
    if backend == "warm":
        sb = request.getfixturevalue("warm")

        def run(n: int) -> str:
            return _py(sb, ID_SIGNAL, str(n))
    else:
        w = request.getfixturevalue("worker")

        def run(n: int) -> str:
            r = w.run_program(ID_SIGNAL, argv=("/tmp/main.py", str(n)))
            assert r.status == Status.OK, r.stderr_text
            return r.stdout_text.strip()

    fresh = run(0)
    run(37)
    assert run(0) == fresh


# --- the kernel keyring ------------------------------------------------------------------------

_ENOSYS = errno.ENOSYS


@pytest.mark.skipif(_NATIVE is None, reason="no keyring numbers for this machine")
@pytest.mark.parametrize("backend", ["warm", "cold", "worker"])
def test_every_keyring_call_fails_with_enosys(backend, request) -> None:  # type: ignore[no-untyped-def]
    """add_key into the user keyring, request_key, joining a named session keyring (per user,
    so another run's join finds it) and reading the user keyring's id: all ENOSYS."""
    if backend == "worker":
        ran = request.getfixturevalue("worker").run_program(KEYRING_CALLS)
        assert ran.status == Status.OK, ran.stderr_text
        out = ran.stdout_text.strip()
    else:
        out = _py(request.getfixturevalue(backend), KEYRING_CALLS)
    values = [int(v) for v in out.split()]
    assert values == [-1, _ENOSYS] * 4, out


I386_KEYCTL = r"""
#include <stdio.h>
/* The i386 entry (int 0x80) from a 64-bit process: its own syscall numbers, its own audit arch. */
static long i386(long nr, long a, long b, long c) {
    long ret;
    __asm__ volatile ("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
    return ret;
}
int main(void) {
    printf("%ld %ld\n", i386(20, 0, 0, 0), i386(288, 0, -4, 1)); /* getpid; keyctl GET_ID */
    return 0;
}
"""


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the i386 entry is x86-64's")
def test_the_i386_entry_cannot_reach_the_keyring(warm) -> None:  # type: ignore[no-untyped-def]
    ex = warm.run(["sh", "-c", "cc -O0 -o /tmp/a /tmp/a.c && /tmp/a"], files={"a.c": I386_KEYCTL},
                  limits=Limits(wall_s=60, cpu_s=30, memory_mb=512))  # fmt: skip
    if ex.status != Status.OK:
        pytest.skip(f"no C compiler or no i386 entry here: {ex.stderr_text[-300:]}")
    pid, key = (int(v) for v in ex.stdout_text.split())
    if pid <= 0:
        pytest.skip("this kernel has no i386 emulation")
    assert key == -_ENOSYS, ex.stdout_text


X32_KEYCTL = (
    _PRELUDE
    + """
pid = libc.syscall(0x40000000 | 39)  # x32 getpid
e0 = ctypes.get_errno()
key = libc.syscall(0x40000000 | 250, 0, ctypes.c_long(-4), 1)
print(pid, e0, key, ctypes.get_errno())
"""
)


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x32 is x86-64's")
def test_x32_numbers_cannot_reach_the_keyring(warm) -> None:  # type: ignore[no-untyped-def]
    """x32's numbers (bit 30 set) share x86-64's audit arch: the filter names them too. (A
    kernel without x32 answers ENOSYS itself; the test is then a control only.)"""
    pid, _e0, key, err = (int(v) for v in _py(warm, X32_KEYCTL).split())
    assert key == -1 and err == _ENOSYS, (pid, key, err)


def test_the_filter_refuses_an_unknown_machine() -> None:
    with pytest.raises(SandboxUnavailable, match="no seccomp filter"):
        seccomp.program("riscv64")


def test_a_sandbox_on_an_unknown_machine_refuses_to_start(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Never a sandbox without the filter: a machine the filter does not know stops the warm
    launcher, a cold run and a worker from starting, with the reason."""
    monkeypatch.setattr(seccomp.platform, "machine", lambda: "sparc64")
    with WarmSandbox() as sb, pytest.raises(SandboxUnavailable, match="sparc64"):
        sb.run(["true"])
    with BwrapSandbox() as sb, pytest.raises(SandboxUnavailable, match="sparc64"):
        sb.run(["true"])
    w = PythonWorker()
    try:
        with pytest.raises(SandboxUnavailable, match="sparc64"):
            w.call("def f():\n    return 1\n", "f")
    finally:
        w.close()


def test_the_filter_program_is_well_formed() -> None:
    """Every jump lands inside the program and every path ends in a return."""
    import struct

    for machine, ptrace in itertools.product(("x86_64", "aarch64"), (False, True)):
        prog = seccomp.program(machine, refuse_ptrace=ptrace)
        assert len(prog) % 8 == 0
        insns = [struct.unpack("=HBBI", prog[i : i + 8]) for i in range(0, len(prog), 8)]
        assert insns[-1][0] == 0x06  # ret
        for pc, (code, jt, jf, _k) in enumerate(insns):
            if code & 0x07 == 0x05:  # BPF_JMP
                assert pc + 1 + max(jt, jf) < len(insns)
