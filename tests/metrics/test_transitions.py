"""Transitions (RLPF Table 12), speedup distribution (Table 13) and failure stages."""

from __future__ import annotations

import pytest

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Stage
from perfgym.metrics import ResultsPolicy
from perfgym.metrics.speedups import RLPF_THRESHOLDS, speedup_distribution
from perfgym.metrics.stages import failure_stages
from perfgym.metrics.transitions import transitions

# Outcome levels: 0 wrong, 1 correct but slow, 2 faster than baseline only, 3 reference-level.
_TC = {1: 1.2, 2: 0.8, 3: 0.4}

# Joint (run A level, RLPF level) task counts over 306 tasks that agree with RLPF Table 5's
# counts for both runs; Table 12 then fixes the four transition counts checked below.
BASE_TO_RLPF = [[137, 18, 57, 60], [2, 7, 0, 0], [0, 0, 3, 5], [0, 0, 3, 14]]
RLVR_TO_RLPF = [[119, 4, 20, 10], [12, 16, 18, 10], [3, 2, 22, 20], [5, 3, 3, 39]]


def run(mk, levels: list[int], model: str):  # type: ignore[no-untyped-def]
    out = []
    for i, level in enumerate(levels):
        if level == 0:
            out.append(mk(f"t{i:03d}", Stage.WO, model=model))
        else:
            out.append(mk(f"t{i:03d}", Stage.OK, _TC[level], 1.0, 0.5, model=model))
    return out


def pair(mk, joint: list[list[int]], name_a: str):  # type: ignore[no-untyped-def]
    levels_a: list[int] = []
    levels_b: list[int] = []
    for a, row in enumerate(joint):
        for b, count in enumerate(row):
            levels_a += [a] * count
            levels_b += [b] * count
    return run(mk, levels_a, name_a), run(mk, levels_b, "rlpf")


@pytest.mark.parametrize(
    ("joint", "name", "table_5_a", "table_12"),
    [
        (BASE_TO_RLPF, "qwen3-32b", (34, 25, 17), (135, 117, 65, 2)),
        (RLVR_TO_RLPF, "rlvr", (153, 97, 50), (34, 58, 40, 20)),
    ],
)
def test_table_12_rows(mk, joint, name, table_5_a, table_12) -> None:  # type: ignore[no-untyped-def]
    before, after = pair(mk, joint, name)
    t = transitions(before, after)
    assert t.n_tasks == 306
    assert (t.counts_a["correct"], t.counts_a["fbr"], t.counts_a["rbr"]) == table_5_a
    assert (t.counts_b["correct"], t.counts_b["fbr"], t.counts_b["rbr"]) == (167, 142, 79)
    assert (t.fail_to_correct, t.notfast_to_fbr, t.notref_to_rbr, t.lost_correct) == table_12
    # Every level balances: count_B = count_A + gained - lost.
    assert t.counts_b["correct"] == t.counts_a["correct"] + t.fail_to_correct - t.lost_correct
    assert t.counts_b["fbr"] == t.counts_a["fbr"] + t.notfast_to_fbr - t.lost_fbr
    assert t.counts_b["rbr"] == t.counts_a["rbr"] + t.notref_to_rbr - t.lost_rbr
    assert (t.model_a, t.model_b) == (name, "rlpf")


def test_hand_computed_transitions(mk) -> None:  # type: ignore[no-untyped-def]
    before = run(mk, [0, 1, 2, 3], "a")
    after = run(mk, [3, 0, 1, 3], "b")
    t = transitions(before, after)
    assert t.tasks["fail_to_correct"] == ["t000"]
    assert t.tasks["lost_correct"] == ["t001"]
    assert t.tasks["notfast_to_fbr"] == ["t000"]
    assert t.tasks["lost_fbr"] == ["t002"]
    assert t.tasks["notref_to_rbr"] == ["t000"]
    assert t.lost_rbr == 0


def test_transitions_refuse_different_task_sets(mk) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match="different tasks"):
        transitions(run(mk, [1, 1], "a"), run(mk, [1], "b"))


def test_transitions_need_one_result_per_task(mk) -> None:  # type: ignore[no-untyped-def]
    before = [mk("t", Stage.WO, sample=0), mk("t", Stage.WO, sample=1)]
    with pytest.raises(ConfigError, match="one result per task"):
        transitions(before, [mk("t", Stage.WO)])


def test_table_13_distribution(mk) -> None:  # type: ignore[no-untyped-def]
    # 142 faster-than-baseline RLPF outputs spread so that Table 13's counts hold, with the
    # two middle values at the reported 4.77x median; plus failures and slow results.
    bins = [
        (1.02, 27),
        (1.1, 3),
        (1.3, 6),
        (1.8, 9),
        (3.0, 25),
        (4.77, 2),
        (4.9, 2),
        (7.0, 23),
        (15.0, 21),
        (30.0, 19),
        (80.0, 5),
    ]
    speeds = [s for s, n in bins for _ in range(n)]
    assert len(speeds) == 142
    results = [mk(f"f{i}", Stage.OK, 1.0 / s, 1.0, 0.01) for i, s in enumerate(speeds)]
    results += [mk("slow", Stage.OK, 2.0, 1.0, 0.5), mk("bad", Stage.NR, detail="TIMEOUT")]
    d = speedup_distribution(results, decision="strict")  # the paper counts 1.02x as faster
    assert d.n == 142
    assert d.thresholds == list(RLPF_THRESHOLDS)
    assert d.counts == [115, 112, 106, 97, 68, 45, 24, 5]
    assert d.median == pytest.approx(4.77)
    assert d.fractions[0] == pytest.approx(115 / 142)


def test_speedup_threshold_is_inclusive(mk) -> None:  # type: ignore[no-untyped-def]
    d = speedup_distribution([mk("a", Stage.OK, 0.5, 1.0, 0.1)], thresholds=[2.0, 2.5])
    assert d.counts == [1, 0]
    empty = speedup_distribution([mk("a", Stage.WO)])
    assert (empty.n, empty.median, empty.fractions[0]) == (0, None, None)
    with pytest.raises(ConfigError):
        speedup_distribution([mk("a", Stage.WO)], thresholds=[0.0])


def test_failure_stages(mk) -> None:  # type: ignore[no-untyped-def]
    results = [
        mk("a", Stage.NX),
        mk("b", Stage.NC),
        mk("c", Stage.NC),
        mk("d", Stage.NR, detail="TIMEOUT"),
        mk("e", Stage.NR, detail="RUNTIME_ERROR"),
        mk("f", Stage.NR, detail="TIMEOUT"),
        mk("g", Stage.WO),
        mk("h", Stage.OK, 1.0, 1.0, 0.5),
        mk("i", Stage.NR, infra_error=True),
    ]
    with pytest.raises(ConfigError, match="infrastructure"):
        failure_stages(results)
    s = failure_stages(results, ResultsPolicy(infra_errors="exclude"))
    assert s.by_stage == {"NX": 1, "NC": 2, "NR": 3, "WO": 1, "OK": 1}
    assert s.nr_causes == {"RUNTIME_ERROR": 1, "TIMEOUT": 2}
    assert (s.n, s.infra_errors) == (8, 1)
