"""Counters of the whole host (open files, inodes, free memory, forks, each core's idle time,
pressure stalls) are shown to every run frozen: a run that moves them, and a concurrent run
that reads them, see nothing of each other (`sandbox.host_counters`). A control sandbox with
the live counters shows the channel: two copies of one program split the work through the
pty count this way (red team helper-76), and the file handle count is as good a wire."""

from __future__ import annotations

import json
import os

import pytest
from concurrent_runs import hold_and_look

from perfgym.sandbox import BwrapSandbox, Limits, SandboxConfig, WarmSandbox, host_counters
from perfgym.sandbox.pyworker import PythonWorkerPool

#: Reads every counter a run could move, as one string per path (a directory: its files).
READ = """
import os


def read_all(paths):
    out = {}
    for p in paths:
        if os.path.isdir(p):
            for d, _s, files in sorted(os.walk(p)):
                for n in sorted(files):
                    try:
                        with open(os.path.join(d, n), "rb") as f:
                            out[os.path.join(d, n)] = f.read()
                    except OSError as e:
                        out[os.path.join(d, n)] = repr(e).encode()
        else:
            try:
                with open(p, "rb") as f:
                    out[p] = f.read()
            except OSError as e:  # root's alone (pagetypeinfo) stays so
                out[p] = repr(e).encode()
    return out


def move_them():
    fds = [os.open("/dev/null", os.O_RDONLY) for _ in range(150)]
    block = bytearray(96 << 20)
    for i in range(0, len(block), 4096):
        block[i] = 1
    for i in range(40):
        with open(f"/tmp/f{i}", "w") as f:
            f.write("x")
    for _ in range(5):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    return fds, block


def moved(paths):
    before = read_all(paths)
    held = move_them()
    after = read_all(paths)
    del held
    return sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
"""
PROGRAM = (
    READ
    + """
import json, sys
paths = json.loads(sys.argv[1])
print(json.dumps(moved(paths)))
"""
)
FUNCTION = (
    READ
    + """

def f(paths):
    return moved(paths)
"""
)
#: Counters the control must see move (the host moves the rest only sometimes).
MOVING = ["/proc/sys/fs/file-nr", "/proc/meminfo"]


def _paths() -> list[str]:
    return [p for p in host_counters.frozen_paths() if p.startswith("/proc/")] + [
        p for p in host_counters.frozen_paths() if p.startswith("/sys/")
    ]


@pytest.mark.parametrize("backend", [WarmSandbox, BwrapSandbox])
def test_a_run_sees_no_host_counter_move(backend: type) -> None:
    paths = _paths()
    assert "/proc/sys/fs" in paths and "/proc/meminfo" in paths, paths
    limits = Limits(memory_mb=512, wall_s=60)
    for freeze in (True, False):
        with backend(SandboxConfig(freeze_host_counters=freeze)) as sb:
            r = sb.run(["python3", "-c", PROGRAM, json.dumps(paths)], limits=limits)
            assert r.status.value == "OK", r.stderr_text
            moved = json.loads(r.stdout_text)
        if freeze:
            assert moved == [], moved
        else:  # the control: the run's own activity moved the live counters
            assert set(MOVING) <= set(moved), moved


def test_a_worker_call_sees_no_host_counter_move() -> None:
    paths = _paths()
    for freeze in (True, False):
        config = SandboxConfig(freeze_host_counters=freeze)
        with PythonWorkerPool(size=1, config=config) as pool:
            r = pool.call(FUNCTION, "f", [paths], limits=Limits(memory_mb=512, wall_s=60))
        assert r.status.value == "OK", r.error
        if freeze:
            assert r.value == [], r.value
        else:
            assert set(MOVING) <= set(r.value), r.value


#: Toggles 250 open files every 0.15 s, for HOLD_S seconds.
HOLD = """
import os, time
print("holding", flush=True)
end = time.monotonic() + float(os.environ["HOLD_S"])
while time.monotonic() < end:
    fds = [os.open("/dev/null", os.O_RDONLY) for _ in range(250)]
    time.sleep(0.15)
    for fd in fds:
        os.close(fd)
    time.sleep(0.15)
"""
#: The spread of the host's allocated file handles over LOOK_S seconds.
LOOK = """
import os, time
seen = []
end = time.monotonic() + float(os.environ["LOOK_S"])
while time.monotonic() < end:
    with open("/proc/sys/fs/file-nr") as f:
        seen.append(int(f.read().split()[0]))
    time.sleep(0.01)
print(max(seen) - min(seen))
"""


def test_a_concurrent_run_reads_nothing_of_another_in_the_file_count() -> None:
    held, live = hold_and_look(SandboxConfig(freeze_host_counters=False), HOLD, 4, LOOK, 2)
    assert held.startswith("holding"), held
    assert int(live) >= 200, live  # the control: the holder's 250 files, read across runs
    held, frozen = hold_and_look(SandboxConfig(), HOLD, 4, LOOK, 2)
    assert held.startswith("holding"), held
    assert int(frozen) == 0, frozen


HONEST = """
import os
with open("/proc/meminfo") as f:
    total = next(int(line.split()[1]) for line in f if line.startswith("MemTotal:"))
with open("/proc/stat") as f:
    assert f.readline().startswith("cpu ")
with open("/proc/sys/fs/file-max") as f:
    assert int(f.read()) > 0
print(total > 0, os.cpu_count() >= 1, len(os.listdir("/proc/pressure")) >= 0)
"""


def test_honest_readers_of_the_counters_still_work() -> None:
    with WarmSandbox() as sb:
        r = sb.run(["python3", "-c", HONEST])
    assert r.stdout_text.split() == ["True", "True", "True"], r.stderr_text


def test_without_a_frozen_copy_the_counters_are_shown_empty(tmp_path, monkeypatch) -> None:
    """A helpers directory that cannot be written: no frozen copy, the files bound empty and
    the directories covered, never the live ones."""
    locked = tmp_path / "locked"
    locked.mkdir()
    monkeypatch.setattr(host_counters, "HELPERS", locked / "not" / "here")
    os.chmod(locked, 0o500)
    host_counters.frozen_dir.cache_clear()
    try:
        if os.geteuid() == 0:  # root writes anywhere: a file in the way instead
            os.chmod(locked, 0o700)
            (locked / "not").write_text("a file, not a directory")
        assert host_counters.frozen_dir() is None
        args = host_counters.bwrap_args("/EMPTY")
        assert host_counters.MOUNT not in args
        pairs = {args[i + 2]: args[i + 1] for i in range(len(args) - 2) if args[i] == "--ro-bind"}
        assert pairs["/proc/meminfo"] == "/EMPTY"
        tmpfs = {args[i + 1] for i in range(len(args) - 1) if args[i] == "--tmpfs"}
        assert "/proc/sys/fs" in tmpfs
        assert set(host_counters.covered_dirs()) <= tmpfs
    finally:
        host_counters.frozen_dir.cache_clear()
