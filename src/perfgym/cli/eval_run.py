"""`perfgym eval`'s work once its options are an `EvalConfig`: the published results, a model
to generate from, ENAMEL's protocol, or `run_eval` through the staged judge."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from rich.markup import escape

from perfgym.cli.eval_output import ConsoleWatch, Shown, print_result
from perfgym.cli.output import check_writable, err_console, fail
from perfgym.evaluation.config import EvalConfig, EvalFailed
from perfgym.evaluation.repeats import resolve_repeats

if TYPE_CHECKING:
    from perfgym.evaluation.inputs import Remark
    from perfgym.tasks.suite_model import Suite
    from perfgym.tasks.task import Task


P = ParamSpec("P")
T = TypeVar("T")


def run_enamel(*args: Any, **kwargs: Any) -> None:
    """ENAMEL's protocol (cli/enamel_eval.py), imported when an ENAMEL run starts."""
    from perfgym.cli.enamel_eval import run_enamel as run

    run(*args, **kwargs)


def evaluate(config: EvalConfig, given: dict[str, bool], shown: Shown) -> None:
    """Run the evaluation `config` describes and print it (`given`: which options were given)."""
    from perfgym.cli.options import select_tasks, with_time_limit
    from perfgym.cli.selection import chosen_tasks
    from perfgym.cli.suite_arg import load_or_fail
    from perfgym.evaluation.inputs import perf_inputs_of, timed_tasks
    from perfgym.evaluation.run import default_results

    if config.published:
        from perfgym.cli.published_cmd import rules_of, run_published

        run_published(config.suite, config.models, config.task_ids, shown.as_json,
                      rules_of(config.rules))  # fmt: skip
        return
    inputs = _or_fail(perf_inputs_of, config.time_largest, config.perf_inputs)  # before loading
    s, tasks = load_or_fail(config.suite, config.task_ids, config.external)
    tasks = chosen_tasks(select_tasks(tasks, config.split, config.limit, s.name),
                         config.languages, config.sample, config.seed)  # fmt: skip
    tasks = with_time_limit(tasks, config.time_limit_s)
    tasks = _or_fail(timed_tasks, tasks, config.time_largest, inputs, config.perf_inputs)
    if config.models:  # generate from a model, then judge: cli/eval_model.py
        from perfgym.cli.eval_model import eval_model_command

        eval_model_command(s, tasks, config, given, shown)
        return
    if config.repeats is not None and config.repeats < 1:
        fail(f"--repeats must be at least 1, got {config.repeats}")
    from perfgym.enamel.protocol import is_enamel

    enamel = bool(tasks) and all(is_enamel(t) for t in tasks)
    if enamel and config.hidden:
        fail("--hidden does not apply to ENAMEL's protocol (its levels' inputs are ENAMEL's "
             "published ones)")  # fmt: skip
    if enamel and config.time_limit_s is not None:
        fail("--time-limit does not apply to ENAMEL's protocol: its limits come from each "
             "problem's reference (timeout_factor x its time)")  # fmt: skip
    if config.enamel_timing is not None and not enamel:
        fail("--enamel-timing applies to ENAMEL's protocol only")
    timing = _enamel_timing(config.enamel_timing)
    repeats = resolve_repeats(config.repeats, enamel=enamel)
    out = config.out or default_results(s.name)
    # Before judging anything: a verdict judged is never lost to a path that cannot be written.
    check_writable(out, "results file")
    if config.store is not None:
        check_writable(Path(config.store), "result store")
    if enamel and config.candidates is not None:  # model samples through ENAMEL's own protocol
        from perfgym.cli.enamel_candidates import run_enamel_candidates

        run_enamel_candidates(s, tasks, config.candidates, config.solutions, out, repeats,
                              shown.as_json, timing=timing)  # fmt: skip
        return
    if enamel:
        from perfgym.store.checkpoint import ResumeFrom

        resume = ResumeFrom(
            config.out is not None, f"{s.name}-", config.resume and not config.replay
        )
        run_enamel(tasks, config.solutions, out, repeats, shown.as_json, resume=resume,
                   timing=timing)  # fmt: skip
        return
    _judge(config, s, tasks, out, shown)


def _enamel_timing(text: str | None) -> Any:
    """The `EnamelTiming` `--enamel-timing` names (sequential when not given); exit 2 otherwise."""
    from perfgym.enamel.pairing import EnamelTiming

    try:
        return EnamelTiming(text or EnamelTiming.SEQUENTIAL.value)
    except ValueError:
        choices = ", ".join(t.value for t in EnamelTiming)
        fail(f"--enamel-timing must be one of {choices}, got {text!r}")


def _judge(config: EvalConfig, suite: Suite, tasks: list[Task], out: Path, shown: Shown) -> None:
    """The staged judge's evaluation: the candidates read (their remarks on stderr), then
    `run_eval`, then its summary."""
    from perfgym.cli.interrupted import stop_interrupted
    from perfgym.evaluation.inputs import EvalInputs, candidates_of
    from perfgym.evaluation.run import EvalInterrupted, run_eval

    cands, problems = _or_fail(candidates_of, config, suite, tasks, _remark(config.candidates))
    try:
        result = run_eval(config, inputs=EvalInputs(suite, tasks, cands, problems), results=out,
                          watch=ConsoleWatch(shown))  # fmt: skip
    except EvalFailed as exc:
        fail(str(exc))
    except EvalInterrupted as exc:
        stop_interrupted("verdicts", exc.kept, exc.total, exc.where, exc.__cause__)
    agreed = None
    if config.candidates_from is not None:  # against the model's own published results
        from perfgym.cli.candidates_agreement import published_agreement

        agreed = published_agreement(tasks, result.verdicts, config.candidates_from)
    print_result(result, shown, agreed)


def _remark(path: Path | None) -> Remark:
    """What a candidates file's remarks print: each bad or skipped line, candidates outside the
    evaluated tasks, unknown fields kept."""

    def remark(kind: str, text: str) -> None:
        where = escape(str(path))
        line = {"bad": f"{where}: {escape(text)}",
                "skipped": f"[yellow]skipped[/] {where}: {escape(text)}",
                "outside": f"note: {text} candidate(s) of tasks outside the evaluated set "
                           "(--task, --split, --limit) not judged",
                "kept": f"kept unknown field(s) {escape(text)} in each verdict's meta"}[kind]  # fmt: skip
        err_console.print(line, highlight=False)

    return remark


def _or_fail(step: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`step(*args)`, an EvalFailed said in one line (exit 2)."""
    try:
        return step(*args, **kwargs)
    except EvalFailed as exc:
        fail(str(exc))
