"""`perfgym validate`'s summary on the console (100 columns): the run's wall time against its
floor and the rate, a per-language table, why tasks were undecided, the agreement where the
published ordering is clear, and each disagreement with both ratios."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from perfgym.cli.output import console

if TYPE_CHECKING:
    from rich.table import Table

    from perfgym.cli.validate_run import ValidateRun
    from perfgym.judge.validation_summary import Clear, ValidationSummary


def language_table(summary: ValidationSummary) -> Table:
    """One row per language and one for all: tasks, reference and baseline OK, the calls."""
    from perfgym.cli.tables import compact_table

    t = compact_table("per language")
    t.add_column("language")
    for col in ("tasks", "ref OK", "base OK", "agree", "disagree", "undecided", "capped"):
        t.add_column(col, justify="right")
    for lr in [*summary.languages, summary.total]:
        t.add_row(lr.language, str(lr.tasks), str(lr.reference_ok), str(lr.baseline_ok),
                  str(lr.agree), str(lr.disagree), str(lr.undecided), str(lr.capped))  # fmt: skip
    return t


def clear_line(c: Clear, what: str) -> str:
    """'published Tb/Tr >= 1.5 (or <= 1/1.5): 30 tasks, agree 27, disagree 0, undecided 3
    (within noise 3); decided 90.0 %: target met'."""
    if not c.tasks:
        return f"{what}: no task"
    why = f" ({_reasons(c.reasons)})" if c.reasons else ""
    decided = f"{100 * c.decided:.1f} %" if c.decided is not None else "-"
    verdict = "target met" if c.target_met else "target NOT met"
    return (f"{what}: {c.tasks} tasks, agree {c.agree}, disagree {c.disagree}, undecided "
            f"{c.undecided}{why}; decided {decided}: {verdict} (0 disagree, >= 90 % decided)")  # fmt: skip


def rerun_line(s: ValidationSummary) -> str:
    """'rerun at more repeats (undecided at first): 5 tasks, decided 4 (at 10 repeats 3, at 20
    repeats 1), 31 s'."""
    r = s.reruns
    at = ", ".join(f"at {k} repeats {v}" for k, v in sorted(r.at_repeats.items()))
    return (f"rerun at more repeats (undecided at first): {r.tasks} task(s), decided "
            f"{r.decided}" + (f" ({at})" if at else "") + f", {r.wall_s:.0f} s")  # fmt: skip


def timing_line(s: ValidationSummary) -> str:
    """'wall 612 s, floor 301 s (runs' core-seconds / 2 cores), wall/floor 2.03x; 3.9 tasks/min;
    all 1586 tasks: ~6.8 h at this rate'."""
    if not s.ran:
        return f"every row reused ({s.tasks}): nothing timed"
    ratio = f"{s.over_floor:.2f}x" if s.over_floor is not None else "-"
    line = (f"wall {s.wall_s:.0f} s for {s.ran} task(s), floor {s.floor_s:.0f} s (the runs' "
            f"core-seconds / {s.cores} cores), wall/floor {ratio}")  # fmt: skip
    if s.tasks_per_min is not None:
        line += f"; {s.tasks_per_min:.2f} tasks/min"
    if s.extrapolated_s is not None and s.population is not None:
        line += f"; all {s.population} tasks: ~{_duration(s.extrapolated_s)} at this rate"
    return line


def print_summary(s: ValidationSummary, run: ValidateRun) -> None:
    console.print(language_table(s))
    for lr in s.languages:
        if lr.reasons:
            console.print(f"  undecided, {escape(lr.language)}: {escape(_reasons(lr.reasons))}",
                          highlight=False)  # fmt: skip
    what = f"published Tb/Tr >= {s.clear.threshold:g} (or <= 1/{s.clear.threshold:g})"
    console.print(clear_line(s.clear, what), highlight=False)
    if s.clear_all_cores.tasks != s.clear.tasks:
        console.print(clear_line(s.clear_all_cores, "  without the core-capped tasks"),
                      highlight=False)  # fmt: skip
    for d in s.disagreements:
        here = f"{d.measured:.2f}x" if d.measured is not None else "-"
        p = f", p = {d.p_value:.3g}" if d.p_value is not None else ""
        marks = ", clear" * d.clear + ", cores capped" * d.capped
        console.print(f"  disagrees: {escape(d.task_id)} ({d.language}): published "
                      f"{d.published:.2f}x, here {here}{p}{marks}", highlight=False)  # fmt: skip
    if s.reruns.tasks:
        console.print(rerun_line(s), highlight=False)
    console.print(timing_line(s), highlight=False)
    load = run.load()
    where = f"on {run.backend}" + (f" ({s.cores} cores)" if run.backend == "ray" else "")
    drawn = run.drawn
    sample = (f"; sample {drawn['n']} of {drawn['population']} (seed {drawn['seed']})"
              if drawn else "")  # fmt: skip
    reused = f"; {run.reused} row(s) reused" if run.reused else ""
    console.print(f"{where}; load average {load['start']:.2f} at the start, {load['end']:.2f} "
                  f"at the end{sample}{reused}", highlight=False)  # fmt: skip


def _reasons(reasons: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(reasons.items(), key=lambda kv: -kv[1]))


def _duration(seconds: float) -> str:
    """'42 s', '12.5 min', '6.8 h'."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 3600 else f"{seconds / 3600:.1f} h"
