"""Outcome transitions between two result sets on the same tasks (RLPF Table 12).

For a reference run A (e.g. the base model) and a run B (e.g. RLPF), counted over the tasks
both ran, one result per task:

    fail→correct   A not correct, B correct
    notfast→FBR    A not faster than baseline, B faster (FBR as in `perfcodebench`, under
                   `decision`: the comparison's significant one by default)
    notref→RBR     A not reference-level, B reference-level
    lost correct   A correct, B not correct

The reverse counts (lost FBR, lost RBR) are kept too, so that for every level
count_B = count_A + gained − lost holds and can be checked.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Verdict
from perfgym.metrics._inputs import ResultsPolicy, group_results
from perfgym.metrics.perfcodebench import SampleOutcome, sample_outcome
from perfgym.timing.decision import Decision


class Transitions(BaseModel):
    """Counts of tasks changing outcome from run A to run B (Table 12's columns and more)."""

    model_config = ConfigDict(extra="forbid")

    model_a: str
    model_b: str
    n_tasks: int = Field(description="Tasks present in both runs (the denominator of every count).")
    fail_to_correct: int
    notfast_to_fbr: int
    notref_to_rbr: int
    lost_correct: int
    lost_fbr: int
    lost_rbr: int
    counts_a: dict[str, int] = Field(description="correct/fbr/rbr task counts of run A.")
    counts_b: dict[str, int] = Field(description="correct/fbr/rbr task counts of run B.")
    tasks: dict[str, list[str]] = Field(
        default_factory=dict, description="Transition name -> task ids, for inspection."
    )
    notes: list[str] = Field(default_factory=list)


def transitions(
    before: Sequence[Verdict],
    after: Sequence[Verdict],
    policy: ResultsPolicy | None = None,
    decision: Decision = "significant",
) -> Transitions:
    """Count outcome transitions from `before` (run A) to `after` (run B).

    Both runs must cover the same task set; a difference is refused with the missing ids
    rather than silently intersected, since Table 12 compares runs "on the same tasks".
    """
    policy = policy or ResultsPolicy()
    a = group_results(before, "transitions (run A)", policy, one_per_task=True)
    b = group_results(after, "transitions (run B)", policy, one_per_task=True)
    if a.suite and b.suite and a.suite != b.suite:
        raise ConfigError(f"transitions: runs come from different suites {a.suite!r}, {b.suite!r}")
    only_a = sorted(set(a.tasks) - set(b.tasks))
    only_b = sorted(set(b.tasks) - set(a.tasks))
    if only_a or only_b:
        raise ConfigError(
            f"transitions: the runs cover different tasks (only in A: {only_a[:5]}, only in "
            f"B: {only_b[:5]}); compare runs on the same task set"
        )
    ids = sorted(a.tasks)
    oa = {t: sample_outcome(a.tasks[t][0], decision) for t in ids}
    ob = {t: sample_outcome(b.tasks[t][0], decision) for t in ids}
    sets: dict[str, list[str]] = {
        "fail_to_correct": [t for t in ids if not oa[t].correct and ob[t].correct],
        "notfast_to_fbr": [t for t in ids if not oa[t].fbr and ob[t].fbr],
        "notref_to_rbr": [t for t in ids if not oa[t].rbr and ob[t].rbr],
        "lost_correct": [t for t in ids if oa[t].correct and not ob[t].correct],
        "lost_fbr": [t for t in ids if oa[t].fbr and not ob[t].fbr],
        "lost_rbr": [t for t in ids if oa[t].rbr and not ob[t].rbr],
    }

    def counts(o: dict[str, SampleOutcome]) -> dict[str, int]:
        return {
            level: sum(1 for t in ids if getattr(o[t], level))
            for level in ("correct", "fbr", "rbr")
        }

    return Transitions(
        model_a=a.model,
        model_b=b.model,
        n_tasks=len(ids),
        counts_a=counts(oa),
        counts_b=counts(ob),
        tasks=sets,
        notes=[*a.notes, *b.notes],
        **{name: len(v) for name, v in sets.items()},
    )
