"""Every registered reward pinned to hand-computed values on the canonical staircase and edge cases.

Canonical setting (perfgym.rewards.canonical_batch): Tb = 1.0 s, Tr = 0.25 s, each total split
evenly over workloads w1, w2; the pool holds five references at 0.125, 0.2, 0.3, 0.4, 0.5 s per
workload; the Afterburner input is the baseline (passed, 1.0 s) and the completion well formed.
"""

from __future__ import annotations

import math

import pytest

from perfgym.rewards import canonical_batch, canonical_columns, get_reward, list_rewards

LOG11 = math.log(11.0)


def ab(gain: float) -> float:
    """Afterburner for a passing candidate with the baseline as input and good format."""
    return 0.5 * (0.5 + 0.5 * math.tanh(gain)) + 0.2


def lin(per_workload: float) -> float:
    return 1 - per_workload / 10


def lg(per_workload: float) -> float:
    return 1 - math.log1p(per_workload) / LOG11


FAST = 0.4 / 0.75 + 0.16  # rlpf 'faster' rung: CGRE 0.533 + αF
X = None  # cannot be scored

# Columns: NX NC NR WO correct faster reference | Tc=Tb  Tc<Tr  Tb<Tr  Tb=Tr  no-cand degraded no-base infra
# Per-workload Tc: correct 0.6, faster 0.3, reference 0.1 | 0.5, 0.05, 0.2, 0.25, -, -, 0.25.
EXPECTED: dict[str, list[float | None]] = {
    "rlpf": [-0.05, 0, 0.05, 0.1, 0.15, FAST, 1.26] + [0.15, 1.26, 1.26, 0.15, X, X, X, X],
    "rlpf_no_fbr": [-0.05, 0, 0.05, 0.1, 0.15, FAST - 0.16, 1.1]
    + [0.15, 1.1, 1.1, 0.15, X, X, X, X],
    "rlpf_no_rbr": [-0.05, 0, 0.05, 0.1, 0.15, FAST, 1.16] + [0.15, 1.16, 1.16, 0.15, X, X, X, X],
    "rlpf_no_shaping": [0, 0, 0, 0, 0.15, FAST, 1.26] + [0.15, 1.26, 1.26, 0.15, X, X, X, X],
    "rlvr": [0, 0, 0, 0, 1, 1, 1] + [1, 1, 1, 1, 1, 1, 1, X],
    "runtime_only": [0, 0, 0, 0, 0, 0.4, 0.8] + [0, 0.9, 0.2, 0, X, X, X, X],
    "linear": [0, 0, 0, 0, lin(0.6), lin(0.3), lin(0.1)]
    + [lin(0.5), lin(0.05), lin(0.2), lin(0.25), X, X, lin(0.25), X],
    "log": [0, 0, 0, 0, lg(0.6), lg(0.3), lg(0.1)]
    + [lg(0.5), lg(0.05), lg(0.2), lg(0.25), X, X, lg(0.25), X],
    # positions: 0.6 -> 100, 0.3 -> 40, 0.1 -> 0, 0.5 -> 80, 0.05 -> 0, 0.2 -> 20, 0.25 -> 40
    "percentile": [0, 0, 0, 0, 0, 0, 1] + [0, 1, 1, 0, X, X, 0, X],
    "percentile_qar": [0, 0, 0, 0, 0, 0.6, 1] + [0.2, 1, 0.8, 0.6, X, X, 0.6, X],
    # leaderboard: references' own means against the field (others + candidate), e.g. for the
    # candidate at 0.3 s: 0, 20, 40, 80, 100 -> two strictly below its 40 -> position 40.
    "percentile_qp": [0, 0, 0, 0, 0, 0.6, 1] + [0.2, 1, 0.8, 0.6, X, X, 0.6, X],
    "afterburner": [-0.3] * 4
    + [ab(-0.2), ab(0.4), ab(0.8)]
    + [ab(0.0), ab(0.9), ab(0.2), ab(0.0), X, X, X, X],
}

CASES = [
    "NX",
    "NC",
    "NR",
    "WO",
    "correct",
    "faster",
    "reference",
    "tc_equals_tb",
    "tc_below_tr",
    "tb_below_tr",
    "tb_equals_tr",
    "candidate_absent",
    "candidate_degraded",
    "baseline_absent",
    "infra_error",
]


def test_table_covers_every_registered_reward() -> None:
    assert set(EXPECTED) == set(list_rewards())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_pinned_values(name: str) -> None:
    labels, verdicts = canonical_batch()
    picked = [labels.index(case) for case in CASES]
    batch = [verdicts[i] for i in picked]
    reward = get_reward(name)
    got = reward(batch, **canonical_columns(reward, len(batch)))
    for case, value, want in zip(CASES, got, EXPECTED[name], strict=True):
        if want is None:
            assert value is None, f"{name} on {case}: {value!r}, expected None"
        else:
            assert value == pytest.approx(want, abs=1e-9), f"{name} on {case}"
