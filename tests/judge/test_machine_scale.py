"""A PerfCodeBench task's published limit scaled to this machine's speed (judge/machine_scale):
a slower machine is simulated by a limit under the baseline's CPU time here and a published
reference time far under the reference's time here. Unscaled, the correct baseline is NR
TIMEOUT; scaled, it passes; a spinning candidate is still stopped, at the scaled limit, and
its timeout says the clock, the published limit, the factor and where it came from."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfgym.judge import Judge, JudgeConfig, Stage
from perfgym.judge.candidate import Candidate
from perfgym.judge.machine_scale import machine_scale
from perfgym.judge.references import OwnRun
from perfgym.judge.validate import validation_config
from perfgym.tasks import load_suite
from perfgym.tasks.task import Task

# Not `alone`: the limits are CPU time (another worker's tests beside it do not move them),
# and the factor is capped far under what this machine's reference time gives (0.1 ms
# published against a few ms here), so load beside it cannot move the factor either.

TREE = Path(__file__).parents[1] / "fixtures" / "perfcodebench" / "published" / "executable_tasks"

#: Twelve times the fixture's baseline: ~1 s of CPU on the timed workload here (six times was
#: 0.50 s, under the 0.6 s limit when the program's other CPU was small), against a limit of
#: 0.6 s unscaled and 3.0 s scaled.
SLOW = """def range_sums(values, queries):
    for _ in range(12):
        answers = []
        for lo, hi in queries:
            total = 0
            for i in range(lo, hi):
                total += values[i]
            answers.append(total)
    return answers
"""
SPIN = "def range_sums(values, queries):\n    while True:\n        pass\n"
LIMIT_S, PUBLISHED_REF_S, CAP = 0.6, 1e-4, 5.0


def _slower_machine_task() -> Task:
    """py_range_sums as if published on a much faster machine: a 0.6 s limit (the reference
    takes ~0.2 s of CPU here, the slow baseline ~1 s) and a reference published at 0.1 ms
    (its harness time here is a few ms: the factor reaches the cap)."""
    task = load_suite(str(TREE), tasks=["py_range_sums"]).get("py_range_sums")
    ref = task.references[0]
    assert ref.stored is not None
    stored = ref.stored.model_copy(update={"median_s": PUBLISHED_REF_S})
    return task.model_copy(update={
        "time_limit_s": LIMIT_S, "metadata": {**task.metadata, "published_limit_s": LIMIT_S},
        "baseline": task.baseline.model_copy(update={"source": SLOW}),
        "references": [ref.model_copy(update={"stored": stored})]})  # fmt: skip


def _judged(cap: float | None, sources: dict[str, str]) -> dict[str, object]:
    task = _slower_machine_task()
    config = validation_config(JudgeConfig(repeats=1, machine_scale_cap=cap))
    with Judge(config) as judge:
        got = judge.judge_many([Candidate(task, source=s, model=m) for m, s in sources.items()])
    return {v.model: v for v in got}


@pytest.mark.timeout(180)
def test_a_slower_machine_times_out_the_baseline_unless_the_limit_is_scaled():
    before = _judged(None, {"baseline": SLOW})["baseline"]
    assert before.stage is Stage.NR and before.detail == "TIMEOUT", before.reason
    assert "CPU time over 0.6 s" in before.reason  # the clock and the limit
    after = _judged(CAP, {"baseline": SLOW, "spin": SPIN})
    assert after["baseline"].stage is Stage.OK, after["baseline"].reason
    spin = after["spin"]
    assert spin.stage is Stage.NR and spin.detail == "TIMEOUT", spin.reason
    # stopped at the task's scaled limit (0.6 s x 5 of CPU), and says how it was set
    assert "CPU time over 3.0 s" in spin.reason, spin.reason
    assert "published limit 0.6 s x 5.00 = 3.0 s" in spin.reason, spin.reason
    assert "the reference" in spin.reason and "the baseline" in spin.reason
    assert "at most 5" in spin.reason


def _run(seconds: float | None, cpu_s: float | None = None) -> OwnRun:
    if seconds is None:
        return OwnRun(ok=False, output=None, wall_s=1.0, why="TIMEOUT CPU time over 0.6 s")
    return OwnRun(ok=True, output=None, wall_s=1.0, why="", cpu_s=cpu_s, reported_s=seconds)


def test_the_factor_follows_the_slowest_own_solution_and_is_capped():
    task = _slower_machine_task()
    base_s = task.baseline.stored.median_s  # type: ignore[union-attr]

    def factor(ref: OwnRun | None, base: OwnRun | None = None) -> float:
        got = machine_scale(task, {"reference": ref, "baseline": base}, CAP)
        assert got is not None
        return got.factor

    assert factor(_run(PUBLISHED_REF_S * 2.5)) == pytest.approx(2.5)
    # the baseline slower here than the reference, relative to their published times: its ratio
    assert factor(_run(PUBLISHED_REF_S * 1.5), _run(base_s * 3)) == pytest.approx(3.0)
    # a loaded machine's wall-clock harness time: a one-thread run's CPU time where less
    assert factor(_run(PUBLISHED_REF_S * 3, cpu_s=PUBLISHED_REF_S * 2)) == pytest.approx(2.0)
    assert factor(_run(PUBLISHED_REF_S / 2)) == 1.0  # a faster machine keeps the limit
    assert factor(_run(PUBLISHED_REF_S * 1e4)) == CAP
    cut = machine_scale(task, {"reference": _run(None), "baseline": _run(None)}, CAP)
    assert cut is not None and cut.factor == 1.0 and "not scaled" in cut.why
    assert "did not finish" in cut.why
    unpublished = task.model_copy(update={
        "references": [task.references[0].model_copy(update={"stored": None})],
        "baseline": task.baseline.model_copy(update={"stored": None})})  # fmt: skip
    assert machine_scale(unpublished, {"reference": _run(1.0)}, CAP) is None
    user_limit = task.model_copy(update={"time_limit_s": 2 * LIMIT_S})  # --time-limit: as given
    assert machine_scale(user_limit, {"reference": _run(1.0)}, CAP) is None
