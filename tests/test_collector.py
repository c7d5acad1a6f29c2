"""The garbage collector's pace in perfgym's own processes: full collections 100 middle ones
apart (a HumanEval+ run's host spent 2.0 of its 8.1 CPU-seconds in 12 full collections)."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from perfgym.collector import FULL_EVERY, pace_for_long_runs


@pytest.fixture
def threshold():
    had = gc.get_threshold()
    yield
    gc.set_threshold(*had)


def test_full_collections_are_spaced_and_the_young_ones_kept(threshold) -> None:
    gc.set_threshold(700, 10, 10)
    pace_for_long_runs()
    assert gc.get_threshold() == (700, 10, FULL_EVERY)
    assert gc.isenabled()


def test_a_slower_pace_the_owner_chose_is_kept(threshold) -> None:
    gc.set_threshold(5000, 20, 1000)
    pace_for_long_runs()
    assert gc.get_threshold() == (5000, 20, 1000)


def _full_threshold_at_exit(entry: str) -> str:
    code = ("import atexit, gc, sys\n"
            "atexit.register(lambda: print('THRESHOLD', gc.get_threshold()[2]))\n"
            f"{entry}\n")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120).stdout  # fmt: skip
    return out.splitlines()[-1] if out else ""


def test_the_cli_runs_at_that_pace() -> None:
    entry = "from perfgym.cli import main; sys.argv = ['perfgym', '--help']; main()"
    assert _full_threshold_at_exit(entry) == f"THRESHOLD {FULL_EVERY}"


def test_a_program_that_imports_perfgym_keeps_its_own_pace() -> None:
    """A trainer importing perfgym (the library, the rewards) keeps Python's own setting."""
    assert _full_threshold_at_exit("import perfgym, perfgym.rewards") == \
        _full_threshold_at_exit("pass")
