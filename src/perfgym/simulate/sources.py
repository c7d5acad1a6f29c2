"""Where the simulator's durations come from: a results file, or a fresh run of the Judge."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from perfgym.errors import ConfigError
from perfgym.judge import Candidate, Judge, JudgeConfig, Verdict
from perfgym.simulate.config import SimulatorConfig
from perfgym.simulate.ladder import Ladder, build_ladder
from perfgym.store.results_file import read_results
from perfgym.tasks.task import Task

Progress = Callable[[int, int], None]


def solution_candidates(tasks: Sequence[Task]) -> list[Candidate]:
    """Every task's own solutions (baseline, references, pool) as candidates named by label."""
    return [
        Candidate(task, source=sol.source, model=sol.label)
        for task in tasks
        for sol in task.solutions()
    ]


def measure_solutions(
    tasks: Sequence[Task],
    *,
    suite: str,
    judge_config: JudgeConfig | None = None,
    progress: Progress | None = None,
) -> list[Verdict]:
    """Judge every task's own solutions now, each measured beside the baseline and reference."""
    candidates = solution_candidates(tasks)
    if not candidates:
        raise ConfigError("no solutions to measure")
    with Judge(judge_config or JudgeConfig()) as judge:
        verdicts = judge.judge_many(candidates, progress=progress)
    for v in verdicts:
        v.suite = suite
    return verdicts


def ladder_from_results(
    tasks: Sequence[Task], path: Path, config: SimulatorConfig | None = None, *, suite: str
) -> Ladder:
    """The ladder from a results file of the suite's own solutions (`perfgym eval --solutions`)."""
    meta, verdicts = read_results(path)
    if not verdicts:
        raise ConfigError(f"{path}: the results file holds no verdicts")
    recorded = meta.get("suite")
    if recorded and recorded != suite:
        raise ConfigError(f"{path}: results of suite {recorded!r}, not {suite!r}")
    return build_ladder(tasks, verdicts, config, suite=suite, source=str(path))
