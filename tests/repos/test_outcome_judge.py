"""The test supervisor's verdict on record streams: what a forged, cut or reordered stream gives."""

from __future__ import annotations

import importlib.util
import json

from perfgym.repos import outcomes

_spec = importlib.util.spec_from_file_location("sup", outcomes._INSIDE / "test_supervisor.py")
assert _spec and _spec.loader
sup = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sup)

A, B = "tests/t.py::a", "tests/t.py::b"


def _rec(**r: object) -> bytes:
    return json.dumps(r).encode()


def _test(tid: str, outcome: str = "passed") -> list[bytes]:
    return [_rec(k="start", id=tid), _rec(k="report", id=tid, when="setup", outcome="passed"),
            _rec(k="report", id=tid, when="call", outcome=outcome), _rec(k="finish", id=tid)]  # fmt: skip


def _session(*tests: list[bytes], status: int = 0) -> list[bytes]:
    body = [r for t in tests for r in t]
    return [_rec(k="hello", pid=1), _rec(k="collected", ids=[A, B]), *body, _rec(k="end", status=status)]  # fmt: skip


def test_a_clean_session_passes() -> None:
    v = sup.judge(_session(_test(A), _test(B)), 0, True, [A, B])
    assert v["passed"] and v["ran"] == 2 and not v["problems"]


def test_a_failure_then_forged_pass_is_a_failure() -> None:
    lines = _session(_test(A, "failed"), _test(B)) + _test(A)
    v = sup.judge(lines, 0, True, [A, B])
    assert not v["passed"] and any("after the end" in p for p in v["problems"])


def test_status_disagreeing_with_the_stream_fails() -> None:
    v = sup.judge(_session(_test(A, "failed"), _test(B), status=1), 0, True, [A, B])
    assert not v["passed"] and any("exited 0" in p for p in v["problems"])


def test_process_ended_inside_a_test_fails() -> None:
    lines = [_rec(k="hello", pid=1), _rec(k="collected", ids=[A, B]), *_test(A)[:2]]
    v = sup.judge(lines, 0, True, [A, B])
    assert not v["passed"] and any("never finished" in p for p in v["problems"])


def test_interleaved_and_second_hello_fail() -> None:
    lines = _session(_test(A)[:2] + _test(B), _test(A)[2:])
    assert not sup.judge(lines, 0, True, [A, B])["passed"]
    again = [_rec(k="hello", pid=2), *_session(_test(A), _test(B))]
    assert any("second hello" in p for p in sup.judge(again, 0, True, [A, B])["problems"])


def test_skipped_expected_tests_and_zero_run_fail() -> None:
    v = sup.judge(_session(_test(A, "skipped"), _test(B, "skipped")), 0, True, [A, B])
    assert not v["passed"] and "no test ran" in v["problems"]
    assert not sup.judge(_session(), 0, True, None)["passed"]


def test_channel_held_open_and_changed_conftest_fail() -> None:
    assert not sup.judge(_session(_test(A), _test(B)), 0, False, [A, B])["passed"]
    lines = _session(_test(A), _test(B))
    lines.insert(1, _rec(k="plugin", path="tests/conftest.py", sha="x"))
    v = sup.judge(lines, 0, True, [A, B], {"tests/conftest.py": "y"})
    assert not v["passed"] and any("conftest" in p for p in v["problems"])
    assert sup.judge(lines, 0, True, [A, B], {"tests/conftest.py": "x"})["passed"]


def test_a_selected_stable_test_that_skips_fails() -> None:
    lines = _session(_test(A), _test(B, "skipped"))
    assert sup.judge(lines, 0, True, None)["passed"]  # no baseline: a skip is a skip
    v = sup.judge(lines, 0, True, None, None, [A, B])
    assert not v["passed"] and B in v["missing"]
