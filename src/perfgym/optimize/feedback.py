"""What the model is told about a program it revises: its measured performance or its failure."""

from __future__ import annotations

from dataclasses import dataclass

from perfgym.judge.hidden import HIDDEN_PREFIX, is_hidden
from perfgym.judge.verdict import Verdict
from perfgym.optimize.objective import Objective, value_of


@dataclass(frozen=True)
class Feedback:
    """Afterburner's four numbers of a program (relative to the baseline where measured), or
    the stage a failed program reached and its first failing message."""

    passed: bool
    time_s: float | None = None
    memory_mb: float | None = None
    integral_mb_s: float | None = None
    time_vs_baseline: float | None = None
    memory_vs_baseline: float | None = None
    integral_vs_baseline: float | None = None
    stage: str = "OK"
    message: str = ""
    test_id: str = ""

    def as_fields(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _rel(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b <= 0 else a / b


#: What feedback says of a failure on a hidden workload (its id, input, expected and actual
#: output, and the run's stderr stay with the judge: the decision is made on them).
HIDDEN_FAILURE = (
    "The program failed on a hidden workload (an input like the task's performance workloads, "
    "drawn fresh each round and not shown). It passed every visible test."
)
#: The stage feedback gives such a failure: one word for every kind (wrong output, crash,
#: timeout, memory), so the kind carries no bits of the hidden input out.
HIDDEN_STAGE = "hidden"
#: The test id feedback gives such a failure.
HIDDEN_TEST_ID = "hidden workload"


def of_verdict(v: Verdict) -> Feedback:
    """The feedback of a judged program. It quotes visible inputs only: a failure on a hidden
    workload (`perfgym.judge.hidden`) is told as such, with the stage and kind of failure."""
    if not v.correct:
        first = next((t for t in v.tests if not t.passed), None)
        if first is not None and is_hidden(first.id):
            return Feedback(passed=False, stage=HIDDEN_STAGE, message=HIDDEN_FAILURE,
                            test_id=HIDDEN_TEST_ID)  # fmt: skip
        message = (first.message if first and first.message else v.reason or v.detail) or ""
        if v.stage.value == "NC" and v.build_log:
            message = v.build_log
        if first is None and HIDDEN_PREFIX in message:
            message = v.detail  # a failure named by no test, whose reason names a hidden case
        return Feedback(passed=False, stage=v.stage.value, message=message,
                        test_id=first.id if first is not None else "")  # fmt: skip
    vals: dict[Objective, float | None] = {
        o: value_of(v.candidate, o) for o in ("time", "memory", "integral")
    }
    base: dict[Objective, float | None] = {
        o: value_of(v.baseline, o) for o in ("time", "memory", "integral")
    }
    return Feedback(passed=True, time_s=vals["time"], memory_mb=vals["memory"],
                    integral_mb_s=vals["integral"],
                    time_vs_baseline=_rel(vals["time"], base["time"]),
                    memory_vs_baseline=_rel(vals["memory"], base["memory"]),
                    integral_vs_baseline=_rel(vals["integral"], base["integral"]))  # fmt: skip


#: The baseline before anything was measured: passing, and 1.0x itself.
BASELINE = Feedback(passed=True, time_vs_baseline=1.0, memory_vs_baseline=1.0,
                    integral_vs_baseline=1.0)  # fmt: skip
