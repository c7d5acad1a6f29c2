"""The depth draw both the tests' process and a workload's make at every entry into a
repository's code: the room a patch can count is spread alike from any caller's depth."""

from __future__ import annotations

import json
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
