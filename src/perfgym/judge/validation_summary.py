"""The summary of a validation run: its wall time against the floor (the runs' own core-seconds
over the cores), the rate and the time the whole population would take, a per-language table
and the agreement with the published orderings where they are clear (`agreement.CLEAR_RATIO`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from perfgym.judge.agreement import CLEAR_RATIO, Direction, call_of, capped, clear
from perfgym.judge.validate import TaskValidation
from perfgym.judge.verdict import Stage


class LanguageRow(BaseModel):
    """One language's counts (or every language's: `language` 'all')."""

    model_config = ConfigDict(extra="forbid")

    language: str
    tasks: int = 0
    reference_ok: int = 0
    baseline_ok: int = 0
    agree: int = 0
    disagree: int = 0
    undecided: int = 0
    capped: int = Field(0, description="Tasks that held fewer cores than they want.")
    reasons: dict[str, int] = Field(default_factory=dict, description="Why undecided: count.")


class Clear(BaseModel):
    """The agreement over the tasks whose published ordering is clear."""

    model_config = ConfigDict(extra="forbid")

    threshold: float
    tasks: int
    agree: int
    disagree: int
    undecided: int
    decided: float | None = Field(None, description="(agree + disagree) / tasks.")
    reasons: dict[str, int] = Field(default_factory=dict)
    target_met: bool = Field(description="No disagreement and at least 90 % decided.")


class Disagreement(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str
    language: str
    published: float = Field(description="Published Tb/Tr.")
    measured: float | None = Field(description="Tb/Tr measured here.")
    p_value: float | None = None
    clear: bool = False
    capped: bool = False


class Reruns(BaseModel):
    """The rows validated again because their first session was undecided (`validate_rerun`)."""

    model_config = ConfigDict(extra="forbid")

    tasks: int = 0
    decided: int = Field(0, description="Of them, decided on a rerun.")
    at_repeats: dict[int, int] = Field(
        default_factory=dict, description="Repeats of the kept rerun: rows decided there."
    )
    wall_s: float = Field(0.0, description="The reruns' wall time (summed over the rows).")


class ValidationSummary(BaseModel):
    """What `perfgym validate` prints under its table, and gives whole in `--json`."""

    model_config = ConfigDict(extra="forbid")

    tasks: int
    ran: int = Field(description="Rows validated by this run (the others were reused).")
    wall_s: float = Field(description="This run's wall time.")
    cores: int = Field(description="Cores the runs could use (every node's, on Ray).")
    floor_s: float = Field(description="Core-seconds of this run's sandboxed runs / cores.")
    over_floor: float | None = Field(None, description="wall_s / floor_s.")
    tasks_per_min: float | None = None
    population: int | None = Field(
        None, description="Tasks the run was drawn from (a --sample's population)."
    )
    extrapolated_s: float | None = Field(
        None, description="population / the rate: the whole population's wall time at this rate."
    )
    languages: list[LanguageRow]
    total: LanguageRow
    clear: Clear
    clear_all_cores: Clear = Field(description="`clear` without the core-capped tasks.")
    disagreements: list[Disagreement]
    reruns: Reruns = Field(default_factory=Reruns)


def summarise(rows: Sequence[TaskValidation], *, ran: Sequence[TaskValidation], wall_s: float,
              cores: int, population: int | None = None,
              threshold: float = CLEAR_RATIO) -> ValidationSummary:  # fmt: skip
    """`rows`: every row of the run (reused ones too); `ran`: those validated by this run, whose
    runs the floor and the rate count."""
    by: dict[str, LanguageRow] = {}
    total = LanguageRow(language="all")
    for r in rows:
        for lr in (by.setdefault(r.language, LanguageRow(language=r.language)), total):
            _count(lr, r)
    floor = sum(c.run_s for r in ran for c in r.solutions) / max(cores, 1)
    rate = len(ran) / (wall_s / 60) if ran and wall_s > 0 else None
    return ValidationSummary(
        tasks=len(rows), ran=len(ran), wall_s=wall_s, cores=cores, floor_s=floor,
        over_floor=wall_s / floor if floor > 0 else None, tasks_per_min=rate,
        population=population,
        extrapolated_s=population / rate * 60 if rate and population is not None else None,
        languages=[by[k] for k in sorted(by)], total=total,
        clear=_clear([r for r in rows if clear(r, threshold)], threshold),
        clear_all_cores=_clear([r for r in rows if clear(r, threshold) and not capped(r)],
                               threshold),
        disagreements=[_disagreement(r, threshold) for r in rows
                       if call_of(r)[0] is Direction.DISAGREE],
        reruns=_reruns(rows),
    )  # fmt: skip


def _reruns(rows: Sequence[TaskValidation]) -> Reruns:
    out = Reruns()
    for r in rows:
        if r.rerun is None:
            continue
        out.tasks += 1
        out.wall_s += r.rerun.wall_s
        if r.rerun.decided:
            out.decided += 1
            at = r.rerun.repeats[-1]
            out.at_repeats[at] = out.at_repeats.get(at, 0) + 1
    return out


def _count(lr: LanguageRow, r: TaskValidation) -> None:
    lr.tasks += 1
    stages = [c.stage for c in r.solutions]
    lr.baseline_ok += len(stages) > 0 and stages[0] is Stage.OK
    lr.reference_ok += len(stages) > 1 and stages[1] is Stage.OK
    lr.capped += capped(r)
    call, why = call_of(r)
    setattr(lr, call.value, getattr(lr, call.value) + 1)
    if why:
        lr.reasons[why] = lr.reasons.get(why, 0) + 1


def _clear(rows: Sequence[TaskValidation], threshold: float) -> Clear:
    calls = [call_of(r) for r in rows]
    n = Counter(c.value for c, _ in calls)
    decided = n["agree"] + n["disagree"]
    share = decided / len(rows) if rows else None
    return Clear(threshold=threshold, tasks=len(rows), agree=n["agree"], disagree=n["disagree"],
                 undecided=n["undecided"], decided=share,
                 reasons=dict(Counter(why for _, why in calls if why)),
                 target_met=bool(rows) and n["disagree"] == 0 and (share or 0) >= 0.9)  # fmt: skip


def _disagreement(r: TaskValidation, threshold: float) -> Disagreement:
    assert r.published_speedup is not None  # a disagreement has a published ordering
    p = r.comparison.p_value if r.comparison is not None else None
    return Disagreement(task_id=r.task_id, language=r.language, published=r.published_speedup,
                        measured=r.speedup, p_value=p, clear=clear(r, threshold),
                        capped=capped(r))  # fmt: skip
