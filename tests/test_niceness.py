"""A judge in a Ray worker runs at nice 0 (Ray starts its workers at 15); anyone else's nice
value is theirs; a worker that may not lower it says so."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

# Not `alone`: nice values, not timings (another worker's tests beside it change neither).

PROBE = ("import os; from perfgym.niceness import undo_ray_niceness as u; "
         "note = u(); print(os.getpriority(os.PRIO_PROCESS, 0), note is None)")  # fmt: skip


def _probe(env: dict[str, str], *wrapper: str) -> tuple[int, bool]:
    out = subprocess.run(["nice", "-n", "15", *wrapper, sys.executable, "-c", PROBE], env=env,
                         capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    nice, clean = out.stdout.split()
    return int(nice), clean == "True"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RAY_RAYLET_PID"}
    return {**env, **extra}


@pytest.mark.skipif(os.geteuid() != 0, reason="lowering a nice value needs root")
def test_a_ray_worker_started_niced_goes_back_to_nice_0():
    assert _probe(_env(RAY_RAYLET_PID="1")) == (0, True)


def test_a_process_that_is_no_ray_worker_keeps_its_own_nice_value():
    assert _probe(_env()) == (15, True)


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv (util-linux)")
def test_a_worker_that_may_not_lower_its_nice_value_says_so():
    # without CAP_SYS_NICE (dropped from the bounding set) root may not lower it either
    assert _probe(_env(RAY_RAYLET_PID="1"), "setpriv", "--bounding-set", "-sys_nice") == (15, False)
