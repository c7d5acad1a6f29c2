"""The validation summary (pure, from rows): the per-language calls and why a task is
undecided, the agreement where the published ordering is clear, the floor and the rate."""

from __future__ import annotations

import pytest

from perfgym.judge.agreement import Direction, call_of, clear
from perfgym.judge.validate import SolutionCheck, TaskValidation
from perfgym.judge.validation_summary import summarise
from perfgym.judge.verdict import Stage
from perfgym.timing.compare import Comparison


def _row(tid: str, lang: str, published: float | None, faster: str | None, *,
         base: Stage = Stage.OK, ref: Stage = Stage.OK, run_s: float = 3.0,
         cores: int | None = 1, wanted: int = 1) -> TaskValidation:  # fmt: skip
    sols = [SolutionCheck(label="baseline", stage=base, run_s=run_s),
            SolutionCheck(label="reference", stage=ref, run_s=run_s)]  # fmt: skip
    comp = None
    if faster is not None:
        comp = Comparison(ratio=0.5 if faster == "a" else 2.0, significant=faster != "neither",
                          faster=faster, n_a=5, n_b=5, p_value=0.01)  # fmt: skip
    row = TaskValidation(task_id=tid, language=lang, family="f", split="test", solutions=sols,
                         comparison=comp, published_speedup=published, cores=cores,
                         cores_wanted=wanted,
                         speedup=None if comp is None else 1 / comp.ratio)  # fmt: skip
    if published is not None and published != 1.0:
        untimed = faster is None or faster == "neither"
        row.direction = (Direction.UNDECIDED if untimed else
                         Direction.AGREE if (faster == "a") == (published > 1) else
                         Direction.DISAGREE)  # fmt: skip
    return row


ROWS = [
    _row("c1", "c", 4.0, "a"),  # agree, clear
    _row("c2", "c", 2.0, "b"),  # disagree, clear
    _row("c3", "c", 1.2, "neither"),  # within noise, not clear
    _row("p1", "python", 3.0, None, base=Stage.NR),  # baseline failed, clear
    _row("p2", "python", None, "a"),  # no published ratio
    _row("p3", "python", 0.5, "b"),  # agree (the reference published slower), clear
    _row("m1", "cpp", 8.0, "neither", cores=2, wanted=4),  # within noise on fewer cores
]


def test_each_row_is_called_with_its_reason():
    calls = {r.task_id: call_of(r) for r in ROWS}
    assert calls["c1"] == (Direction.AGREE, "") and calls["c2"] == (Direction.DISAGREE, "")
    assert calls["c3"] == (Direction.UNDECIDED, "within noise")
    assert calls["p1"] == (Direction.UNDECIDED, "baseline failed")
    assert calls["p2"] == (Direction.UNDECIDED, "no published ratio")
    assert calls["m1"] == (Direction.UNDECIDED, "cores capped")
    assert [r.task_id for r in ROWS if clear(r)] == ["c1", "c2", "p1", "p3", "m1"]


def test_summary_counts_languages_clear_orderings_and_the_floor():
    s = summarise(ROWS, ran=ROWS[:4], wall_s=60.0, cores=2, population=70)
    by = {lr.language: lr for lr in s.languages}
    assert (by["c"].agree, by["c"].disagree, by["c"].undecided) == (1, 1, 1)
    assert by["python"].baseline_ok == 2 and by["python"].reference_ok == 3
    assert by["python"].reasons == {"baseline failed": 1, "no published ratio": 1}
    assert s.total.tasks == 7 and s.total.capped == 1
    assert (s.clear.tasks, s.clear.agree, s.clear.disagree, s.clear.undecided) == (5, 2, 1, 2)
    assert s.clear.decided == pytest.approx(3 / 5) and not s.clear.target_met
    assert s.clear_all_cores.tasks == 4 and s.clear_all_cores.reasons == {"baseline failed": 1}
    (d,) = s.disagreements
    assert (d.task_id, d.published, d.measured, d.clear) == ("c2", 2.0, 0.5, True)
    # 4 tasks ran, 2 solutions of 3 core-seconds each, on 2 cores: a floor of 12 s
    assert s.floor_s == pytest.approx(12.0) and s.over_floor == pytest.approx(5.0)
    assert s.tasks_per_min == pytest.approx(4.0) and s.extrapolated_s == pytest.approx(70 * 15)


def test_no_disagreement_and_nine_in_ten_decided_meets_the_target():
    rows = [_row(f"t{i}", "go", 2.0, "a") for i in range(9)] + [_row("u", "go", 2.0, "neither")]
    s = summarise(rows, ran=[], wall_s=0.0, cores=2)
    assert s.clear.decided == pytest.approx(0.9) and s.clear.target_met
    assert s.tasks_per_min is None and s.over_floor is None
