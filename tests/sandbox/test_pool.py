"""SandboxPool: order, concurrency cap, and timing mode pinning each run to its own core."""

import os
import sys

import pytest

from perfgym.errors import ConfigError
from perfgym.sandbox import Limits, RunRequest, SandboxPool

PY = os.path.realpath(sys.executable)
AFFINITY = "import os, time; time.sleep(0.3); print(sorted(os.sched_getaffinity(0)))"


def test_results_come_back_in_order(warm):
    reqs = [RunRequest(command=[PY, "-c", f"print({i})"]) for i in range(6)]
    with SandboxPool(warm, concurrency=3) as pool:
        out = pool.run_many(reqs)
    assert [ex.stdout.strip() for ex in out] == [str(i).encode() for i in range(6)]


def test_timing_mode_pins_runs_to_distinct_cores(warm):
    cores = sorted(os.sched_getaffinity(0))
    reqs = [RunRequest(command=[PY, "-c", AFFINITY], limits=Limits(wall_s=10)) for _ in range(4)]
    seen = []
    with SandboxPool(warm, timing=True) as pool:
        out = pool.run_many(reqs, on_done=lambda i, ex: seen.append(i))
    pinned = [ex.stdout.strip().decode() for ex in out]
    assert all(p.startswith("[") and p.count(",") == 0 for p in pinned), pinned
    assert {int(p.strip("[]")) for p in pinned} <= set(cores)
    assert sorted(seen) == [0, 1, 2, 3]
    assert pool.concurrency == len(cores)


def test_free_mode_does_not_pin(warm):
    with SandboxPool(warm, concurrency=2) as pool:
        (ex,) = pool.run_many([RunRequest(command=[PY, "-c", AFFINITY])])
    assert ex.stdout.strip().decode() == str(sorted(os.sched_getaffinity(0)))


def test_bad_concurrency(warm):
    with pytest.raises(ConfigError):
        SandboxPool(warm, concurrency=0)


def test_request_round_trips_through_json():
    req = RunRequest(command=["x"], stdin=b"\xff\x00", files={"a": b"\x80"})
    assert RunRequest.model_validate_json(req.model_dump_json()) == req
