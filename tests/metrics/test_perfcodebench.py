"""PerfCodeBench table: hand-computed cases and RLPF's published Table 1 / Table 8 figures."""

from __future__ import annotations

import pytest

from perfgym.judge.verdict import Stage, TimingStatus
from perfgym.metrics.perfcodebench import (
    PerfCodeBenchConfig,
    PerfCodeBenchMetric,
    cgre,
    perfcodebench_table,
    sample_outcome,
)

# RLPF Table 1 (306 test tasks, percentages): CRR, FBR, RBR, Slow/CRR, Gap/FBR as printed.
TABLE_1 = {
    "RLPF-32B": (54.58, 46.41, 25.82, 14.97, 44.37),
    "RLPF w. GPT-5.4 reference": (50.33, 42.81, 25.49, 14.94, 40.46),
    "w/o FBR": (40.52, 32.03, 18.30, 20.95, 42.87),
    "w/o RBR": (39.87, 31.05, 19.61, 22.12, 36.84),
    "w/o shaping": (39.54, 31.05, 18.95, 21.47, 38.97),
    "Runtime reward only": (37.91, 31.70, 17.65, 16.38, 44.32),
    "RLVR correctness only": (50.00, 31.70, 16.34, 36.60, 48.45),
    "Qwen3-32B (base)": (11.11, 8.17, 5.56, 26.46, 31.95),
    "GPT-5.4": (78.10, 63.07, 50.65, 19.24, 19.69),
    "Claude Opus 4.5": (65.03, 53.59, 39.87, 17.59, 25.60),
    "Gemini 3.1 Pro": (34.64, 30.07, 23.20, 13.19, 22.85),
    "DeepSeek-V4-Pro": (64.38, 55.56, 49.02, 13.70, 11.77),
    "Qwen3.6-Plus": (46.73, 38.24, 21.90, 18.17, 42.73),
    "Qwen3.6-Max": (43.14, 35.29, 16.67, 18.20, 52.76),
    "Gemma-4-26B-A4B-IT": (59.80, 45.42, 26.47, 24.05, 41.72),
    "Gemma-4-31B-IT": (49.67, 37.25, 18.63, 25.01, 49.99),
}

# RLPF Table 5 task counts over 306 tasks (correct, FBR, RBR) and Table 8 (Slow, Gap, %).
TABLE_5 = {
    "Qwen3-32B": (34, 25, 17),
    "RLPF": (167, 142, 79),
    "RLVR": (153, 97, 50),
    "Runtime": (116, 97, 54),
}
TABLE_8 = {
    "Qwen3-32B": (2.9, 2.6),
    "RLVR": (18.3, 15.4),
    "Runtime": (6.2, 14.1),
    "RLPF": (8.2, 20.6),
}
TABLE_1_OF = {
    "Qwen3-32B": "Qwen3-32B (base)",
    "RLPF": "RLPF-32B",
    "RLVR": "RLVR correctness only",
    "Runtime": "Runtime reward only",
}


def results_with_counts(mk, n: int, correct: int, fbr: int, rbr: int):  # type: ignore[no-untyped-def]
    """n tasks: rbr reference-level, fbr−rbr faster only, correct−fbr slow, rest wrong."""
    out = []
    for i in range(n):
        if i < rbr:
            tc = 0.4  # beats the reference (Tr = 0.5)
        elif i < fbr:
            tc = 0.8  # beats the baseline only (Tb = 1.0)
        elif i < correct:
            tc = 1.2  # correct but slower than the baseline
        else:
            out.append(mk(f"t{i}", Stage.WO))
            continue
        out.append(mk(f"t{i}", Stage.OK, tc, 1.0, 0.5))
    return out


@pytest.mark.parametrize("row", sorted(TABLE_1))
def test_table_1_conditional_rates_from_its_crr_fbr_rbr(mk, row: str) -> None:  # type: ignore[no-untyped-def]
    crr, fbr, rbr, slow_crr, gap_fbr = TABLE_1[row]
    # 10,000 tasks reproduce the printed two-decimal percentages exactly, which is what the
    # paper derived its Slow/CRR and Gap/FBR columns from.
    to_count = lambda pct: round(pct * 100)  # noqa: E731
    results = results_with_counts(mk, 10_000, to_count(crr), to_count(fbr), to_count(rbr))
    table = perfcodebench_table(results, PerfCodeBenchConfig(bootstrap={"replicates": 8}))
    assert table.crr.percent() == pytest.approx(crr)
    assert table.fbr.percent() == pytest.approx(fbr)
    assert table.rbr.percent() == pytest.approx(rbr)
    assert round(table.slow_over_crr.percent(), 2) == slow_crr
    assert round(table.gap_over_fbr.percent(), 2) == gap_fbr


@pytest.mark.parametrize("model", sorted(TABLE_5))
def test_table_8_slow_and_gap_from_table_5_counts(mk, model: str) -> None:  # type: ignore[no-untyped-def]
    correct, fbr, rbr = TABLE_5[model]
    table = perfcodebench_table(
        results_with_counts(mk, 306, correct, fbr, rbr),
        PerfCodeBenchConfig(bootstrap={"replicates": 8}),
    )
    slow, gap = TABLE_8[model]
    assert round(table.slow.percent(), 1) == slow
    assert round(table.gap.percent(), 1) == gap
    # The same counts print as Table 1's CRR/FBR/RBR.
    crr_pub, fbr_pub, rbr_pub = TABLE_1[TABLE_1_OF[model]][:3]
    assert round(table.crr.percent(), 2) == crr_pub
    assert round(table.fbr.percent(), 2) == fbr_pub
    assert round(table.rbr.percent(), 2) == rbr_pub


def test_cgre_clips_and_defines_the_empty_gap() -> None:
    assert cgre(tc=0.75, tb=1.0, tr=0.5) == pytest.approx(0.5)
    assert cgre(tc=0.2, tb=1.0, tr=0.5) == 1.0  # faster than the reference: clipped
    assert cgre(tc=1.5, tb=1.0, tr=0.5) == 0.0  # slower than the baseline: clipped
    assert cgre(tc=1.0, tb=1.0, tr=0.5) == 0.0  # Tc = Tb closes nothing
    # Tb <= Tr: nothing to close; the limit of the ratio as Tr rises to Tb is FBR.
    assert cgre(tc=0.9, tb=1.0, tr=1.0) == 1.0
    assert cgre(tc=1.0, tb=1.0, tr=1.0) == 0.0
    assert cgre(tc=1.1, tb=1.0, tr=1.0) == 0.0
    assert cgre(tc=1.05, tb=1.0, tr=1.2) == 0.0  # within the slow reference, but not faster
    assert cgre(tc=0.9, tb=1.0, tr=1.2) == 1.0
    # The limit really is FBR: a reference just below the baseline gives nearly the same.
    assert cgre(tc=0.9, tb=1.0, tr=1.0 - 1e-9) == 1.0
    assert cgre(tc=1.05, tb=1.0, tr=1.0 - 1e-9) == 0.0


def test_sample_outcome_signals(mk) -> None:  # type: ignore[no-untyped-def]
    o = sample_outcome(mk("a", Stage.OK, 0.75, 1.0, 0.5))
    assert (o.correct, o.fbr, o.rbr, o.cgre, o.speedup) == (
        True,
        True,
        False,
        0.5,
        pytest.approx(4 / 3),
    )
    o = sample_outcome(mk("a", Stage.OK, 0.5, 1.0, 0.5))
    assert (o.fbr, o.rbr, o.cgre) == (True, True, 1.0)  # Tc = Tr is reference-level
    o = sample_outcome(mk("a", Stage.OK, 1.0, 1.0, 0.5))
    assert (o.fbr, o.rbr) == (False, False)  # Tc = Tb is not faster
    o = sample_outcome(mk("a", Stage.WO, 0.1, 1.0, 0.5))
    assert (o.correct, o.fbr, o.rbr, o.cgre) == (False, False, False, 0.0)


def test_hand_computed_table(mk) -> None:  # type: ignore[no-untyped-def]
    results = [
        mk("a", Stage.OK, 0.4, 1.0, 0.5),  # RBR, CGRE 1
        mk("b", Stage.OK, 0.75, 1.0, 0.5),  # FBR only, CGRE 0.5
        mk("c", Stage.OK, 0.6, 1.0, 0.5),  # FBR only, CGRE 0.8 (counts for CGRE>=0.8)
        mk("d", Stage.OK, 1.5, 1.0, 0.5),  # slow
        mk("e", Stage.NC),
    ]
    t = perfcodebench_table(results)
    assert t.n_tasks == 5
    assert t.crr.value == pytest.approx(4 / 5)
    assert t.fbr.value == pytest.approx(3 / 5)
    assert t.rbr.value == pytest.approx(1 / 5)
    assert t.slow.value == pytest.approx(1 / 5)
    assert t.gap.value == pytest.approx(2 / 5)
    assert t.slow_over_crr.value == pytest.approx(1 / 4)
    assert t.gap_over_fbr.value == pytest.approx(2 / 3)
    assert t.cgre.value == pytest.approx((1 + 0.5 + 0.8) / 5)
    assert t.cgre_at_least.value == pytest.approx(2 / 5)
    assert t.cgre_at_least.name == "cgre>=0.8"
    assert t.crr.denominator == "all tasks"
    assert t.slow_over_crr.denominator == "correct tasks"
    assert t.gap_over_fbr.per_task == {"a": 0.0, "b": 1.0, "c": 1.0, "d": None, "e": None}
    assert t.cgre.per_task["b"] == pytest.approx(0.5)


def test_samples_of_a_task_are_averaged(mk) -> None:  # type: ignore[no-untyped-def]
    results = [
        mk("a", Stage.OK, 0.4, 1.0, 0.5, sample=0),
        mk("a", Stage.WO, sample=1),
        mk("b", Stage.OK, 1.2, 1.0, 0.5),
    ]
    t = perfcodebench_table(results)
    assert t.crr.per_task == {"a": 0.5, "b": 1.0}
    assert t.crr.value == pytest.approx(0.75)
    assert t.rbr.value == pytest.approx(0.25)


def test_correct_without_timing_counts_for_crr_only(mk) -> None:  # type: ignore[no-untyped-def]
    v = mk("a", Stage.OK, 0.4, 1.0, 0.5)
    assert v.candidate is not None
    v.candidate.status = TimingStatus.DEGRADED
    t = perfcodebench_table([v, mk("b", Stage.OK, 0.4, 1.0, 0.5)])
    assert t.crr.value == 1.0
    assert t.fbr.value == 0.5
    assert any("lack a usable" in note for note in t.crr.notes)


def test_conditional_rate_without_denominator_is_undefined(mk) -> None:  # type: ignore[no-untyped-def]
    t = perfcodebench_table([mk("a", Stage.WO), mk("b", Stage.NR)])
    assert t.crr.value == 0.0
    assert t.slow_over_crr.value is None
    assert any("undefined" in note for note in t.slow_over_crr.notes)


def test_metric_wrapper_picks_a_column(mk) -> None:  # type: ignore[no-untyped-def]
    results = [mk("a", Stage.OK, 0.4, 1.0, 0.5), mk("b", Stage.WO)]
    m = PerfCodeBenchMetric("cgre>=x", PerfCodeBenchConfig(cgre_threshold=0.5))
    assert m.name == "cgre>=0.5"
    assert m.compute(results).value == 0.5
