"""EffiBench NET/NMU/NTMU, EffiBench-X scores and EvalPerf DPS/DPS_norm against hand-worked
examples, and the inputs that would flatter a model refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Stage, Timing, Verdict
from perfgym.metrics.effibench import EffiBenchConfig, effibench_ratio
from perfgym.metrics.effibench_x import EffiBenchXConfig, effibench_x_score
from perfgym.metrics.evalperf import (
    Cluster,
    EvalPerfConfig,
    clusters_from_tasks,
    dps,
    sample_scores,
)
from perfgym.metrics.registry import get_metric
from perfgym.tasks import load_suite
from perfgym.tasks.task import StoredMeasurement

EVALPERF = Path(__file__).resolve().parents[1] / "fixtures" / "published" / "evalperf.jsonl"


def t(seconds: float | None, mb: float | None = None, mbs: float | None = None) -> Timing | None:
    if seconds is None:
        return None
    return Timing(estimate_s=seconds, peak_rss_mb=mb, memory_integral_mb_s=mbs)


def v(task: str, stage: Stage, cand: Timing | None = None, ref: Timing | None = None,
      sample: int = 0) -> Verdict:  # fmt: skip
    return Verdict(task_id=task, stage=stage, sample=sample, model="m", candidate=cand,
                   reference=ref)  # fmt: skip


# Hand-worked (canonical in the same verdict):
#   a: ET 3.0/1.5 = 2.0   MU 60/40 = 1.5   TMU 12/4 = 3.0
#   b: sample 0  ET 1.0/2.0 = 0.5   MU 10/20 = 0.5   TMU 2/4 = 0.5
#      sample 1  ET 3.0/2.0 = 1.5   MU 30/20 = 1.5   TMU 6/4 = 1.5   -> task b: 1.0, 1.0, 1.0
#   c: wrong -> outside the denominator
#   NET = (2.0 + 1.0)/2 = 1.5,  NMU = (1.5 + 1.0)/2 = 1.25,  NTMU = (3.0 + 1.0)/2 = 2.0
EFFI = [
    v("a", Stage.OK, t(3.0, 60, 12), t(1.5, 40, 4)),
    v("b", Stage.OK, t(1.0, 10, 2), t(2.0, 20, 4), sample=0),
    v("b", Stage.OK, t(3.0, 30, 6), t(2.0, 20, 4), sample=1),
    v("c", Stage.WO, None, t(1.0, 5, 1)),
]


@pytest.mark.parametrize(("quantity", "value"), [("net", 1.5), ("nmu", 1.25), ("ntmu", 2.0)])
def test_effibench_hand_worked(quantity: str, value: float) -> None:
    r = effibench_ratio(EFFI, config=EffiBenchConfig(quantity=quantity))
    assert r.value == pytest.approx(value) and r.n == 2
    assert r.per_task["c"] is None and r.ci_low is not None and r.ci_low <= value <= r.ci_high
    assert any("1 of 3 task(s) had no correct sample" in n for n in r.notes)
    assert get_metric(f"effibench-{quantity}").compute(EFFI).value == pytest.approx(value)
    # a result's config rebuilds the same metric; another quantity under this name is refused
    assert get_metric(r.name, **r.config).compute(EFFI).value == pytest.approx(value)
    with pytest.raises(ConfigError, match="quantity is"):
        get_metric(f"effibench-{quantity}", quantity="nmu" if quantity != "nmu" else "net")


def test_effibench_canonical_from_stored_when_the_verdict_has_no_reference() -> None:
    results = [v("a", Stage.OK, t(3.0, 60, 12), None)]
    canonical = {"a": StoredMeasurement(median_s=1.5, peak_rss_mb=40, memory_integral_mb_s=4)}
    assert effibench_ratio(results, canonical).value == pytest.approx(2.0)
    with pytest.raises(ConfigError, match="no execution time of the canonical solution"):
        effibench_ratio(results)


def test_effibench_refuses_a_correct_sample_it_cannot_measure() -> None:
    """Dropping the unmeasured sample would leave only the cheap ones in the mean."""
    results = [v("a", Stage.OK, t(3.0, None, None), t(1.5, 40, 4)),
               v("b", Stage.OK, t(1.0, 10, 2), t(2.0, 20, 4))]  # fmt: skip
    assert effibench_ratio(results).value == pytest.approx(1.25)  # time is there
    with pytest.raises(ConfigError, match="task 'a' sample 0 candidate: correct but no peak"):
        effibench_ratio(results, config=EffiBenchConfig(quantity="nmu"))


def test_effibench_refuses_a_zero_or_corrupt_canonical() -> None:
    with pytest.raises(ConfigError, match="peak_rss_mb is 0"):
        effibench_ratio([v("a", Stage.OK, t(1.0, 5, 1), t(1.0, 0.0, 1))],
                        config=EffiBenchConfig(quantity="nmu"))  # fmt: skip
    with pytest.raises(ConfigError, match="not a finite number"):
        effibench_ratio([v("a", Stage.OK, t(1.0), Timing(estimate_s=float("nan")))])


def test_effibench_nothing_correct_is_undefined_not_zero() -> None:
    r = effibench_ratio([v("a", Stage.WO, None, t(1.0))])
    assert r.value is None and r.n == 0  # 0 would read as "infinitely efficient"


# EvalPerf hand-worked: clusters slowest first, costs 8, 4, 2 s; scores 20, 55, 100 (n = 3).
#   cost 1.5 -> fastest cluster j=2 (1.5 <= 2): DPS 100, norm 100·3/3 = 100
#   cost 3.0 -> j=1 (3 <= 4, not <= 2): DPS 55, norm 66.67
#   cost 4.0 -> j=1 (equal counts as matched): DPS 55, norm 66.67
#   cost 9.0 -> slower than all: 0, 0
CL = [Cluster(cost_s=8.0, score=20.0), Cluster(cost_s=4.0, score=55.0),
      Cluster(cost_s=2.0, score=100.0)]  # fmt: skip


def test_dps_sample_scores_hand_worked() -> None:
    assert sample_scores(1.5, CL) == (100.0, 100.0)
    assert sample_scores(3.0, CL) == (55.0, pytest.approx(200 / 3))
    assert sample_scores(4.0, CL) == (55.0, pytest.approx(200 / 3))
    assert sample_scores(8.0, CL) == (20.0, pytest.approx(100 / 3))
    assert sample_scores(9.0, CL) == (0.0, 0.0)
    assert sample_scores(None, CL) == (0.0, 0.0)  # profiling failed


def test_dps_task_mean_over_passing_samples_then_tasks() -> None:
    # task p: passing samples at 1.5 and 3.0 -> DPS (100+55)/2 = 77.5; norm (100+66.67)/2
    #         a failing sample is not in DPS (EvalPerf averages passing samples)
    # task q: one passing at 9.0 -> 0
    # DPS = (77.5 + 0)/2 = 38.75 % -> 0.3875; DPS_norm = (83.33 + 0)/2 = 41.67 %
    results = [v("p", Stage.OK, t(1.5), sample=0), v("p", Stage.OK, t(3.0), sample=1),
               v("p", Stage.WO, None, sample=2), v("q", Stage.OK, t(9.0))]  # fmt: skip
    clusters = {"p": CL, "q": CL}
    assert dps(results, clusters).value == pytest.approx(0.3875)
    norm = dps(results, clusters, EvalPerfConfig(norm=True))
    assert norm.name == "dps_norm" and norm.value == pytest.approx((250 / 3) / 200)
    assert get_metric("dps").compute(results, clusters=clusters).value == pytest.approx(0.3875)
    # min_correct 2: q (one passing) is not scored, and says so
    r = dps(results, clusters, EvalPerfConfig(min_correct=2))
    assert r.value == pytest.approx(0.775) and r.per_task["q"] is None and r.n == 1


def test_dps_refuses_bad_clusters_and_counts_disorder() -> None:
    results = [v("p", Stage.OK, t(1.0))]
    with pytest.raises(ConfigError, match="no reference clusters for task 'p'"):
        dps(results, {"x": CL})
    with pytest.raises(ConfigError, match="must increase"):
        dps(results, {"p": [CL[1], CL[0]]})
    with pytest.raises(ConfigError, match="unexpected inputs"):
        get_metric("dps").compute(results, cluster={"p": CL})
    swapped = [Cluster(cost_s=2.0, score=20.0), Cluster(cost_s=4.0, score=100.0)]
    assert any("not slowest-first" in n for n in dps(results, {"p": swapped}).notes)


def test_clusters_from_evalperf_tasks_need_measurements_made_here() -> None:
    suite = load_suite(EVALPERF)
    with pytest.raises(ConfigError, match="cluster-0 has no measured duration"):
        clusters_from_tasks(suite.tasks)
    measured = []
    for task in suite.tasks:
        pool = [s.model_copy(update={"stored": StoredMeasurement(median_s=10.0 / (j + 1))})
                for j, s in enumerate(task.pool)]  # fmt: skip
        measured.append(task.model_copy(update={"pool": pool}))
    clusters = clusters_from_tasks(measured)
    assert [c.score for c in clusters["Mbpp/4"]] == [12.5, 60.0, 100.0]
    assert [c.cost_s for c in clusters["HumanEval/55"]] == [10.0, 5.0]


# EffiBench-X hand-worked: score = min(1, canonical / model), a failed sample 0, mean over ALL.
#   a: time 2/4 = 0.5        memory 20/10 = 2 -> 1.0     integral 2/8 = 0.25
#   b: sample 0 wrong -> 0;  sample 1: time 3/1 -> 1.0, memory 15/30 = 0.5, integral 3/3 = 1
#      task b: time 0.5, memory 0.25, integral 0.5
#   c: wrong -> 0
#   time = (0.5 + 0.5 + 0)/3 = 1/3,  memory = (1 + 0.25 + 0)/3 = 5/12,  integral = 0.75/3 = 0.25
EFFI_X = [
    v("a", Stage.OK, t(4.0, 10, 8), t(2.0, 20, 2)),
    v("b", Stage.WO, None, t(3.0, 15, 3), sample=0),
    v("b", Stage.OK, t(1.0, 30, 3), t(3.0, 15, 3), sample=1),
    v("c", Stage.NR, None, t(1.0, 1, 1)),
]


@pytest.mark.parametrize(
    ("dimension", "value"), [("time", 1 / 3), ("memory", 5 / 12), ("integral", 0.25)]
)
def test_effibench_x_scores_hand_worked(dimension: str, value: float) -> None:
    r = effibench_x_score(EFFI_X, config=EffiBenchXConfig(dimension=dimension))
    assert r.value == pytest.approx(value) and r.n == 3 and r.per_task["c"] == 0.0
    assert get_metric(f"effibench-x-{dimension}").compute(EFFI_X).value == pytest.approx(value)
    assert get_metric(r.name, **r.config).compute(EFFI_X).value == pytest.approx(value)


def test_effibench_x_beating_the_canonical_earns_nothing_more_and_unmeasured_is_refused() -> None:
    fast = [v("a", Stage.OK, t(0.001, 1, 1), t(2.0, 20, 2))]
    assert effibench_x_score(fast).value == 1.0  # clipped: a faked tiny time cannot exceed 1
    with pytest.raises(ConfigError, match="correct but not measured"):
        effibench_x_score([v("a", Stage.OK, t(1.0), t(2.0, 20, 2))],
                          config=EffiBenchXConfig(dimension="memory"))  # fmt: skip
