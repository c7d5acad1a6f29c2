"""A local cluster's node that Ray's fixed 30 s startup wait gave up on (a loaded machine) is
ended and started again; any other failure is not retried; a failed start leaves nothing."""

from __future__ import annotations

import os
import subprocess

import pytest

from perfgym.child_reaper import process_stat
from perfgym.service.ray_local import START_ATTEMPTS, LocalCluster

TIMED_OUT = Exception("The current node timed out during startup. This could happen because ...")


def _bare() -> LocalCluster:
    """A LocalCluster with no cluster started: just what `_started` uses."""
    c = LocalCluster.__new__(LocalCluster)
    c._cores, c._slots, c.per_node = sorted(os.sched_getaffinity(0)), 1, 1
    c._reapers = []
    return c


def _alive(proc: subprocess.Popen) -> bool:
    return proc.poll() is None and process_stat(proc.pid) is not None


def test_a_node_start_that_timed_out_is_ended_and_started_again():
    cluster, started = _bare(), []

    def start() -> str:
        started.append(subprocess.Popen(["sleep", "60"]))
        if len(started) < START_ATTEMPTS:
            raise TIMED_OUT
        return "node"

    try:
        assert cluster._started(start, 0) == "node"
        assert [_alive(p) for p in started] == [False] * (START_ATTEMPTS - 1) + [True]
        assert any(started[-1].pid in r.roots for r in cluster._reapers)  # ends with us
    finally:
        for p in started:
            p.kill()
            p.wait()
        for r in cluster._reapers:
            r.stop()


def test_other_failures_and_the_last_timeout_are_raised_at_once():
    cluster, calls = _bare(), []

    def broken() -> None:
        calls.append(1)
        raise RuntimeError("bad port")

    def always_late() -> None:
        calls.append(1)
        raise TIMED_OUT

    with pytest.raises(RuntimeError, match="bad port"):
        cluster._started(broken, 0)
    assert len(calls) == 1
    calls.clear()
    with pytest.raises(Exception, match="timed out during startup"):
        cluster._started(always_late, 0)
    assert len(calls) == START_ATTEMPTS
    for r in cluster._reapers:
        r.stop()
