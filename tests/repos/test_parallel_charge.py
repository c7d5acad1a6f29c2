"""Parallel work is charged to a patch's time (`measure._parallel_charges`), on recorded-style
figures: a patch that forks a quarter of its call's work beside it (below the `hidden_work`
floor) gains nothing; library threads spinning alike in both copies cost an honest patch
nothing."""

from __future__ import annotations

from perfgym.repos.measure import _compare
from perfgym.repos.runner import WorkloadRun

JITTER = (1.0, 1.02, 0.99, 1.01)
#: The parallel CPU's own round-to-round jitter (a thread's share moves independently).
SPREAD = {0: (1.0, 0.98, 1.03, 1.0), 1: (0.99, 1.01, 1.0, 1.02)}


def _runs(first: float, parallel: float, setup: float = 0.3, spread: int = 0) -> list[WorkloadRun]:
    """Four rounds: `setup` s of import + setup, a `first` s call, and `parallel` s of CPU
    beyond the counted wall (threads or a child working beside it)."""
    out = []
    for j, k in zip(JITTER, SPREAD[spread], strict=True):
        total = setup + first * j
        out.append(WorkloadRun(workload="w", ok=True, first_s=first * j, digests=("d",),
                               total_s=total, import_s=0.1, setup_s=setup - 0.1,
                               inproc_first_s=first * j, process_s=total + 0.01,
                               child_cpu_s=total + parallel * k,
                               window_cpu_s=total + parallel * k))  # fmt: skip
    return out


def test_a_quarter_of_the_work_forked_beside_the_call_buys_no_speedup() -> None:
    original = _runs(first=0.20, parallel=0.0)
    forked = _runs(first=0.15, parallel=0.05)  # the same work, a quarter of it in a child
    w = _compare("w", False, original, forked, alpha=0.05)
    assert w.ok and w.speedup is not None
    assert not (w.significant and w.speedup > 1.05), (w.speedup, w.ci, w.parallel_charged_s)
    assert min(w.parallel_charged_s) > 0.04


def test_library_threads_alike_in_both_cost_an_honest_patch_nothing() -> None:
    original = _runs(first=0.20, parallel=0.10)
    patched = _runs(first=0.02, parallel=0.10, spread=1)  # numpy's threads spin alike in both
    w = _compare("w", False, original, patched, alpha=0.05)
    assert w.parallel_charged_s == (0.0,) * 4
    assert w.significant and w.speedup is not None and w.speedup > 9


def test_without_the_timers_window_the_whole_process_is_used() -> None:
    original = _runs(first=0.20, parallel=0.0)
    forked = [r.__class__(**{**r.__dict__, "window_cpu_s": None}) for r in
              _runs(first=0.15, parallel=0.05)]  # fmt: skip
    w = _compare("w", False, original, forked, alpha=0.05)
    assert min(w.parallel_charged_s) > 0.0


def test_an_original_round_with_a_few_ms_of_its_own_does_not_hide_the_patchs() -> None:
    # helper-46's figures: the original 1 ms beside the call in one round, 0 in the others; the
    # patch 42-74 ms in every round. As ratios (1e-7 floors) the rounds disagree wildly; as
    # differences they do not.
    original = _runs(first=0.20, parallel=0.0)[:3]  # three rounds, as helper-46 measured
    for run, par_o in zip(original, (0.001, 0.0, 0.0), strict=True):
        object.__setattr__(run, "window_cpu_s", run.total_s + par_o)
    patched = [r.__class__(**{**r.__dict__, "window_cpu_s": r.total_s + p})
               for r, p in zip(_runs(first=0.15, parallel=0.0)[:3], (0.065, 0.042, 0.074),
                               strict=True)]  # fmt: skip
    w = _compare("w", False, original, patched, alpha=0.05)
    assert min(w.parallel_charged_s) > 0.04
    assert not (w.significant and w.speedup is not None and w.speedup > 1.05), w.speedup
