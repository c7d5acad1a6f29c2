"""Pooled per-run cgroups are reused whatever order the runs' limits come in."""

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
