"""Benches can fail: each prints its targets as met or MISSED and exits non-zero on a miss.

The benches stay out of CI (minutes each, an idle machine wanted); this checks their shared
plumbing, `bench/targets.py`, and that every bench script reports through it.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.fixture(scope="module")
def targets() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_targets", BENCH / "targets.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_targets"] = module  # dataclasses resolve the module by name
    spec.loader.exec_module(module)
    return module


def test_a_miss_exits_non_zero_and_is_printed(
    targets: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    met = targets.at_most("overhead", 1.12, 1.3, "x")
    missed = targets.at_least("calls/s", 958, 1000)
    assert targets.report([met]) == 0
    assert targets.report([met, missed]) == 1
    out = capsys.readouterr().out
    assert "TARGET MISSED calls/s: 958 (target >= 1000)" in out
    assert "TARGETS 1 of 2 met" in out


def test_what_was_not_measured_is_missed_never_met(targets: ModuleType) -> None:
    for value in (None, math.nan):
        assert not targets.at_most("x", value, 1.0).met
        assert not targets.at_least("x", value, 1.0).met
    assert not targets.holds("no decision changed", False).met
    assert targets.holds("no decision changed", True).met
    assert targets.report([]) == 1  # a bench that checked nothing has not passed


def test_every_bench_reports_its_targets_through_its_exit_status() -> None:
    scripts = sorted(p for p in BENCH.glob("*.py") if p.name != "targets.py")
    assert scripts
    for path in scripts:
        text = path.read_text()
        assert "from targets import" in text, f"{path.name} prints no targets"
        assert 'if __name__ == "__main__":\n    ' in text
        assert "sys.exit(main())" in text, f"{path.name} drops its targets' exit status"
