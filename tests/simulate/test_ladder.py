"""Building the quality ladder from verdicts: order, synthetic failures, pools, bad input."""

import math

import pytest
from sim_data import task, verdict

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Stage, Timing
from perfgym.simulate import SimulatorConfig, build_ladder


def four_solution_task():
    t = task("a", {"pool-2": 2.0, "pool-1": 1.0})
    vs = [
        verdict("a", "reference", 0.3),
        verdict("a", "pool-2", 0.5),
        verdict("a", "baseline", 1.1),
        verdict("a", "pool-1", 0.8),
    ]
    return t, vs


def test_rungs_in_quality_order_with_synthetic_failures_below():
    t, vs = four_solution_task()
    ladder = build_ladder([t], vs, suite="s")
    assert [r.label for r in ladder.rungs] == [
        "NX", "NC", "NR", "WO", "baseline", "pool-1", "pool-2", "reference",
    ]  # fmt: skip
    assert [r.level for r in ladder.rungs] == list(range(8))
    assert [r.quality for r in ladder.rungs] == pytest.approx([k / 7 for k in range(8)])
    stages = [r.verdict.stage for r in ladder.rungs[:4]]
    assert stages == [Stage.NX, Stage.NC, Stage.NR, Stage.WO]
    nx, nc, nr, wo = (r.verdict for r in ladder.rungs[:4])
    assert (nx.detail, nc.detail, nr.detail, wo.detail) == (
        "NO_CODE", "COMPILE_ERROR", "RUNTIME_ERROR", "WRONG_OUTPUT",
    )  # fmt: skip
    # The synthetic failures see the baseline's verdict's baseline/reference timings.
    assert wo.baseline == vs[2].baseline and wo.reference == vs[2].reference
    assert wo.candidate is None and wo.suite == "s"
    assert ladder.columns()["format_ok"] == [False] + [True] * 7


def test_leave_one_out_pool_excludes_the_candidate():
    t, vs = four_solution_task()
    ladder = build_ladder([t], vs, suite="s")
    by = {r.label: r for r in ladder.rungs}
    totals = sorted(sum(m.values()) for m in by["pool-1"].pool)
    assert totals == pytest.approx([0.3, 0.5, 1.1])  # everyone but pool-1 (0.8)
    assert len(by["NX"].pool) == 4
    every = build_ladder([t], vs, SimulatorConfig(pool="all"), suite="s")
    assert all(len(r.pool) == 4 for r in every.rungs)


def test_equal_quality_shares_a_level_and_failures_can_be_dropped():
    t = task("a", {"pool-1": 1.0, "pool-2": 1.0})
    vs = [verdict("a", lab, tc) for lab, tc in
          (("baseline", 1.0), ("pool-1", 0.6), ("pool-2", 0.5), ("reference", 0.3))]  # fmt: skip
    ladder = build_ladder([t], vs, SimulatorConfig(failures=[]), suite="s")
    assert [(r.label, r.level, r.levels) for r in ladder.rungs] == [
        ("baseline", 0, 3), ("pool-1", 1, 3), ("pool-2", 1, 3), ("reference", 2, 3),
    ]  # fmt: skip


def test_failures_are_sorted_into_rlpf_order():
    cfg = SimulatorConfig(failures=[Stage.WO, Stage.NX])
    assert cfg.failures == [Stage.NX, Stage.WO]
    with pytest.raises(ValueError):
        SimulatorConfig(failures=[Stage.OK])
    with pytest.raises(ValueError):
        SimulatorConfig(smooth_window=4)


def test_unknown_quality_infra_errors_and_strays_are_noted():
    t = task("a", {"pool-1": None, "pool-2": 2.0})
    vs = [
        verdict("a", "baseline", 1.0),
        verdict("a", "pool-1", 0.7),
        verdict("a", "pool-2", 0.5, infra_error=True),
        verdict("a", "reference", 0.3),
        verdict("a", "gpt-x", 0.2),
        verdict("zz", "baseline", 1.0),
    ]
    ladder = build_ladder([t], vs, suite="s")
    assert [r.label for r in ladder.rungs if not r.synthetic] == ["baseline", "reference"]
    text = " | ".join(ladder.notes)
    assert "pool-1 has no known quality" in text
    assert "pool-2 hit an infrastructure error" in text
    assert "gpt-x" in text and "zz" in text


def test_a_failing_solution_keeps_its_place():
    t, vs = four_solution_task()
    vs[3] = verdict("a", "pool-1", None, stage=Stage.WO)
    ladder = build_ladder([t], vs, suite="s")
    by = {r.label: r for r in ladder.rungs}
    assert by["pool-1"].verdict.stage is Stage.WO and by["pool-1"].level == 5
    assert len(by["pool-2"].pool) == 2  # only correct solutions are references


def test_pool_of_one_solution_is_skipped_with_a_note():
    lone = task("lone")
    full, vs = four_solution_task()
    ladder = build_ladder([lone, full], [verdict("lone", "baseline", 1.0), *vs], suite="s")
    assert ladder.task_ids() == ["a"]
    assert any("lone: skipped" in n for n in ladder.notes)
    with pytest.raises(ConfigError, match="min_solutions|distinct quality"):
        build_ladder([lone], [verdict("lone", "baseline", 1.0)], suite="s")


def test_bad_results_are_config_errors():
    t, vs = four_solution_task()
    with pytest.raises(ConfigError, match="empty"):
        build_ladder([t], [], suite="s")
    with pytest.raises(ConfigError, match="mix suites"):
        build_ladder([t], [*vs, verdict("a", "pool-9", 0.4, suite="other")], suite="s")
    with pytest.raises(ConfigError, match="not 's'"):
        build_ladder([t], [verdict("a", "baseline", 1.0, suite="other")], suite="s")
    with pytest.raises(ConfigError, match="twice"):
        build_ladder([t], [*vs, vs[0]], suite="s")
    nan = vs[1].model_copy(update={"candidate": Timing(estimate_s=math.nan)})
    with pytest.raises(ConfigError, match="'pool-2' candidate: duration nan"):
        build_ladder([t], [nan, *vs[2:]], suite="s")
    negative = vs[1].model_copy(update={"baseline": Timing(estimate_s=1.0,
                                                           per_workload_s={"w1": -1.0})})  # fmt: skip
    with pytest.raises(ConfigError, match="workload 'w1'"):
        build_ladder([t], [negative], suite="s")
    with pytest.raises(ConfigError, match="model"):
        build_ladder([t], [verdict("a", "gpt-x", 0.5)], suite="s")
