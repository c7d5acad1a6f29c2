"""favordynmods: switched on by a sandbox that uses cgroups, idempotently, and optional."""

import pytest

from perfgym.sandbox import cgroup_moves, cgroups
from perfgym.sandbox.base import SandboxConfig
from perfgym.sandbox.warm import WarmSandbox


@pytest.mark.skipif(cgroups.detect() is None, reason="no writable cgroup hierarchy")
def test_a_cgroup_sandbox_switches_favordynmods_on():
    with WarmSandbox() as sb:
        assert sb.cgroup_moves.startswith("on"), sb.cgroup_moves
    assert cgroup_moves._mounted_with_favor()
    cgroup_moves.favor_dynamic_moves.cache_clear()
    assert cgroup_moves.favor_dynamic_moves() == "on (already)"  # idempotent: no second mount
    with open("/proc/mounts") as f:
        assert sum("favordynmods" in line for line in f) == 1


def test_it_can_be_left_alone():
    with WarmSandbox(SandboxConfig(favor_cgroup_moves=False)) as sb:
        assert sb.cgroup_moves.startswith("off")
        assert sb.run(["true"]).status.value == "OK"
