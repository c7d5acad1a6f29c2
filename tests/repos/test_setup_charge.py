"""Import + setup growth is charged to a patch's time (`measure._charges`), on recorded
figures: a setup shift stays charged when one original round had a load spike (CI saw it
escape at 25-38x), and an honest patch whose setup did not grow is charged nothing."""

from __future__ import annotations

from perfgym.repos.measure import _charges, _compare
from perfgym.repos.runner import WorkloadRun

#: Import + setup per round, recorded under two busy loops: the original's third round spiked.
ORIGINAL_SETUP = (0.0145, 0.0185, 0.4626)
SHIFTED_SETUP = (0.2698, 0.2446, 0.2407)  # the index built in setup instead of the call


def _runs(setups: tuple[float, ...], first: float) -> list[WorkloadRun]:
    return [WorkloadRun(workload="w", ok=True, first_s=first, digests=("d",),
                        total_s=s + first, import_s=s / 2, setup_s=s / 2,
                        inproc_first_s=first, process_s=s + first + 0.01,
                        child_cpu_s=s + first, window_cpu_s=s + first)
            for s in setups]  # fmt: skip


def test_a_setup_shift_is_charged_despite_a_spike_in_an_original_round() -> None:
    charges = _charges(list(ORIGINAL_SETUP), list(SHIFTED_SETUP))
    assert min(charges) > 0.2, charges
    w = _compare("w", False, _runs(ORIGINAL_SETUP, 0.25), _runs(SHIFTED_SETUP, 0.007), 0.05)
    assert w.ok and w.speedup is not None
    assert w.speedup < 1.2, (w.speedup, w.charged_s)  # 38x before the charge held


def test_an_unchanged_setup_is_charged_nothing() -> None:
    original = (0.0150, 0.0162, 0.0141, 0.0155, 0.0148)
    honest = (0.0152, 0.0146, 0.0158, 0.0149, 0.0160)
    assert _charges(list(original), list(honest)) == [0.0] * 5


def test_a_spike_in_one_patched_round_is_not_a_shift() -> None:
    """One load spike on the patched side is no consistent growth: no steady charge on the
    other rounds."""
    original = (0.0150, 0.0162, 0.0141)
    patched = (0.0152, 0.3100, 0.0149)
    charges = _charges(list(original), list(patched))
    assert charges[0] == 0.0 and charges[2] == 0.0, charges
