"""Every kind of process perfgym starts for a user ends with the process that started it, however
that one ends: a local Ray cluster (its GCS, raylet, per-node agents and workers: Ray's own
reaper left the agents running under PID 1 for minutes after a SIGKILL), the judge's warm
sandboxes and Python worker pools, and a scripted model server (threads: nothing to outlive it).
The service's own test is tests/service/test_parent_death.py."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from tests.service.service_helpers import cmdline, descendants

HERE = os.path.dirname(os.path.abspath(__file__))
HELPERS = os.path.join(os.path.dirname(HERE), "helpers")

RAY = """
import os, time
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
from perfgym.judge import JudgeConfig
from perfgym.service.ray_backend import RayJudge, describe
judge = RayJudge(JudgeConfig(repeats=1), init={"num_cpus": 1, "object_store_memory": 80 << 20})
describe(judge)  # the node's judge actor is up
print(0, flush=True)
time.sleep(600)
"""

WARM = f"""
import sys, time
sys.path.insert(0, {HELPERS!r})
from small_tasks import SUM, sum_task
from perfgym.judge import Candidate, Judge, JudgeConfig
judge = Judge(JudgeConfig(repeats=1))
(v,) = judge.judge_many([Candidate(sum_task(), source=SUM)])
assert v.stage.value == "OK", v.reason
print(0, flush=True)
time.sleep(600)
"""

SCRIPTED = """
import time
from perfgym.llm.script import Script
from perfgym.llm.scripted import ScriptedServer
srv = ScriptedServer(Script()).__enter__()
print(srv.port, flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _kill_parent_and_wait(code: str, sig: signal.Signals, at_least: int) -> tuple[list[int], str]:
    """Start `code` as the parent, kill it with `sig` once it printed its line, and give what
    it started 60 s to end; returns what is still running and the parent's line."""
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}  # its own cluster
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                              env=env)  # fmt: skip
    try:
        assert parent.stdout is not None
        line = parent.stdout.readline().strip()
        assert line, "the parent failed before it was ready"
        tree = descendants(parent.pid)
        assert len(tree) >= at_least, [cmdline(p) for p in tree]
        os.kill(parent.pid, sig)
        parent.wait(timeout=60)
        end = time.monotonic() + 60
        while time.monotonic() < end and any(map(_alive, tree)):
            time.sleep(0.2)
        return [p for p in tree if _alive(p)], line
    finally:
        if parent.poll() is None:
            parent.kill()


@pytest.mark.slow
def test_a_ray_cluster_perfgym_started_ends_with_its_parent_even_on_sigkill():
    """SIGKILL: nothing of the parent runs (no atexit, no `ray.shutdown`); SIGTERM and SIGINT
    end it through `ray.shutdown` and the same watcher (checked by hand: nothing left)."""
    pytest.importorskip("ray", reason="the Ray backend needs ray installed")
    # at least the GCS, the raylet and the judge's worker
    left, _ = _kill_parent_and_wait(RAY, signal.SIGKILL, at_least=3)
    assert left == [], [f"{p} {cmdline(p)[:80]}" for p in left]


def test_warm_sandboxes_and_worker_pools_end_with_their_parent_even_on_sigkill():
    """bubblewrap's --die-with-parent, from a thread that lives as long as the process; SIGTERM
    and SIGINT checked by hand (nothing left), left out to spare CI a judge start each."""
    left, _ = _kill_parent_and_wait(WARM, signal.SIGKILL, at_least=2)
    assert left == [], [f"{p} {cmdline(p)[:80]}" for p in left]


def test_a_scripted_model_server_starts_no_process_and_ends_with_its_parent():
    left, port = _kill_parent_and_wait(SCRIPTED, signal.SIGKILL, at_least=0)
    assert left == []
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", int(port)), timeout=5):
        pass
