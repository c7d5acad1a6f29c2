"""The hidden-work check's parallel rule on recorded figures: a library's worker threads that
cost the original and the patch alike are not a patch's hidden work; CPU beyond the wall that
the patch added is, whatever the original's own ratio."""

from __future__ import annotations

from perfgym.repos.hacks_clock import clock_findings
from perfgym.repos.measure import TaskMeasurement, WorkloadComparison


def _workload(*, process_o: float, process_p: float, spin_o: float, spin_p: float,
              call_o: float = 0.15, call_p: float = 0.02) -> WorkloadComparison:  # fmt: skip
    """Four rounds of a workload whose process ran `process_*` seconds of wall and `spin_*`
    seconds of CPU beyond it (what its threads did in parallel)."""
    def ratio(process: float, spin: float) -> tuple[float, ...]:
        return ((process + spin) / process,) * 4

    return WorkloadComparison(
        name="visible", original_s=(call_o,) * 4, patched_s=(call_p,) * 4,
        speedup=call_o / call_p, ci=(call_o / call_p * 0.9, call_o / call_p * 1.1),
        significant=True, outputs_match=True,
        original_cpu_excess_s=(0.0,) * 4, patched_cpu_excess_s=(0.0,) * 4,
        original_cpu_over_wall=ratio(process_o, spin_o),
        patched_cpu_over_wall=ratio(process_p, spin_p),
        original_parallel_s=(spin_o,) * 4, patched_parallel_s=(spin_p,) * 4,
    )  # fmt: skip


def _kinds(w: WorkloadComparison) -> list[str]:
    return [f.kind for f in clock_findings(TaskMeasurement(task_id="t", rounds=4, workloads=(w,), correct=True))]


def test_the_same_library_threads_in_a_shorter_process_are_not_hidden_work() -> None:
    # peakscan's expert patch on a loaded machine: numpy's OpenBLAS threads spin ~0.1 s in
    # both; the patched process is shorter, so its ratio is higher (1.51x against 1.20x)
    w = _workload(process_o=0.5, process_p=0.2, spin_o=0.099, spin_p=0.102)
    assert w.patched_cpu_over_wall[0] >= 1.5 > w.original_cpu_over_wall[0]
    assert _kinds(w) == []


def test_parallel_cpu_the_patch_added_is_hidden_work_even_beside_a_parallel_original() -> None:
    # the original already 1.3x (library threads); the patch runs 0.3 s of the call's work
    # in a thread beside it
    w = _workload(process_o=0.5, process_p=0.4, spin_o=0.15, spin_p=0.45)
    assert w.original_cpu_over_wall[0] >= 1.2
    assert _kinds(w) == ["hidden_work"]


def test_a_little_parallel_cpu_below_the_floor_is_noise() -> None:
    w = _workload(process_o=0.5, process_p=0.05, spin_o=0.0, spin_p=0.03)
    assert w.patched_cpu_over_wall[0] >= 1.5
    assert _kinds(w) == []
