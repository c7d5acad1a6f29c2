"""`Run`: one model's verdicts on one suite from one results file, as the report groups them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Verdict
from perfgym.store.results_file import read_results


@dataclass
class ResultsFile:
    """A results file as read: its header and verdicts, checked to hold one suite."""

    path: Path
    header: dict[str, Any]
    suite: str
    verdicts: list[Verdict]


@dataclass
class Run:
    """One model on one suite from one file: the unit of the leaderboard."""

    label: str
    model: str
    suite: str
    path: Path
    verdicts: list[Verdict] = field(default_factory=list)


def read_file(path: Path) -> ResultsFile:
    """Read and check one results file: not empty, one suite (errors name the file)."""
    header, verdicts = read_results(path)  # a broken line is a ConfigError naming path:line
    if not verdicts:
        raise ConfigError(f"{path}: the results file holds no verdicts")
    suites = sorted({v.suite for v in verdicts if v.suite})
    recorded = header.get("suite")
    if recorded and recorded not in suites:
        suites.append(str(recorded))
    if len(suites) > 1:
        raise ConfigError(f"{path}: results mix suites {sorted(suites)}; one suite per file")
    suite = suites[0] if suites else path.stem
    return ResultsFile(path=path, header=header, suite=suite, verdicts=verdicts)


def split_runs(files: Sequence[ResultsFile]) -> list[Run]:
    """One run per (file, model), labelled by the model, plus the file where a model repeats."""
    runs: list[Run] = []
    for f in files:
        by_model: dict[str, list[Verdict]] = {}
        for v in f.verdicts:
            by_model.setdefault(v.model or "(unnamed)", []).append(v)
        for model, vs in by_model.items():
            # Keep the suite on every verdict so the metrics' one-suite check sees it.
            fixed = [v if v.suite else v.model_copy(update={"suite": f.suite}) for v in vs]
            runs.append(Run(label=model, model=model, suite=f.suite, path=f.path, verdicts=fixed))
    counts: dict[tuple[str, str], int] = {}
    for r in runs:
        counts[(r.suite, r.model)] = counts.get((r.suite, r.model), 0) + 1
    names: dict[str, int] = {}
    for f in files:
        names[f.path.name] = names.get(f.path.name, 0) + 1
    for r in runs:
        if counts[(r.suite, r.model)] > 1:
            # The file name tells the runs apart, unless two files share it: then the path.
            where = r.path.name if names[r.path.name] == 1 else str(r.path)
            r.label = f"{r.model} ({where})"
    return runs
