"""Agreement of a model's judged candidates with its published results (PerfCodeBench's
`candidate/<model>/eval_result.json`): correct here against `ok` there, and faster than the
baseline here (the judge's significant decision against the baseline measured beside it)
against faster there (the published medians, Tc < Tb, as the benchmark counts)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from perfgym.judge.agreement import Direction
from perfgym.judge.verdict import Verdict
from perfgym.tasks.eval_results import PublishedCandidate
from perfgym.tasks.task import StoredMeasurement, StoredStatus
from perfgym.timing.decision import SpeedOutcome, speed_call


class CandidateCall(BaseModel):
    """One task: this run and the published result, side by side."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    stage: str = Field(description="This run's stage (OK, WO, NR, ...).")
    published_status: str | None = Field(description="The published candidate's status.")
    correct: Direction | None = Field(
        None, description="Correct here against ok there (None: nothing published)."
    )
    faster_here: str | None = Field(
        None, description="faster / slower / tie against the baseline (None: not timed here)."
    )
    published_ratio: float | None = Field(None, description="Published Tc/Tb.")
    ratio_here: float | None = Field(None, description="Tc/Tb measured here.")
    faster: Direction | None = Field(
        None, description="Faster than the baseline here against there (both correct only)."
    )
    why: str = Field("", description="Why `faster` is undecided or absent.")


class CandidateAgreement(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str
    tasks: int
    correct: dict[str, int]
    faster: dict[str, int]
    undecided: dict[str, int] = Field(default_factory=dict, description="Why, for `faster`.")
    calls: list[CandidateCall]

    @property
    def disagreements(self) -> list[CandidateCall]:
        return [c for c in self.calls
                if Direction.DISAGREE in (c.correct, c.faster)]  # fmt: skip


def _ok(m: StoredMeasurement | None) -> bool:
    return m is not None and m.status == StoredStatus.OK and m.all_ok is not False


def candidate_call(v: Verdict, pub: PublishedCandidate | None) -> CandidateCall:
    """One verdict against the model's published result of the same task."""
    cand = pub.candidate if pub is not None else None
    call = CandidateCall(task_id=v.task_id, stage=v.stage.value,
                         published_status=cand.status if cand is not None else None)  # fmt: skip
    if cand is None or v.infra_error:
        call.why = "an infrastructure failure here" if v.infra_error else "nothing published"
        return call
    correct_there = _ok(cand)
    call.correct = Direction.AGREE if v.correct == correct_there else Direction.DISAGREE
    base = pub.baseline if pub is not None else None
    if _ok(cand) and _ok(base) and cand.median_s and base is not None and base.median_s:
        call.published_ratio = cand.median_s / base.median_s
    sc = speed_call(v.candidate, v.baseline, same_source="baseline" in v.same_source)
    if sc is not None:
        call.faster_here, call.ratio_here = sc.outcome, sc.ratio
    if not (v.correct and correct_there):
        call.why = "not correct on both sides"
    elif call.published_ratio is None:
        call.why = "no published baseline time"
    elif sc is None:
        t = v.candidate
        call.why = "not timed here" if t is None or t.ok else f"timing {t.status.value} here"
    elif sc.outcome == SpeedOutcome.TIE:
        call.faster, call.why = Direction.UNDECIDED, "within noise"
    else:
        call.faster = (Direction.AGREE if (sc.outcome == SpeedOutcome.FASTER) == (call.published_ratio < 1)
                       else Direction.DISAGREE)  # fmt: skip
    return call


def candidate_agreement(model: str, verdicts: Sequence[Verdict],
                        published: dict[str, PublishedCandidate]) -> CandidateAgreement:  # fmt: skip
    """`published`: task id -> the model's published candidate of that task."""
    calls = [candidate_call(v, published.get(v.task_id)) for v in verdicts]

    def counts(key: str) -> dict[str, int]:
        c = Counter(getattr(x, key).value for x in calls if getattr(x, key) is not None)
        return {d.value: c.get(d.value, 0) for d in Direction if d is not Direction.UNDECIDED
                or key == "faster"}  # fmt: skip

    undecided = Counter(c.why for c in calls if c.faster is not Direction.AGREE
                        and c.faster is not Direction.DISAGREE and c.why)  # fmt: skip
    return CandidateAgreement(model=model, tasks=len(calls), correct=counts("correct"),
                              faster=counts("faster"), undecided=dict(undecided),
                              calls=calls)  # fmt: skip
