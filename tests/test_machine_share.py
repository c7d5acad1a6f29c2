"""The suite's `alone` lock (tests/helpers/machine_share.py): two processes posing as xdist
workers; while one holds the machine alone the other runs nothing, shared holders overlap, and
a worker waiting to run alone is not starved by the other's stream of shared tests, and a run of
alone tests on one worker holds the machine from the first to the last."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

HELPERS = Path(__file__).parent / "helpers"

#: A worker: runs `tests` ("alone"/"shared" names, each held 0.3 s) and logs start/end times.
WORKER = """
import glob, os, sys, time
sys.path.insert(0, sys.argv[1])
from machine_share import machine_share
log = open(sys.argv[2], "a", buffering=1)
# both workers up before either starts (a slow interpreter start would leave nothing to overlap)
open(sys.argv[2] + ".up", "w").close()
while len(glob.glob(os.path.join(os.path.dirname(sys.argv[2]), "*.up"))) < int(sys.argv[4]):
    time.sleep(0.01)
plan = sys.argv[3].split(",")
for k, kind in enumerate(plan):
    nxt = plan[k + 1] if k + 1 < len(plan) else ""
    with machine_share(kind == "alone", next_alone=nxt == "alone" and kind == "alone"):
        t0 = time.monotonic()
        time.sleep(0.3)
        log.write(f"{kind} {t0} {time.monotonic()}\\n")
"""


def _run_workers(tmp_path: Path, plans: list[str]) -> list[list[tuple[str, float, float]]]:
    # the lock files go to this test's folder, not /tmp (tempfile reads TMPDIR)
    env = {**os.environ, "PYTEST_XDIST_TESTRUNUID": uuid.uuid4().hex, "TMPDIR": str(tmp_path)}
    procs, logs = [], []
    for k, plan in enumerate(plans):
        log = tmp_path / f"gw{k}.log"
        logs.append(log)
        procs.append(subprocess.Popen(
            [sys.executable, "-c", WORKER, str(HELPERS), str(log), plan, str(len(plans))],
            env={**env, "PYTEST_XDIST_WORKER": f"gw{k}"}))  # fmt: skip
    for p in procs:
        assert p.wait(timeout=60) == 0
    assert len(list(tmp_path.glob("perfgym-tests-*"))) == 2  # the gate and the machine lock
    return [[(k, float(a), float(b)) for k, a, b in (line.split() for line in log.open())]
            for log in logs]  # fmt: skip


def _overlap(a: tuple[str, float, float], b: tuple[str, float, float]) -> bool:
    return a[1] < b[2] and b[1] < a[2]


def test_an_alone_test_never_overlaps_another_and_shared_ones_do(tmp_path: Path) -> None:
    first, second = _run_workers(tmp_path, ["shared,alone,shared,alone", "shared," * 7 + "shared"])
    for x in first:
        for y in second:
            if "alone" in (x[0], y[0]):
                assert not _overlap(x, y), (x, y)
    assert any(_overlap(x, y) for x in first for y in second if x[0] == y[0] == "shared")
    # not starved: the alone tests ran before the other worker's eight shared ones were done
    assert max(t[2] for t in first if t[0] == "alone") < max(t[2] for t in second)


def test_consecutive_alone_tests_keep_the_machine_between_them(tmp_path: Path) -> None:
    first, second = _run_workers(tmp_path, ["alone,alone,alone,shared", "shared," * 7 + "shared"])
    alone = [t for t in first if t[0] == "alone"]
    stretch = ("alone", alone[0][1], alone[-1][2])
    assert not any(_overlap(stretch, y) for y in second), "the other worker ran in between"
    # and the machine is given back after the stretch: shared tests of both overlap
    assert any(_overlap(first[-1], y) for y in second)


def test_without_xdist_nothing_is_locked(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env["TMPDIR"] = str(tmp_path)
    log = tmp_path / "solo.log"
    out = subprocess.run([sys.executable, "-c", WORKER, str(HELPERS), str(log), "alone", "1"],
                         env=env, timeout=60)  # fmt: skip
    assert out.returncode == 0 and log.read_text().startswith("alone ")
    assert not list(tmp_path.glob("perfgym-tests-*"))
