"""A call whose self-report the outside estimate overruled is taken again, once: noise is not
charged to an honest sample, a forged report still is, and no run's output goes unjudged."""

from __future__ import annotations

import pytest

from perfgym.enamel import sample as sample_module
from perfgym.enamel.sample import MISMATCH_RETRIED, evaluate_sample
from perfgym.enamel.timer import MISMATCH
from perfgym.sandbox.execution import Status
from perfgym.sandbox.pyworker import CallResult

#: The reference's answer, written by the program itself with a forged 2 us report, and the
#: process gone before it says "done" (the worker counts the call to its exit).
FORGE = """
import json as _json, os as _os, sys as _sys
_real = separate_paren_groups
def separate_paren_groups(paren_string):
    value = _real(paren_string)
    frame = _sys._getframe()
    while frame is not None and "res_fd" not in frame.f_locals:
        frame = frame.f_back
    import valuecodec
    _os.pwrite(frame.f_locals["res_fd"], _json.dumps({"ok": True,
               "value": valuecodec.encode(value), "reported_call_ns": 2000,
               "reported_call_cpu_ns": 2000, "reported_call_own_ns": 2000}).encode(), 0)
    _os._exit(0)
"""


def _scripted(monkeypatch, results: list[CallResult]) -> list[CallResult]:
    """`sample.call` replaced by one that hands out `results` in order (the calls' outcomes
    fixed, so that the rule is tested on exactly the runs it must weigh)."""
    handed: list[CallResult] = []

    def fake(workers, task, program, case, limits):  # noqa: ANN001, ANN202
        handed.append(results[len(handed)])
        return handed[-1]

    monkeypatch.setattr(sample_module, "call", fake)
    return handed


def _run(cpu: float, report: float, value: object) -> CallResult:
    return CallResult(status=Status.OK, wall_s=0.05, reported_call_s=report,
                      program_cpu_s=cpu, value=value)  # fmt: skip


def test_a_spike_on_one_run_is_taken_again_and_the_clean_time_stands(task, ref, monkeypatch):
    case = ref.levels[0][0]
    right = ref.expected[case.id]
    handed = _scripted(monkeypatch, [_run(0.010, 0.001, right), _run(0.0011, 0.001, right)])
    flags: list[str] = []
    r, t = sample_module._timed_call(task, ref, "", case, None, None, flags)
    assert len(handed) == 2 and t == pytest.approx(0.001)
    assert flags == [MISMATCH_RETRIED], flags  # the time that stands was not overruled


def test_a_report_overruled_twice_keeps_the_smaller_estimate(task, ref, monkeypatch):
    case = ref.levels[0][0]
    right, gap = ref.expected[case.id], ref.gap_s.get(case.id) or 0.0
    _scripted(monkeypatch, [_run(0.030, 0.0001, right), _run(0.020, 0.0001, right)])
    flags: list[str] = []
    _, t = sample_module._timed_call(task, ref, "", case, None, None, flags)
    assert t >= 0.020 - gap - 0.001 and t < 0.021, t  # the estimate, never the forged report
    assert MISMATCH in flags and MISMATCH_RETRIED in flags


def test_a_wrong_output_on_the_run_whose_time_was_not_taken_is_still_wrong(task, ref, monkeypatch):
    """A program that answers at random (a fast wrong answer behind a forged report, or a slow
    right one) must not have its wrong run hidden by the retry that took the other's time."""
    case = ref.levels[0][0]
    right = ref.expected[case.id]
    for order in ([_run(0.03, 0.0001, right), _run(0.0005, 0.0004, ["junk"])],
                  [_run(0.03, 0.0001, ["junk"]), _run(0.0005, 0.0004, right)]):  # fmt: skip
        _scripted(monkeypatch, order)
        r, _ = sample_module._timed_call(task, ref, "", case, None, None, [])
        assert r.value == ["junk"], order


def test_a_failed_retry_fails_the_call(task, ref, monkeypatch):
    case = ref.levels[0][0]
    failed = CallResult(status=Status.RUNTIME_ERROR, wall_s=0.01, error="ValueError: no")
    _scripted(monkeypatch, [_run(0.03, 0.0001, ref.expected[case.id]), failed])
    r, t = sample_module._timed_call(task, ref, "", case, None, None, [])
    assert r.status is Status.RUNTIME_ERROR and t is None


def test_a_forged_self_report_is_overruled_on_the_retry_too(task, ref, workers):
    """The real worker: the reference behind a forged 2 us report is overruled on its first
    run and on its retry, and its levels are timed as the reference's are, not at 2 us."""
    honest = evaluate_sample(task, ref, task.reference.source, workers, repeats=2)
    forged = evaluate_sample(task, ref, task.reference.source + FORGE, workers, repeats=2)
    assert honest.sample.correct and forged.sample.correct, (honest.stopped, forged.stopped)
    assert MISMATCH in forged.flags and MISMATCH_RETRIED in forged.flags, forged.flags
    h, f = honest.sample.level_times_s, forged.sample.level_times_s
    assert sum(f) >= 0.5 * sum(h), (h, f)  # type: ignore[arg-type]
