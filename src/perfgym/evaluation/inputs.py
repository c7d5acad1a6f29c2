"""What an evaluation judges: the suite's selected tasks and the candidates `EvalConfig` names."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfgym.errors import PerfgymError, one_line
from perfgym.evaluation.config import EvalConfig, EvalFailed

if TYPE_CHECKING:
    from perfgym.judge.candidate import Candidate
    from perfgym.tasks.suite_model import Suite
    from perfgym.tasks.task import Task

#: Where a candidates file's remarks go: (kind, text), kind one of "bad" (a bad line, before
#: the run is refused), "skipped" (a bad line skipped), "outside" (candidates of tasks not
#: evaluated), "kept" (unknown fields kept as meta).
Remark = Callable[[str, str], None]


@dataclass
class EvalInputs:
    """The suite, its selected tasks, their candidates and the candidates file's bad lines."""

    suite: Suite
    tasks: list[Task]
    candidates: list[Candidate] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def pick_tasks(suite: Suite, task_ids: list[str] | None) -> list[Task]:
    """The suite's tasks, only `task_ids` (in that order) when given."""
    tasks = list(suite.tasks)
    if task_ids:
        known = {t.id: t for t in tasks}
        skipped = {e["task"] for e in suite.metadata.get("skipped", [])}
        missing = [t for t in task_ids if t not in known and t not in skipped]
        if missing:
            raise EvalFailed(f"unknown task id(s) in {suite.name}: {', '.join(missing)}")
        tasks = [known[t] for t in task_ids if t in known]
    if not tasks and suite.metadata.get("skipped"):
        raise EvalFailed(f"no task of {suite.name} loaded")
    return tasks


def select_tasks(tasks: list[Task], split: str | None, limit: int | None, suite: str) -> list[Task]:
    """The tasks of `split` (all when None), then the first `limit` of them (all when None)."""
    from perfgym.tasks.task import Split

    if split is not None:
        splits = [s.value for s in Split]
        if split not in splits:
            raise EvalFailed(f"unknown --split {split!r}; one of {', '.join(splits)}")
        tasks = [t for t in tasks if t.split.value == split]
        if not tasks:
            raise EvalFailed(f"no task of {suite} is in split {split!r}")
    if limit is not None:
        if limit < 1:
            raise EvalFailed(f"--limit must be at least 1, got {limit}")
        tasks = tasks[:limit]
    return tasks


def with_time_limit(tasks: list[Task], seconds: float | None) -> list[Task]:
    """`tasks` with `seconds` as every task's own limit (as given when None)."""
    if seconds is None:
        return tasks
    return [t.model_copy(update={"time_limit_s": seconds}) for t in tasks]


def perf_inputs_of(time_largest: int | None, perf_inputs: Path | None
                   ) -> Mapping[str, list[list[Any]]] | None:  # fmt: skip
    """`time_largest` checked and the `perf_inputs` file read (None when not given)."""
    from perfgym.tasks.timed import read_perf_inputs

    if time_largest is not None and time_largest < 1:
        raise EvalFailed(f"--time-largest must be at least 1, got {time_largest}")
    if perf_inputs is None:
        return None
    try:
        return read_perf_inputs(perf_inputs.read_text().splitlines(), str(perf_inputs))
    except OSError as exc:
        raise EvalFailed(f"cannot read --perf-inputs {perf_inputs}: {exc.strerror or exc}"
                         ) from exc  # fmt: skip
    except (ValueError, UnicodeDecodeError) as exc:
        raise EvalFailed(f"--perf-inputs {one_line(exc)}") from exc


def timed_tasks(tasks: list[Task], time_largest: int | None,
                inputs: Mapping[str, list[list[Any]]] | None, where: Path | None = None
                ) -> list[Task]:  # fmt: skip
    """`tasks` with what `time_largest` / the performance inputs time (correctness-only tasks
    only: every other task keeps its workloads)."""
    from perfgym.tasks.timed import is_timed, with_perf_inputs
    from perfgym.tasks.timed import time_largest as largest

    if time_largest is not None:
        return [t if is_timed(t) else largest(t, time_largest) for t in tasks]
    if inputs is None:
        return tasks
    if not {t.id for t in tasks} & set(inputs):
        raise EvalFailed(f"--perf-inputs {where}: names none of the selected tasks")
    return [with_perf_inputs(t, inputs[t.id]) if t.id in inputs and not is_timed(t) else t
            for t in tasks]  # fmt: skip


def own_solutions(tasks: list[Task], labels: list[str]) -> list[Candidate]:
    """The suite's own solutions as candidates, one model per label."""
    from perfgym.judge.candidate import Candidate

    out = []
    for t in tasks:
        by_label = {s.label: s for s in t.solutions()}
        for label in labels:
            sol = by_label.get(label)
            if sol is not None:
                out.append(Candidate(t, source=sol.source, model=label))
    return out


def published_candidates(suite: Suite, tasks: list[Task], model: str) -> list[Candidate]:
    """A PerfCodeBench model's published source of each task, as candidates.

    A task where the model produced no source is judged as an empty answer (NX), so that it
    counts in every denominator as the published table does; a task where the model has no
    directory is left out (the published table counts it NX).
    """
    from perfgym.judge.candidate import Candidate
    from perfgym.tasks.eval_results import load_candidates

    out = []
    for t in tasks:
        found = {c.model: c for c in load_candidates(t)} if t.root is not None else {}
        c = found.get(model)
        if c is not None and c.source:
            out.append(Candidate(t, source=c.source, model=model))
        elif c is not None:  # the model answered nothing: an empty completion extracts to NX
            out.append(Candidate(t, completion="", model=model))
    if not out:
        raise EvalFailed(f"no published candidate of model {model!r} in {suite.name}")
    return out


def file_candidates(
    path: Path, suite: Suite, tasks: list[Task], fmt: str, skip_bad_lines: bool,
    remark: Remark | None = None,
) -> tuple[list[Candidate], list[str]]:  # fmt: skip
    """(candidates of the evaluated tasks, bad lines). A bad line stops the evaluation before
    anything is judged unless `skip_bad_lines`; `remark` hears of each (see `Remark`)."""
    from perfgym.evaluation.candidates_file import read_candidates
    from perfgym.evaluation.candidates_formats import FORMATS, Format

    say = remark or (lambda kind, text: None)
    if fmt not in FORMATS:
        raise EvalFailed(f"unknown --format {fmt!r}; one of {', '.join(FORMATS)}")
    fmt_: Format = fmt  # type: ignore[assignment]
    try:
        cands, problems = read_candidates(path, suite, fmt_)
    except PerfgymError as exc:
        raise EvalFailed(str(exc)) from exc
    if problems and not skip_bad_lines:
        if len(problems) == 1:
            raise EvalFailed(
                f"{path}: {problems[0]}; nothing judged (--skip-bad-lines judges the rest)"
            )
        for p in problems:
            say("bad", p)
        raise EvalFailed(f"{len(problems)} bad lines in {path}; nothing judged "
                         "(fix them, or --skip-bad-lines judges the rest)")  # fmt: skip
    for p in problems:
        say("skipped", p)
    wanted = {t.id for t in tasks}
    outside = sum(c.task.id not in wanted for c in cands)
    cands = [c for c in cands if c.task.id in wanted]
    if outside:
        say("outside", str(outside))
    if not cands:
        raise EvalFailed(f"no usable candidates in {path} for the {len(tasks)} task(s) evaluated")
    kept = sorted({k for c in cands for k in c.meta})
    if kept:
        say("kept", ", ".join(kept[:8]) + (", …" if len(kept) > 8 else ""))
    return list(cands), problems


def candidates_of(config: EvalConfig, suite: Suite, tasks: list[Task],
                  remark: Remark | None = None) -> tuple[list[Candidate], list[str]]:  # fmt: skip
    """(candidates, bad lines) from the source `config` names (models aside: they generate)."""
    if config.candidates is not None:
        return file_candidates(config.candidates, suite, tasks, config.candidates_format,
                               config.skip_bad_lines, remark)  # fmt: skip
    if config.candidates_from is not None:
        return published_candidates(suite, tasks, config.candidates_from), []
    cands = own_solutions(tasks, config.solutions or ["baseline", "reference"])
    if not cands:
        raise EvalFailed(f"no solutions labelled {', '.join(config.solutions)} in {suite.name}")
    return cands, []


def gather(config: EvalConfig) -> EvalInputs:
    """The suite loaded, its tasks selected as `config` says, and their candidates."""
    from perfgym.audit.sample import choose_tasks
    from perfgym.tasks.suite import load_suite

    if config.models or config.published:
        raise EvalFailed("run_eval judges given candidates or solutions; a model generates "
                         "through `perfgym eval --model`, and `perfgym eval --published` "
                         "scores published results")  # fmt: skip
    inputs = perf_inputs_of(config.time_largest, config.perf_inputs)
    try:
        suite = load_suite(config.suite, external=config.external,
                           tasks=config.task_ids or None)  # fmt: skip
    except PerfgymError as exc:
        raise EvalFailed(str(exc)) from exc
    tasks = select_tasks(pick_tasks(suite, config.task_ids), config.split, config.limit,
                         suite.name)  # fmt: skip
    try:
        tasks = choose_tasks(tasks, config.languages, config.sample, config.seed)
    except PerfgymError as exc:
        raise EvalFailed(str(exc)) from exc
    tasks = with_time_limit(tasks, config.time_limit_s)
    tasks = timed_tasks(tasks, config.time_largest, inputs, config.perf_inputs)
    cands, problems = candidates_of(config, suite, tasks)
    return EvalInputs(suite, tasks, cands, problems)
