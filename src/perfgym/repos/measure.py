"""`measure_workloads`: original against patched, each workload in fresh sandboxed processes,
interleaved rounds, perfgym's paired comparison per workload and a geometric mean per task.

Every time comes from the timer process outside the workload: import, setup() and the first
call with its digest (R -> H). What is compared per run is the first call + its digest + the
*charge* for import + setup: when the patched runs' import + setup is significantly slower
than the original's (paired, no margin), the median growth; and per run at least whatever
exceeds the original's median by more than a tolerance (twice the original's own range over
the rounds, at least 2 ms or 10 %), so a shift made in some rounds only is charged in those.
Work a patch moves out of the call -- into module import, setup, a cache file written there
-- is counted where it went, while the import and setup work no patch changed (numpy's import,
generating the data) does not dilute an honest speedup. Work done in parallel with the counted
time (CPU beyond its wall, read by the timer over R -> H) is charged the same way when the
patched runs do significantly more of it than the original's (`_parallel_charges`).
`hacks_clock` flags the shift; the
phases, the workload process's own (forgeable) time and the run's CPU are kept for it and for
the report.

Round r runs every workload once on each copy, the order of the two copies alternating from
round to round (slow drift of the machine cancels in the per-round ratio). A round in which
either copy's import + setup stalled is measured once more on both copies and decided on that
(`_stalled_rounds`). Per workload the `compare(paired=True)` of the rounds gives the ratio
patched/original, its t interval and the significance verdict (with perfgym's practical-equivalence margin); speedup = 1 / ratio. The
task's speedup is the geometric mean over the workloads it is decided on (the hidden ones where
the task has any, else all), its CI the t interval of their per-round mean log speedups. The outputs (digest of repr of each first call) of patched and original
must agree on every run: a mismatch is a correctness failure and the speedup does not count.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import ConfigError
from perfgym.repos.copy import RepoCopy
from perfgym.repos.runner import WorkloadRun, run_workload
from perfgym.repos.task import RepoTask, Workload
from perfgym.sandbox.base import Sandbox
from perfgym.timing.compare import compare
from perfgym.timing.estimators import geometric_mean

#: Parallel CPU added below this is not charged (a few scheduler ticks of a library thread).
PARALLEL_CHARGE_MIN_S = 0.002
_FLOOR_S = 1e-7  # a first call below the clock's resolution still has a positive duration
#: A run's import + setup growth left uncharged unless the growth is consistent: at least this,
#: this share of the original's median, and twice the original's own range over the rounds.
TOLERANCE_S = 0.002
TOLERANCE_SHARE = 0.10
#: A run whose import + setup took this many times its side's median over the rounds, and at
#: least `STALL_MIN_S` more, stalled (a load spike, a cold page cache): its round is measured
#: once more on both copies instead of decided on (`_stalled_rounds`).
STALL_FACTOR = 4.0
STALL_MIN_S = 0.05


class WorkloadComparison(BaseModel):
    """One workload, original against patched, over the rounds. `original_s` / `patched_s` are
    the counted times (first call + digest + charged import/setup growth, module docstring)."""

    model_config = ConfigDict(frozen=True)

    name: str
    hidden: bool = False
    original_s: tuple[float, ...] = ()
    patched_s: tuple[float, ...] = ()
    speedup: float | None = Field(None, description="original / patched (geometric mean).")
    ci: tuple[float, float] | None = None
    p_value: float | None = None
    significant: bool = Field(False, description="patched significantly faster (compare).")
    slower: bool = Field(False, description="patched significantly slower.")
    outputs_match: bool = True
    error: str = ""
    original_repeat_s: tuple[float, ...] = ()
    patched_repeat_s: tuple[float, ...] = ()
    original_call_s: tuple[float, ...] = Field((), description="First calls alone, per round.")
    patched_call_s: tuple[float, ...] = ()
    original_setup_s: tuple[float, ...] = Field((), description="Import + setup, per round.")
    patched_setup_s: tuple[float, ...] = ()
    original_total_s: tuple[float, ...] = Field(
        (), description="Import + setup + first call + digest, per round (the timer's R -> H)."
    )
    patched_total_s: tuple[float, ...] = ()
    charged_s: tuple[float, ...] = Field(
        (), description="Import + setup growth charged to each patched round's time."
    )
    parallel_charged_s: tuple[float, ...] = Field(
        (), description="Parallel CPU charged to each patched round's time (`_parallel_charges`)."
    )
    call_speedup: float | None = Field(None, description="First call alone (reported only).")
    patched_inproc_s: tuple[float, ...] = Field(
        (), description="The patched process's own first-call times (the cross-check)."
    )
    original_cpu_excess_s: tuple[float, ...] = Field(
        (), description="The run's CPU beyond its timed processes' (other processes' work)."
    )
    patched_cpu_excess_s: tuple[float, ...] = ()
    original_cpu_over_wall: tuple[float, ...] = ()
    patched_cpu_over_wall: tuple[float, ...] = ()
    original_parallel_s: tuple[float, ...] = Field(
        (), description="The workload's CPU beyond the wall over the counted time (import, "
        "setup, first call and its digest): work done in parallel with it, a library's worker "
        "threads included."
    )
    patched_parallel_s: tuple[float, ...] = ()
    remeasured_rounds: tuple[int, ...] = Field(
        (), description="Rounds measured once more because a run's import + setup stalled "
        "(`_stalled_rounds`); the second measurement is the one kept, charged as any other."
    )

    @property
    def ok(self) -> bool:
        return not self.error and self.outputs_match and self.speedup is not None


class TaskMeasurement(BaseModel):
    """All workloads of one task measured on an original and a patched copy."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    rounds: int
    workloads: tuple[WorkloadComparison, ...]
    speedup: float | None = Field(
        None,
        description="Geometric mean over the workloads it is decided on: the hidden ones where "
        "the task has any, else every one.",
    )
    ci: tuple[float, float] | None = None
    correct: bool = Field(description="Every workload ran on both copies with equal outputs.")

    def by_name(self, name: str) -> WorkloadComparison:
        return next(w for w in self.workloads if w.name == name)

    @property
    def error(self) -> str:
        return "; ".join(f"{w.name}: {w.error}" for w in self.workloads if w.error)


def _t_interval(logs: Sequence[float], alpha: float = 0.05) -> tuple[float, float] | None:
    if len(logs) < 3:
        return None
    mean = sum(logs) / len(logs)
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))
    from scipy.stats import t

    half = float(t.ppf(1 - alpha / 2, len(logs) - 1)) * sd / math.sqrt(len(logs))
    return (math.exp(mean - half), math.exp(mean + half))


def _compare(name: str, hidden: bool, orig: list[WorkloadRun], pat: list[WorkloadRun],
             alpha: float, remeasured: Sequence[int] = ()) -> WorkloadComparison:  # fmt: skip
    failed = [r for r in orig if not r.ok]
    if failed:
        return WorkloadComparison(name=name, hidden=hidden, error=f"original: {failed[0].error}")
    failed = [r for r in pat if not r.ok]
    if failed:
        return WorkloadComparison(name=name, hidden=hidden, error=f"patched: {failed[0].error}")
    reference = {r.digest for r in orig}
    match = all(r.digest in reference for r in pat) and len(reference) == 1
    if not match or len(orig) < 3:
        return WorkloadComparison(name=name, hidden=hidden, outputs_match=match,
                                  error="outputs differ from the original's" if not match
                                  else "too few rounds")  # fmt: skip
    pre_o, pre_p = [_pre(r) for r in orig], [_pre(r) for r in pat]
    charges = _charges(pre_o, pre_p)
    par_charges = _parallel_charges([_parallel(r) for r in orig], [_parallel(r) for r in pat])
    a = [max(r.first_s + r.digest_s + ch + pc, _FLOOR_S)
         for r, ch, pc in zip(pat, charges, par_charges, strict=True)]  # fmt: skip
    b = [max(r.first_s + r.digest_s, _FLOOR_S) for r in orig]
    c = compare(a, b, alpha=alpha, paired=True)
    ci = (1.0 / c.ci[1], 1.0 / c.ci[0]) if c.ci else None
    calls_a = [max(r.first_s, _FLOOR_S) for r in pat]
    calls_b = [max(r.first_s, _FLOOR_S) for r in orig]
    call_speedup = geometric_mean(
        (y / x for x, y in zip(calls_a, calls_b, strict=True)), "call speed-up"
    )
    return WorkloadComparison(
        name=name,
        hidden=hidden,
        original_s=tuple(b),
        patched_s=tuple(a),
        speedup=1.0 / c.ratio,
        ci=ci,
        p_value=c.p_value,
        significant=c.faster == "a",
        slower=c.faster == "b",
        outputs_match=match,
        error="" if match else "outputs differ from the original's",
        original_repeat_s=tuple(x for r in orig for x in r.repeat_s),
        patched_repeat_s=tuple(x for r in pat for x in r.repeat_s),
        original_call_s=tuple(calls_b),
        patched_call_s=tuple(calls_a),
        original_setup_s=tuple(pre_o),
        patched_setup_s=tuple(pre_p),
        original_total_s=tuple(r.total_s for r in orig),
        patched_total_s=tuple(r.total_s for r in pat),
        charged_s=tuple(charges),
        parallel_charged_s=tuple(par_charges),
        call_speedup=call_speedup,
        patched_inproc_s=tuple(r.inproc_first_s for r in pat),
        original_cpu_excess_s=tuple(_cpu_excess(r) for r in orig),
        patched_cpu_excess_s=tuple(_cpu_excess(r) for r in pat),
        original_cpu_over_wall=tuple(_cpu_over_wall(r) for r in orig),
        patched_cpu_over_wall=tuple(_cpu_over_wall(r) for r in pat),
        original_parallel_s=tuple(_parallel(r) for r in orig),
        patched_parallel_s=tuple(_parallel(r) for r in pat),
        remeasured_rounds=tuple(remeasured),
    )


def _stalled_rounds(orig: list[WorkloadRun], pat: list[WorkloadRun]) -> list[int]:
    """The rounds in which either copy's run stalled before its first call: import + setup
    `STALL_FACTOR` times its own copy's median over the rounds and `STALL_MIN_S` above it.
    Such a stall (a 200-430 ms pause against bloomc's ~20 ms, seen in original and patched
    rounds alike on a busy machine) says nothing about the patch: decided on, it is charged to
    a patched round as moved work, or widens the room an original's range leaves uncharged.
    Measured again once, a patch whose own import really grows in some rounds grows again in
    some of the new ones and is charged there as before: the second draw is no cheaper."""
    if not orig or len(orig) != len(pat) or not all(r.ok for r in (*orig, *pat)):
        return []
    stalled: set[int] = set()
    for side in (orig, pat):
        pre = [_pre(r) for r in side]
        med = statistics.median(pre)
        stalled |= {
            i for i, x in enumerate(pre) if x > STALL_FACTOR * med and x - med > STALL_MIN_S
        }
    return sorted(stalled)


def _cpu_and_wall(run: WorkloadRun) -> tuple[float, float]:
    """The workload's CPU and wall over the counted time (R -> H), where the timer read it;
    else over the workload process's whole life (with its waited children), which a sleep
    after the counted time dilutes."""
    if run.window_cpu_s is not None:
        return run.window_cpu_s, max(run.total_s, _FLOOR_S)
    return run.child_cpu_s, max(run.process_s, _FLOOR_S)


def _cpu_over_wall(run: WorkloadRun) -> float:
    cpu, wall = _cpu_and_wall(run)
    return cpu / wall


def _parallel(run: WorkloadRun) -> float:
    cpu, wall = _cpu_and_wall(run)
    return max(0.0, cpu - wall)


def _charges(pre_o: list[float], pre_p: list[float]) -> list[float]:
    """Per patched run, the import + setup time charged to it: the median growth over the
    original's when the patched runs' import + setup grew consistently (significantly slower,
    or every patched round above the original's median by the narrow tolerance: one load
    spike in an original round widens the test's interval and would otherwise let a whole
    shift through), and at least, per run, whatever exceeds the original's median by more
    than the wide tolerance (a shift made in some rounds only)."""
    ref = statistics.median(pre_o)
    steady = 0.0
    floor = [max(x, _FLOOR_S) for x in pre_p], [max(x, _FLOOR_S) for x in pre_o]
    every_round_above = min(pre_p) > ref + max(TOLERANCE_S, TOLERANCE_SHARE * ref)
    if every_round_above or compare(*floor, paired=True, margin=0.0).faster == "b":
        steady = max(0.0, statistics.median(pre_p) - ref)
    allowed = ref + uncharged_room(pre_o)
    return [max(steady, x - allowed) for x in pre_p]


def uncharged_room(pre_o: Sequence[float]) -> float:
    """The import + setup growth a patched round may show over the original's median without
    a per-round charge: at least `TOLERANCE_S`, `TOLERANCE_SHARE` of that median, and twice
    the original's own range over the rounds (its noise, which an honest patch's rounds show
    too). Work a patch moves out of the call and into import or setup hides in it unless the
    growth is consistent (`_charges`): where this room is comparable to the call itself, the
    clock cannot resolve such a shift (`perfgym audit`'s `repo-setup-cover`)."""
    ref = statistics.median(pre_o)
    return max(TOLERANCE_S, TOLERANCE_SHARE * ref, 2 * (max(pre_o) - min(pre_o)))


def _parallel_charges(par_o: list[float], par_p: list[float]) -> list[float]:
    """Per patched run, the parallel CPU charged to it: where the patched runs' CPU beyond the
    wall over the counted time is significantly above the original's (a one-sided paired
    t-test on the differences),
    the median excess over the original's (at least `PARALLEL_CHARGE_MIN_S`) on every run.
    Work done in another thread or process
    beside the call is work all the same: counted, it buys no speedup, however little of it
    there is (the `hidden_work` finding needs 50 ms or a quarter of the call, which alone
    would leave up to 1.33x to a patch that forks a quarter of its work). A library's own
    threads spinning alike in both (numpy's OpenBLAS at import) are not significant."""
    added = statistics.median(par_p) - statistics.median(par_o)
    if added < PARALLEL_CHARGE_MIN_S or not _more(par_p, par_o):
        return [0.0] * len(par_p)
    return [added] * len(par_p)


def _more(a: list[float], b: list[float], alpha: float = 0.05) -> bool:
    """One-sided paired t-test on the differences a - b (seconds, not ratios: a figure that is
    0 in one round and 50 ms in another has no meaningful ratio)."""
    d = [x - y for x, y in zip(a, b, strict=True)]
    if len(d) < 2:
        return False
    mean = sum(d) / len(d)
    sd = statistics.stdev(d)
    if sd == 0:
        return mean > 0
    from scipy.stats import t

    return float(t.sf(mean / (sd / math.sqrt(len(d))), len(d) - 1)) < alpha


def _pre(run: WorkloadRun) -> float:
    """Everything the run spent before its first call: import, setup, the runner's own steps."""
    return max(0.0, run.total_s - run.first_s - run.digest_s)


def _cpu_excess(run: WorkloadRun) -> float:
    """CPU the sandbox counted for the run beyond the timer's and the workload process's own
    (with the children it waited for): processes left running, that nobody waited for."""
    return max(0.0, run.cpu_s - run.child_cpu_s - run.timer_cpu_s) if run.cpu_s else 0.0


def measure_workloads(
    task: RepoTask,
    original_copy: RepoCopy | Path,
    patched_copy: RepoCopy | Path,
    workloads: Sequence[Workload] | None = None,
    *,
    rounds: int = 5,
    repeats: int = 0,
    alpha: float = 0.05,
    sandbox: Sandbox | None = None,
) -> TaskMeasurement:
    """Measure `workloads` (default: all of the task's, hidden ones included) on both copies.
    `repeats` > 0 also times that many further calls in each process (the caching check)."""
    chosen = list(task.workloads if workloads is None else workloads)
    if not chosen:
        raise ConfigError(f"task {task.id!r} has no workloads to measure")
    if rounds < 3:
        raise ConfigError("measure_workloads needs at least 3 rounds for a paired interval")
    runs: dict[str, tuple[list[WorkloadRun], list[WorkloadRun]]] = {
        w.name: ([], []) for w in chosen
    }
    broken: set[str] = set()

    def measure_round(r: int, w: Workload) -> tuple[WorkloadRun, WorkloadRun]:
        """Round r of workload w on both copies, their order alternating with r."""
        order = ((0, original_copy), (1, patched_copy))
        got = {side: run_workload(task, copy, w, repeats=repeats, sandbox=sandbox)
               for side, copy in (order if r % 2 == 0 else order[::-1])}  # fmt: skip
        o, p = got[0], got[1]
        if not (o.ok and p.ok):
            broken.add(w.name)  # a crash repeats: one failed run says it
        elif o.digest != p.digest:
            broken.add(w.name)  # outputs differ: the verdict is in, timing it is moot
        return o, p

    for r in range(rounds):
        for w in chosen:
            if w.name in broken:
                continue
            for side, run in enumerate(measure_round(r, w)):
                runs[w.name][side].append(run)
    remeasured: dict[str, list[int]] = {w.name: [] for w in chosen}
    for w in chosen:
        for r in _stalled_rounds(*runs[w.name]) if w.name not in broken else ():
            for side, run in enumerate(measure_round(r, w)):
                runs[w.name][side][r] = run
            remeasured[w.name].append(r)
            if w.name in broken:
                break
    comps = tuple(_compare(w.name, w.hidden, *runs[w.name], alpha, remeasured[w.name])
                  for w in chosen)  # fmt: skip
    correct = all(c.ok for c in comps)
    speedup = ci = None
    # The speed-up is the hidden workloads' where the task has any: the visible ones are the
    # patch author's to tune for (red team helper-81 shipped a table of the visible input's
    # answers, throttled under `visible_only`'s threshold: 5.4x against the expert's 3.7x).
    decided = [c for c in comps if c.hidden] or list(comps)
    if all(c.speedup is not None for c in comps):
        per_round = [
            sum(math.log(c.original_s[i] / c.patched_s[i]) for c in decided) / len(decided)
            for i in range(rounds)
        ]
        speedup = geometric_mean((c.speedup or 1.0 for c in decided), "task speed-up")
        ci = _t_interval(per_round, alpha)
    return TaskMeasurement(task_id=task.id, rounds=rounds, workloads=comps, speedup=speedup,
                           ci=ci, correct=correct)  # fmt: skip
