"""The depth draw both the tests' process and a workload's make at every entry into a
repository's code: the room a patch can count is spread alike from any caller's depth."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import perfgym.repos._inside as inside

PROBE = """
import json, sys
import call_depth as c
c.install()

def room(n=1):
    try:
        return room(n + 1)
    except RecursionError:
        return n

def at(depth):
    return at(depth - 1) if depth else [c.call(room) for _ in range(400)]

print(json.dumps({d: at(d) for d in (0, 70, 300)}))
"""


def test_the_room_inside_an_entry_does_not_depend_on_the_callers_depth() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=Path(inside.__file__).parent,
                         capture_output=True, text=True, check=True, timeout=120)  # fmt: skip
    from perfgym.repos._inside import call_depth as c

    rooms = json.loads(out.stdout)
    for depth, seen in rooms.items():
        # a uniform draw over SPREAD values: 400 of them miss either end by 40 with odds ~1e-14
        assert c.ROOM - 5 <= min(seen) <= c.ROOM + 40, (depth, min(seen))
        assert c.ROOM + c.SPREAD - 45 <= max(seen) < c.ROOM + c.SPREAD, (depth, max(seen))
    # what a patch counts 0, 70 or 300 frames down is one draw: medians within ~4 standard errors
    medians = [statistics.median(s) for s in rooms.values()]
    assert max(medians) - min(medians) < 100, medians


def test_an_entry_gets_its_arguments_result_and_exception() -> None:
    from perfgym.repos._inside import call_depth as c

    assert c.call(lambda a, b=0: a + b, 2, b=3) == 5
    try:
        c.call(int, "x")
    except ValueError:
        pass
    else:
        raise AssertionError("the exception did not come through")


ROOM_PACKAGE = """
def room(n=1):
    try:
        return room(n + 1)
    except RecursionError:
        return n


AT_IMPORT = room()
"""
ROOM_TESTS = """import unittest

import pytest

from pkg import AT_IMPORT, room

LOW, HIGH = {low}, {high}


@pytest.fixture
def in_fixture():
    return room()


def test_plain(in_fixture):
    assert LOW <= AT_IMPORT < HIGH, AT_IMPORT
    assert LOW <= in_fixture < HIGH, in_fixture
    assert LOW <= room() < HIGH, room()


class TestCase(unittest.TestCase):
    def test_method(self):
        assert LOW <= room() < HIGH, room()
"""


def test_every_entry_of_a_test_run_has_the_drawn_room() -> None:
    """Under the supervisor: the package's import, a fixture of the repository's, a test
    function and a unittest method each see room within the draw (pytest's own depth would
    leave about 70 frames less than the limit, far above it)."""
    from repo_cache import repo_cache_dir

    from perfgym.repos._inside import call_depth as c
    from perfgym.repos.outcomes import original_config, run_supervised

    tests = ROOM_TESTS.format(low=c.ROOM - 10, high=c.ROOM + c.SPREAD + 10)
    with repo_cache_dir("depth") as root:
        repo = Path(root) / "repo"
        for rel, text in {"pkg/__init__.py": ROOM_PACKAGE, "tests/test_room.py": tests}.items():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text(text)
        for dirpath, _dirs, _files in os.walk(root):
            os.chmod(dirpath, 0o755)
        run = run_supervised(repo, "python3 -m pytest -q -p no:cacheprovider tests",
                             timeout_s=120, memory_mb=1024, config=original_config(repo))  # fmt: skip
    assert run.passed and run.ran == 2, (run.problems, run.failed, run.output[-2000:])


CHUNK_PROBE = """
import json, resource
import call_depth as c
c.install()

def tiny(x):
    return x

def hot():
    for i in range(20000):
        tiny(i)

def plain(frames):  # padding with no fresh chunk: the entry as it was
    return plain(frames - 1) if frames else hot()

def faults(run, frames):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    run(frames)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

depths = range(0, 600)
print(json.dumps({"entry": max(faults(lambda f: c.call_at(f, f * 7 % c.IN_CHUNK, hot), d)
                                for d in depths),
                  "plain": max(faults(plain, d) for d in depths)}))
"""


def test_an_entry_never_straddles_a_data_stack_chunk() -> None:
    """CPython keeps frames in 16 KiB chunks, mapped when a call does not fit and unmapped when
    it returns: a hot loop's call straddling a chunk's end maps and unmaps one (a page fault)
    per call. Padded without a fresh chunk, some depth in 600 puts 20,000 calls across the
    end (textindex's setup ran 33-43x slower at 8 depths of 512); every entry starts a chunk
    of its own, so none does. Page faults, not time: a count a loaded machine cannot move."""
    out = subprocess.run([sys.executable, "-c", CHUNK_PROBE], cwd=Path(inside.__file__).parent,
                         capture_output=True, text=True, check=True, timeout=120)  # fmt: skip
    worst = json.loads(out.stdout)
    assert worst["plain"] >= 20000, worst  # the probe sees a straddle where there is one
    assert worst["entry"] < 1000, worst


PLACE_PROBE = """
import json, resource, statistics
import call_depth as c
c.install()

def frame_of(n):
    names = " = ".join(f"_{i}" for i in range(n))
    scope = {}
    exec(f"def g(x):\\n    if x is None:\\n        {names} = None\\n    return x\\n", scope)
    return scope["g"]

def slots_left():  # red team helper-121's measure: the largest frame a call makes without faults
    lo, hi = 1, 12000
    while hi - lo > 8:
        mid = (lo + hi) // 2
        g = frame_of(mid)
        g(0)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for i in range(100):
            g(i)
        if resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before >= 50:
            hi = mid
        else:
            lo = mid
    return lo

def through(n, fn):  # n frames of the caller's own between the entry and the code
    return through(n - 1, fn) if n else fn()

seen = {n: [c.call(through, n, slots_left) for _ in range(30)] for n in (2, 14)}
print(json.dumps(seen))
"""


def test_where_an_entry_starts_in_its_chunk_is_drawn() -> None:
    """A fresh chunk at a fixed place told the processes apart by the frames between the entry
    and the repository's code (pytest's import machinery against the runner's: helper-121
    counted 3,617 slots left at every import under pytest, 3,709 in every workload). The place
    is drawn: the slots left spread far wider than 12 frames of difference move them."""
    out = subprocess.run([sys.executable, "-c", PLACE_PROBE], cwd=Path(inside.__file__).parent,
                         capture_output=True, text=True, check=True, timeout=240)  # fmt: skip
    seen = {int(k): v for k, v in json.loads(out.stdout).items()}
    a, b = seen[2], seen[14]
    # ~18 slots a frame: 12 frames move the place by ~220 slots; each draw spreads it over ~3,000
    assert min(max(a) - min(a), max(b) - min(b)) > 1500, seen
    overlap = min(max(a), max(b)) - max(min(a), min(b))
    assert overlap > 0.6 * min(max(a) - min(a), max(b) - min(b)), seen
