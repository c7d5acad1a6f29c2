"""A test batch's asking parent and answering child share one core, and a pool spreads its
workers' home cores so two batches at once do not share one while another core idles."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import perfgym.sandbox._inside as inside
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.pyworker import PythonWorkerPool

sys.path.insert(0, str(Path(inside.__file__).parent))  # its siblings import it by name
import pyworker_batch  # noqa: E402

# Compares wall-clock times or loads cores on purpose: no other test runs beside it.
pytestmark = pytest.mark.alone

CORES = sorted(os.sched_getaffinity(0))


def test_share_a_core_pins_and_says_what_to_restore() -> None:
    before = os.sched_getaffinity(0)
    try:
        had = pyworker_batch._share_a_core(CORES[-1])
        assert had == before and os.sched_getaffinity(0) == {CORES[-1]}
    finally:
        os.sched_setaffinity(0, before)
    assert pyworker_batch._share_a_core(10_000) is not None  # not ours: the current core
    os.sched_setaffinity(0, before)


@pytest.mark.skipif(len(CORES) < 2, reason="needs two cores")
def test_two_workers_taken_at_once_have_different_home_cores() -> None:
    pool = PythonWorkerPool(2 * len(CORES))
    try:
        a, b = pool._take(), pool._take()
        assert a.home_core != b.home_core
        pool._give(a)
        c = pool._take()  # b's core is busy: the next is on another
        assert c.home_core != b.home_core
    finally:
        pool.close()


def test_a_batch_answers_in_order_and_the_worker_keeps_its_affinity_after() -> None:
    lim = Limits()
    with PythonWorkerPool(1) as pool:
        r = pool.batch("def f(x):\n    return x * 2\n", "f", [([i], lim) for i in range(300)], lim)
        assert [c.value for c in r.cases] == [2 * i for i in range(300)]
        # a program run afterwards may still use every core the worker had
        out = pool.run_program("import os\nprint(len(os.sched_getaffinity(0)))\n", limits=lim)
        assert out.stdout.strip() == str(len(CORES)).encode()
