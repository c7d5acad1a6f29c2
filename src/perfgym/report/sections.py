"""The report's numbers, per suite: leaderboard, per-task table, staircase, stages, speedups,
transitions. Pure functions of runs (they call `perfgym.metrics` and `perfgym.rewards`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Stage, Verdict
from perfgym.metrics import (
    FailureStages,
    PerfCodeBenchConfig,
    PerfCodeBenchTable,
    ResultsPolicy,
    SpeedupDistribution,
    Transitions,
    failure_stages,
    perfcodebench_table,
    sample_outcome,
    speedup_distribution,
    transitions,
)
from perfgym.metrics.perfcodebench import SampleOutcome
from perfgym.report.runs import Run
from perfgym.rewards import RUNGS, get_reward
from perfgym.timing.decision import speed_call

#: Sandbox failures are neither right nor wrong: the report leaves them out and says so.
POLICY = ResultsPolicy(infra_errors="exclude")


@dataclass
class SuiteSection:
    """Everything the report shows about one suite."""

    suite: str
    runs: list[Run]
    leaderboard: dict[str, PerfCodeBenchTable]
    tasks: list[str]
    cells: dict[str, dict[str, TaskCell]]
    staircase: Staircase
    stages: dict[str, FailureStages]
    speedups: dict[str, SpeedupDistribution]
    speedup_values: dict[str, list[float]]
    transitions: list[TransitionBlock]
    notes: list[str] = field(default_factory=list)


@dataclass
class TaskCell:
    """One run's outcome on one task, as shown in the per-task table."""

    text: str
    css: str  # ref | fast | same | slow | fail | infra
    title: str = ""


@dataclass
class Staircase:
    """Results per RLPF rung and their mean RLPF reward (paper 000, Eq. 7)."""

    rungs: list[str]
    counts: dict[str, dict[str, int]]
    mean_reward: dict[str, dict[str, float | None]]
    unscored: dict[str, int]


@dataclass
class TransitionBlock:
    """Outcome transitions from one run to another, or why they could not be computed."""

    before: str
    after: str
    result: Transitions | None = None
    error: str = ""


def rung_of(v: Verdict) -> str:
    """The RLPF rung of a verdict: its failure stage, or correct / faster / reference."""
    if v.stage is not Stage.OK:
        return v.stage.value
    o = sample_outcome(v)
    return "reference" if o.rbr else ("faster" if o.fbr else "correct")


def _in_context(run: Run, exc: ConfigError) -> ConfigError:
    return ConfigError(f"{run.path} (model {run.model!r}): {exc}")


def leaderboard(runs: Sequence[Run], config: PerfCodeBenchConfig) -> dict[str, PerfCodeBenchTable]:
    out = {}
    for run in runs:
        try:
            out[run.label] = perfcodebench_table(run.verdicts, config)
        except ConfigError as exc:
            raise _in_context(run, exc) from None
    return out


def task_cells(runs: Sequence[Run]) -> tuple[list[str], dict[str, dict[str, TaskCell]]]:
    """Task ids (sorted) and, per task, each run's cell."""
    cells: dict[str, dict[str, TaskCell]] = {}
    for run in runs:
        by_task: dict[str, list[Verdict]] = {}
        for v in run.verdicts:
            by_task.setdefault(v.task_id, []).append(v)
        for tid, vs in by_task.items():
            cells.setdefault(tid, {})[run.label] = _cell(vs)
    return sorted(cells), cells


def _cell(vs: list[Verdict]) -> TaskCell:
    scored = [v for v in vs if not v.infra_error]
    if not scored:
        return TaskCell("infra", "infra", "; ".join(v.reason for v in vs)[:300])
    outs = [(v, sample_outcome(v)) for v in scored]
    speeds = [o.speedup for _, o in outs if o.speedup is not None]
    best = max(speeds) if speeds else None
    correct = sum(o.correct for _, o in outs)
    css = cell_class(outs)
    if len(scored) == 1:
        v = scored[0]
        text = f"{best:.2f}×" if v.correct and best is not None else (
            "OK" if v.correct else f"{v.stage.value} {v.detail}".strip())  # fmt: skip
        return TaskCell(text, css, v.reason[:300] or _decided(v))
    head = f"{correct}/{len(scored)} OK"
    return TaskCell(head + (f", best {best:.2f}×" if best is not None else ""), css)


def cell_class(outs: Sequence[tuple[Verdict, SampleOutcome]]) -> str:
    """The colour of a task's cell: its best sample's rung, by the significant decisions.

    ref: reaches the reference; fast: faster than the baseline; same: correct and level with
    the baseline (within noise, or the baseline's own source); slow: significantly slower;
    fail: no correct sample."""
    if any(o.rbr for _, o in outs):
        return "ref"
    if any(o.fbr for _, o in outs):
        return "fast"
    correct = [v for v, o in outs if o.correct]
    if not correct:
        return "fail"
    if any(_vs_baseline(v) == "tie" for v in correct):
        return "same"
    return "slow"


def _vs_baseline(v: Verdict) -> str | None:
    call = speed_call(v.candidate, v.baseline, same_source="baseline" in v.same_source)
    return None if call is None else call.outcome


def _decided(v: Verdict) -> str:
    call = speed_call(v.candidate, v.baseline, same_source="baseline" in v.same_source)
    if call is None:
        return ""
    return f"vs baseline: {call.outcome} ({call.how}, ratio {call.ratio:.3f})"


def staircase(runs: Sequence[Run]) -> Staircase:
    """Counts and mean RLPF reward per rung, per run (infrastructure failures left out)."""
    reward = get_reward("rlpf")
    counts: dict[str, dict[str, int]] = {}
    means: dict[str, dict[str, float | None]] = {}
    unscored: dict[str, int] = {}
    for run in runs:
        kept = [v for v in run.verdicts if not v.infra_error]
        values = reward(kept) if kept else []
        sums: dict[str, list[float]] = {r: [] for r in RUNGS}
        count = dict.fromkeys(RUNGS, 0)
        missing = 0
        for v, value in zip(kept, values, strict=True):
            rung = rung_of(v)
            count[rung] += 1
            if value is None:
                missing += 1
            else:
                sums[rung].append(value)
        counts[run.label] = count
        means[run.label] = {r: (sum(x) / len(x) if x else None) for r, x in sums.items()}
        unscored[run.label] = missing
    return Staircase(rungs=list(RUNGS), counts=counts, mean_reward=means, unscored=unscored)


def stages(runs: Sequence[Run]) -> dict[str, FailureStages]:
    return {run.label: failure_stages(run.verdicts, POLICY) for run in runs}


def speedups(runs: Sequence[Run]) -> tuple[dict[str, SpeedupDistribution], dict[str, list[float]]]:
    """RLPF Table 13 per run, and every correct result's Tb/Tc (for the histogram)."""
    dist, values = {}, {}
    for run in runs:
        dist[run.label] = speedup_distribution(run.verdicts, policy=POLICY)
        values[run.label] = [
            o.speedup
            for o in (sample_outcome(v) for v in run.verdicts if not v.infra_error)
            if o.correct and o.speedup is not None
        ]
    return dist, values


def transition_blocks(pairs: Sequence[tuple[Run, Run]]) -> list[TransitionBlock]:
    """Transitions for each (before, after) pair; an incompatible pair says why."""
    blocks = []
    for a, b in pairs:
        block = TransitionBlock(before=a.label, after=b.label)
        try:
            block.result = transitions(a.verdicts, b.verdicts, POLICY)
        except ConfigError as exc:
            block.error = str(exc)
        blocks.append(block)
    return blocks


def transition_pairs(runs: Sequence[Run]) -> list[tuple[Run, Run]]:
    """Pairs of runs to compare: consecutive results files, same model (or their only models)."""
    files = list(dict.fromkeys(r.path for r in runs))
    pairs = []
    for first, second in zip(files, files[1:], strict=False):
        a = [r for r in runs if r.path == first]
        b = [r for r in runs if r.path == second]
        shared = [(x, y) for x in a for y in b if x.model == y.model]
        if shared:
            pairs += shared
        elif len(a) == 1 and len(b) == 1:
            pairs.append((a[0], b[0]))
    return pairs


def correctness_only_notes(runs: Sequence[Run]) -> list[str]:
    """One line per correctness-only run (nothing timed): "not timed", and its pass@k with
    the bootstrap CI; its speed columns stay empty."""
    from perfgym.metrics.summary import correctness_summary, not_timed

    lines = []
    for run in runs:
        if run.verdicts and not_timed(list(run.verdicts)):
            row = correctness_summary(run.label, list(run.verdicts))
            shown = ", ".join(f"{k} {row.cell(k)}" for k in row.metrics)
            lines.append(f"{run.label}: not timed (correctness only: its tests say nothing of "
                         f"speed); {shown}")  # fmt: skip
    return lines


def pass_at_k_notes(runs: Sequence[Run]) -> list[str]:
    """One line per timed run with several samples per task: its pass@k (unbiased estimator
    per task, then the mean over tasks, bootstrap CI over tasks), tasks and samples counted
    apart, in the console's format."""
    from perfgym.metrics.summary import ModelSummary, add_pass_at_k, not_timed

    lines = []
    for run in runs:
        vs = list(run.verdicts)
        tasks = len({v.task_id for v in vs})
        if not vs or not_timed(vs) or len(vs) == tasks:
            continue
        row = ModelSummary(model=run.label, n=tasks, samples=len(vs), stages={}, infra_errors=0)
        try:
            add_pass_at_k(row, vs, 0)
        except ConfigError as exc:
            lines.append(f"{run.label}: no pass@k ({exc})")
            continue
        shown = ", ".join(f"{k} {row.cell(k)}" for k in row.metrics)
        lines.append(f"{run.label}: {tasks} tasks, {len(vs)} samples; {shown}")
    return lines


def suite_section(
    suite: str, runs: Sequence[Run], config: PerfCodeBenchConfig | None = None
) -> SuiteSection:
    """Compute every section for the runs of one suite."""
    runs = list(runs)
    board = leaderboard(runs, config or PerfCodeBenchConfig(policy=POLICY))
    task_ids, cells = task_cells(runs)
    try:
        stage_counts = stages(runs)
        dist, values = speedups(runs)
    except ConfigError as exc:
        raise ConfigError(f"suite {suite!r}: {exc}") from None
    notes = sorted({n for table in board.values() for row in table.rows() for n in row.notes
                    if "bootstrap" not in n})  # fmt: skip
    notes += correctness_only_notes(runs) + pass_at_k_notes(runs)
    return SuiteSection(
        suite=suite,
        runs=runs,
        leaderboard=board,
        tasks=task_ids,
        cells=cells,
        staircase=staircase(runs),
        stages=stage_counts,
        speedups=dist,
        speedup_values=values,
        transitions=transition_blocks(transition_pairs(runs)),
        notes=notes,
    )
