"""Pooled per-run cgroups are reused whatever order the runs' limits come in."""

import os
import subprocess
import sys
import time

import pytest

from perfgym.sandbox import cgroups

pytestmark = pytest.mark.skipif(cgroups.detect() is None, reason="no writable cgroup hierarchy")


def _memory_limit(cg: cgroups.RunCgroup) -> int:
    name = "memory.limit_in_bytes" if cg.version == "v1" else "memory.max"
    with open(f"{cg.dirs['memory']}/{name}") as f:
        return int(f.read())


def test_reuse_when_limits_go_up_and_down():
    pool = cgroups.CgroupPool()
    try:
        first = pool.acquire(256 << 20, 64)
        pool.release(first)
        for memory, pids in ((2 << 30, 128), (128 << 20, 16), (128 << 20, 16), (1 << 30, 64)):
            cg = pool.acquire(memory, pids)
            assert cg is first  # reset in place, not destroyed and re-created
            assert _memory_limit(cg) == memory
            with open(f"{cg.dirs['pids']}/pids.max") as f:
                assert int(f.read()) == pids
            pool.release(cg)
    finally:
        pool.close()


def test_kept_descriptors_read_the_cgroup_as_it_is_now():
    """A pooled cgroup keeps its counter files open and reads them at offset 0 each time: the
    figures follow the cgroup, and so does the emptiness check, which re-opens cgroup.procs
    (v1 serves a kept cgroup.procs descriptor a pid list cached for a second)."""
    pool = cgroups.CgroupPool()
    child = None
    try:
        cg = pool.acquire(256 << 20, 64)
        assert cg.empty()
        before = cg.usage()
        child = subprocess.Popen(
            [sys.executable, "-c", "import sys; sys.stdin.readline(); x = bytearray(24 << 20); "
             "print('ok', flush=True); sys.stdin.readline()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        for ctrl in sorted({"memory", "pids", "cpuacct"} & set(cg.dirs)):
            with open(f"{cg.dirs[ctrl]}/cgroup.procs", "w") as f:
                f.write(str(child.pid))
        assert not cg.empty()  # read just after an empty one: not the cached list
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "ok"
        assert cg.usage() - before >= 16 << 20  # its 24 MiB, charged after it joined
        child.stdin.write("end\n")
        child.stdin.flush()
        child.wait(timeout=30)
        deadline = time.monotonic() + 5
        while not cg.empty() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert cg.empty()
        fds = cg.counter_fds()
        assert {"cpu", "usage", "peak"} <= set(fds)
        assert int(os.pread(fds["cpu"], 4096, 0).split()[-1 if cg.version == "v1" else 1]) > 0
        pool.release(cg)
    finally:
        if child is not None and child.poll() is None:
            child.kill()
            child.wait()
        pool.close()
    assert not cg._fds  # closed with the cgroup
