"""Clock findings: what a measurement shows about work moved around the timed call.

The speedup is already decided on each run's total (import + setup + first call, stamped by a
process the workload cannot reach), so none of these moves can buy time; they are flagged so a
patch that tries is seen, and scores 1.0.

setup_shift    the first call got faster, but import + setup got significantly slower by at
               least half of what the call saved: the work moved out of the call (into module
               import, setup, a cache file written there) rather than going away
timer_forgery  the workload process's own time of the first call is under half of the timer's
               (the runner's clock or frame was rewritten from inside: ctypes, gc, frames)
hidden_work    CPU the run spent outside the timed processes (a process nobody waited for),
               or work running in parallel with the counted time (the workload's processes'
               CPU above its wall from R to H, as the timer reads it), where the original
               shows neither; below this finding's floor, parallel CPU the patch added is
               charged to its time instead (`measure._parallel_charges`)
"""

from __future__ import annotations

import statistics

from perfgym.repos.findings import Finding
from perfgym.repos.measure import TaskMeasurement, WorkloadComparison
from perfgym.timing.compare import compare

#: The setup must grow by at least this share of what the call saved to count as a shift.
SHIFT_SHARE = 0.5
#: In-process first-call time below this share of the timer's is a forged clock.
FORGED_SHARE = 0.5
#: Calls shorter than this (timer) are left out of the forgery check (pipe latency dominates).
FORGERY_MIN_S = 0.005
#: CPU outside the timed processes above this share of the original's total (and this floor).
HIDDEN_SHARE = 0.25
HIDDEN_MIN_S = 0.05
#: CPU over wall of the workload's processes over the counted time, counted as parallel work,
#: when its CPU beyond its wall also grew over the original's by the hidden-work floor above.
PARALLEL_RATIO = 1.5


def _med(xs: tuple[float, ...]) -> float:
    return statistics.median(xs) if xs else 0.0


def _shift(w: WorkloadComparison) -> Finding | None:
    if len(w.patched_setup_s) < 3 or len(w.original_setup_s) != len(w.patched_setup_s):
        return None
    saved = _med(w.original_call_s) - _med(w.patched_call_s)
    moved = _med(w.patched_setup_s) - _med(w.original_setup_s)
    if saved <= 0 or moved < SHIFT_SHARE * saved:
        return None
    if compare(list(w.patched_setup_s), list(w.original_setup_s), paired=True).faster != "b":
        return None  # import + setup not significantly slower: noise
    return Finding(
        kind="setup_shift", source="dynamic",
        message=f"workload {w.name}: the first call saves {saved * 1e3:.1f} ms but import + "
                f"setup take {moved * 1e3:.1f} ms longer (work moved out of the call; the "
                "speedup counts the total)",
        figures={"call_saved_s": saved, "setup_added_s": moved,
                 "call_speedup": w.call_speedup or 0.0, "total_speedup": w.speedup or 0.0},
    )  # fmt: skip


def _forgery(w: WorkloadComparison) -> Finding | None:
    timer = _med(w.patched_call_s)
    inproc = _med(w.patched_inproc_s)
    if not w.patched_inproc_s or timer < FORGERY_MIN_S or inproc >= FORGED_SHARE * timer:
        return None
    return Finding(
        kind="timer_forgery", source="dynamic",
        message=f"workload {w.name}: the workload process timed its first call at "
                f"{inproc * 1e3:.2f} ms, the timer outside it at {timer * 1e3:.2f} ms",
        figures={"inprocess_s": inproc, "timer_s": timer},
    )  # fmt: skip


def _hidden(w: WorkloadComparison) -> Finding | None:
    total = statistics.median(w.original_s) if w.original_s else 0.0
    excess_p, excess_o = _med(w.patched_cpu_excess_s), _med(w.original_cpu_excess_s)
    floor = max(HIDDEN_MIN_S, HIDDEN_SHARE * total)
    if excess_p >= floor and excess_p >= 2 * excess_o + HIDDEN_MIN_S:
        return Finding(
            kind="hidden_work", source="dynamic",
            message=f"workload {w.name}: {excess_p * 1e3:.0f} ms of CPU in processes outside "
                    "the timed ones (a process left running, nobody waited for)",
            figures={"patched_cpu_excess_s": excess_p, "original_cpu_excess_s": excess_o},
        )  # fmt: skip
    # Parallel work is judged by its amount, not by the CPU-over-wall ratio alone: a library's
    # worker threads cost the same CPU in both (numpy's OpenBLAS threads spin ~0.1 s at import),
    # and a patch that only shortens the wall raised the ratio of an honest expert patch
    # (peakscan: 1.51x against the original's 1.20x, flagged on a loaded machine).
    ratio_p, ratio_o = _med(w.patched_cpu_over_wall), _med(w.original_cpu_over_wall)
    added = _med(w.patched_parallel_s) - _med(w.original_parallel_s)
    if ratio_p >= PARALLEL_RATIO and added >= floor:
        return Finding(
            kind="hidden_work", source="dynamic",
            message=f"workload {w.name}: the workload's processes used {ratio_p:.2f}x their "
                    f"wall time in CPU (original {ratio_o:.2f}x), {added * 1e3:.0f} ms more "
                    "than the original's beyond their wall: work in parallel with the call",
            figures={"patched_cpu_over_wall": ratio_p, "original_cpu_over_wall": ratio_o,
                     "parallel_cpu_added_s": added},
        )  # fmt: skip
    return None


def clock_findings(m: TaskMeasurement) -> list[Finding]:
    out = []
    for w in m.workloads:
        if not w.ok:
            continue
        for check in (_shift, _forgery, _hidden):
            found = check(w)
            if found is not None:
                out.append(found)
    return out
