"""Calibration on a deliberately slowed machine: durations stored from one protocol run, then
re-measured while a competing process shares the measuring core; the affine map fitted on the
re-measured references restores the ranking of fresh candidates against the stored pool
(DMC-Optim's stored-vs-fresh Spearman, 0.54 -> 0.96 there).

A competing load rather than a CFS quota: a quota also throttles the run's own supervisor and
the judge in the same cgroup, and its period makes short runs burst, so the slowdown it causes
is not the machine change an affine map models (measured here: R² 0.85-0.93)."""

import pytest
from helpers import busy, ladder_task, require_quiet_machine
from scipy.stats import spearmanr

from perfgym.judge import Candidate, Judge, JudgeConfig, TimingStatus
from perfgym.sandbox.pool import usable_cores
from perfgym.timing.calibration import fit_affine, paired_durations
from perfgym.timing.stability import mean_percentile

pytestmark = pytest.mark.slow

# Ladders of different spread, as problems differ in how far their human solutions spread.
# Neighbours are >= 1.5x apart, so wall-clock noise on a shared machine cannot reorder them.
TASKS = [
    ladder_task("tight-a", [1, 1.5, 2.25, 3.4, 5], 100_000),
    ladder_task("wide-b", [1, 2.5, 6, 15, 36], 25_000),
    ladder_task("tight-c", [1, 1.5, 2.25, 3.4, 5], 200_000),
    ladder_task("mid-d", [1, 1.8, 3.2, 5.8, 10.5], 60_000),
]
CORE = usable_cores()[0]
# Wall clock (CPU time does not see a competing process) and the minimum over repeats: other
# users of this shared machine only ever add time, and the minimum sheds most of it.
CONFIG = JudgeConfig(repeats=5, clock="wall", estimator="minimum", cores=[CORE],
                     measure_baseline=False, measure_reference=False)  # fmt: skip


def _judged(judge: Judge, cands: list[Candidate]) -> list:
    """Judge the candidates together; a sandbox fault (never the program's) is retried."""
    for _attempt in range(3):
        vs = judge.judge_many(cands)
        if not any(v.infra_error for v in vs):
            return vs
    return vs


def measure_all() -> dict[str, dict[str, float]]:
    """'task/label' -> per-workload seconds, every solution of every task as a candidate."""
    out = {}
    with Judge(CONFIG) as judge:
        for task in TASKS:
            cands = [Candidate(task, source=s.source, model=s.label) for s in task.solutions()]
            for v in _judged(judge, cands):
                assert v.candidate is not None and v.candidate.status is TimingStatus.OK, v.reason
                out[f"{task.id}/{v.model}"] = v.candidate.per_workload_s
    return out


@pytest.mark.xfail(
    strict=False,
    reason="issue 5 is open: on this shared 2-core VM the calibrated Spearman measured 0.76-0.91 "
    "(target 0.95) in the last runs; kept running so a fix shows up as XPASS",
)
def test_affine_map_restores_the_ranking_after_a_slowdown():
    require_quiet_machine()  # the deliberate slowdown must be the only one
    stored = measure_all()
    with busy(CORE, processes=1):
        fresh = measure_all()
    # The re-measured references: fastest, middle and slowest solution of every task.
    refs = {f"{t.id}/{s.label}" for t in TASKS for s in (t.references[0], t.pool[1], t.baseline)}
    xs, ys, groups = paired_durations({k: stored[k] for k in refs}, {k: fresh[k] for k in refs})
    amap = fit_affine(xs, ys, groups=groups, clock="wall")
    slowdown = sum(ys) / sum(xs)

    truth, raw, mapped = [], [], []
    for t in TASKS:
        labels = [s.label for s in t.solutions()]
        for lab in labels:
            cand = fresh[f"{t.id}/{lab}"]
            others = [o for o in labels if o != lab]
            truth.append(mean_percentile(cand, [fresh[f"{t.id}/{o}"] for o in others]))
            raw.append(mean_percentile(cand, [stored[f"{t.id}/{o}"] for o in others]))
            mapped.append(mean_percentile(
                cand, [{w: amap(d) for w, d in stored[f"{t.id}/{o}"].items()} for o in others]
            ))  # fmt: skip
    rho_raw = spearmanr(raw, truth).statistic
    rho_mapped = spearmanr(mapped, truth).statistic
    print(f"\nslowdown via one competing process: fresh/stored = {slowdown:.2f}x; fit slope={amap.slope:.4f} "
          f"intercept={amap.intercept_s * 1e3:.1f} ms R2={amap.r2:.4f} cvR2={amap.cv_r2} "
          f"median|rel resid|={amap.median_rel_residual:.3f} n={amap.n}; "
          f"Spearman stored->fresh raw={rho_raw:.3f} calibrated={rho_mapped:.3f}")  # fmt: skip
    assert slowdown > 1.5  # the slowdown really happened
    assert rho_mapped >= 0.95
    assert rho_mapped > rho_raw
    assert amap.r2 > 0.9 and amap.slope > 1.3
