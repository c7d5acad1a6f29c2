"""Red team helper-73: concurrent runs saw each other's file locks on the files they share (the
view's read-only libraries), 33 bits a call through a lock's offset and length, and two
copies of one program split the work and swapped halves, or one run handed its answer to the
next run of the same input while it slept (free on the CPU clock). Locks stay in their run
now (`seccomp.LOCK_CALLS`): each case is checked against a control sandbox with real locks."""

from __future__ import annotations

import itertools

import pytest
from bpf import run_bpf
from concurrent_runs import hold_and_look

from perfgym.sandbox import SandboxConfig, WarmSandbox, seccomp
from perfgym.sandbox.pyworker import PythonWorker

# Holds a shared flock and an OFD read lock of a telling offset and length on os.py (a file
# every run can read) for a few seconds.
HOLD = """
import fcntl, os, struct, time
fd = os.open(os.__file__, os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_SH)
fcntl.fcntl(fd, 37, struct.pack("hhqqi4x", fcntl.F_RDLCK, 0, 4096, 12345, 0))  # F_OFD_SETLK
print("held", flush=True)
time.sleep(float(os.environ["HOLD_S"]))
"""
# Looks for another run's locks on the same file until it sees one or its time is up.
LOOK = """
import errno, fcntl, os, struct, time
fd = os.open(os.__file__, os.O_RDONLY)
seen, errors = [], set()
end = time.monotonic() + float(os.environ["LOOK_S"])
while not seen and time.monotonic() < end:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
    except BlockingIOError:
        seen.append("flock held elsewhere")
    try:
        raw = fcntl.fcntl(fd, 36, struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 0, 0, 0))  # F_OFD_GETLK
        kind, _, start, length, _ = struct.unpack("hhqqi4x", raw)
        if kind != fcntl.F_UNLCK:
            seen.append(f"lock {start} {length}")
    except OSError as exc:
        errors.add(errno.errorcode[exc.errno])
    time.sleep(0.02)
print(seen, sorted(errors))
"""
# A single-process program that locks (SQLite in /tmp, WAL mode too) works as before.
SQLITE = """
import sqlite3
db = sqlite3.connect("/tmp/x.db")
assert db.execute("pragma journal_mode=wal").fetchone()[0] == "wal"
db.execute("create table t (v int)")
db.executemany("insert into t values (?)", [(i,) for i in range(100)])
db.commit()
print(db.execute("select sum(v) from t").fetchone()[0])
"""


def _concurrent(isolate: bool) -> str:
    """What a looking run saw of a holding run's locks, both in flight at once."""
    held, looked = hold_and_look(SandboxConfig(isolate_locks=isolate), HOLD, 8, LOOK, 6)
    assert held.startswith("held"), held
    return looked


def test_concurrent_runs_see_none_of_each_others_locks() -> None:
    control = _concurrent(isolate=False)
    assert "flock held elsewhere" in control and "lock 4096 12345" in control, control
    assert _concurrent(isolate=True) == "[] []"


def test_a_program_that_locks_its_own_files_still_works() -> None:
    with WarmSandbox() as sb:
        r = sb.run(["python3", "-c", SQLITE])
    assert r.stdout_text.strip() == "4950", r.stderr_text


def test_worker_calls_take_no_lock_another_can_see() -> None:
    source = (
        "import fcntl, os, struct\n"
        "def f():\n"
        "    fd = os.open(os.__file__, os.O_RDONLY)\n"
        "    fcntl.fcntl(fd, 37, struct.pack('hhqqi4x', fcntl.F_RDLCK, 0, 4096, 12345, 0))\n"
        "    other = os.open(os.__file__, os.O_RDONLY)\n"
        "    raw = fcntl.fcntl(other, 36, struct.pack('hhqqi4x', fcntl.F_WRLCK, 0, 0, 0, 0))\n"
        "    return struct.unpack('hhqqi4x', raw)[0] == fcntl.F_UNLCK\n"
    )
    seen = {}
    for isolate in (True, False):
        w = PythonWorker(SandboxConfig(isolate_locks=isolate))
        try:
            seen[isolate] = w.call(source, "f").value
        finally:
            w.close()
    # an OFD lock conflicts across open files of one process: taken for real, the second sees it
    assert seen == {True: True, False: False}, seen


ALLOW, SUCCESS = 0x7FFF0000, 0x00050000


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_filter_decides_each_lock_call_alike_in_every_abi(machine: str) -> None:
    for ptrace, inet, isolate in itertools.product((False, True), repeat=3):
        prog = seccomp.program(machine, ptrace, inet, isolate)
        for arch in dict(seccomp.ARCHES[machine]):
            flocks, fcntls = seccomp.LOCK_CALLS[arch]
            for nr in flocks:
                assert run_bpf(prog, arch, nr, 3, 2) == (SUCCESS if isolate else ALLOW)
            for nr in fcntls:
                for cmd in seccomp.SET_LOCK_COMMANDS:
                    assert run_bpf(prog, arch, nr, 3, cmd) == (SUCCESS if isolate else ALLOW)
                for cmd in (0, 1, 2, 3, 4, 5, 12, 36, 1024, 1030):  # F_GETLK (real), leases ...
                    assert run_bpf(prog, arch, nr, 3, cmd) == ALLOW
