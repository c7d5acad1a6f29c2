"""The test supervisor's verdict from its records and pytest's own tally: a real failure is
reported as the failure it is (red team helper-81: it read "pytest's own summary disagrees
with the records" though both said 1 failed), and records rewritten to passed while pytest
counted a failure still fail the run."""

from __future__ import annotations

import json

from perfgym.repos._inside import test_supervisor as supervisor


def _lines(outcomes: dict[str, str]) -> list[bytes]:
    recs: list[dict[str, object]] = [{"k": "hello", "pid": 1},
                                     {"k": "collected", "ids": list(outcomes)}]  # fmt: skip
    for tid, outcome in outcomes.items():
        recs += [{"k": "start", "id": tid},
                 {"k": "report", "id": tid, "when": "call", "outcome": outcome},
                 {"k": "finish", "id": tid}]  # fmt: skip
    recs.append({"k": "end", "status": 1 if "failed" in outcomes.values() else 0})
    return [json.dumps(r).encode() for r in recs]


OUTCOMES = {"t.py::a": "passed", "t.py::b": "failed", "t.py::c": "passed"}


def test_a_real_failure_is_a_failure_not_a_disagreement() -> None:
    v = supervisor.judge(_lines(OUTCOMES), 1, True, None, output=b"1 failed, 2 passed in 0.1s\n")
    assert not v["passed"] and v["failed"] == ["t.py::b"]
    assert v["problems"] == ["pytest exited 1"], v["problems"]


def test_records_rewritten_to_passed_disagree_with_pytests_tally() -> None:
    forged = {k: "passed" for k in OUTCOMES}
    v = supervisor.judge(_lines(forged), 0, True, None, output=b"1 failed, 2 passed in 0.1s\n")
    assert not v["passed"] and v["failed"] == []
    assert any("disagrees with the records" in p for p in v["problems"]), v["problems"]


def test_a_clean_run_passes() -> None:
    clean = {k: "passed" for k in OUTCOMES}
    v = supervisor.judge(_lines(clean), 0, True, None, output=b"3 passed in 0.1s\n")
    assert v["passed"] and v["problems"] == []
