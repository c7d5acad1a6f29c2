"""`perfgym eval SUITE`: judge candidates (or the suite's own solutions) and summarise."""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from perfgym.cli import app
from perfgym.cli.candidates_formats import FORMATS
from perfgym.cli.options import (
    SPLITS,
    external_option,
    refuse_conflicts,
    refuse_orphans,
    select_tasks,
    time_limit_of,
    time_limit_option,
    with_time_limit,
)
from perfgym.cli.output import check_writable, console, err_console, fail, one_line, print_json
from perfgym.cli.selection import chosen_tasks, language_option, sample_option

if TYPE_CHECKING:  # the command imports its judge, metrics and store when it runs: --help is fast
    from rich.table import Table

    from perfgym.judge import Candidate
    from perfgym.metrics.summary import ModelSummary
    from perfgym.store.checkpoint import ResumeFrom
    from perfgym.tasks.suite import Suite
    from perfgym.tasks.task import Task

#: `perfgym eval`'s measured runs per workload on the staged judge (RLPF's protocol uses 3).
JUDGE_REPEATS = 3
#: ENAMEL's own protocol's runs, written out for --help (a test keeps it equal to the protocol's).
ENAMEL_REPEATS_SHOWN = 6
#: The judge's backends, written out for --help (a test keeps them equal to the registry's).
BACKENDS_SHOWN = ("local", "service", "ray")


def resolve_repeats(repeats: int | None, *, enamel: bool) -> int:
    """The measured runs per workload: an explicit `--repeats` as given, else the protocol's."""
    from perfgym.enamel.protocol import REPEATS as ENAMEL_REPEATS

    if repeats is not None:
        return repeats
    return ENAMEL_REPEATS if enamel else JUDGE_REPEATS


def run_enamel(*args: Any, **kwargs: Any) -> None:
    """ENAMEL's protocol (cli/enamel_eval.py), imported when an ENAMEL run starts."""
    from perfgym.cli.enamel_eval import run_enamel as run

    run(*args, **kwargs)


def own_solutions(tasks: list[Task], labels: list[str]) -> list[Candidate]:
    """The suite's own solutions as candidates, one model per label."""
    from perfgym.judge import Candidate

    out = []
    for t in tasks:
        by_label = {s.label: s for s in t.solutions()}
        for label in labels:
            sol = by_label.get(label)
            if sol is not None:
                out.append(Candidate(t, source=sol.source, model=label))
    return out


def summary_table(rows: list[ModelSummary], title: str) -> Table:
    """The compact console summary (fits 100 columns for the usual one to three models): one
    column per model, one row per number: tasks, samples, pass@k and the significant-decision
    speed rates, each a fraction of tasks with its 95 % bootstrap CI. Stage counts, CRR and
    the strict-rule columns are in the JSON and the HTML report."""
    from perfgym.cli.tables import compact_table

    timed = any(r.timed for r in rows)
    passes = sorted({k for r in rows for k in r.metrics if k.startswith("pass@")},
                    key=lambda k: int(k.split("@")[1]))  # fmt: skip
    passes = passes[:1] + passes[-1:] if len(passes) > 1 else passes  # pass@1 and the largest k
    t = compact_table(title)
    t.add_column("")
    for r in rows:
        t.add_column(r.model, justify="right", overflow="fold")
    t.add_row("tasks", *(str(r.n) for r in rows))
    if any(r.samples != r.n for r in rows):
        t.add_row("samples", *(str(r.samples) for r in rows))
    for name in passes:
        t.add_row(name, *(r.cell(name) for r in rows))
    for name in ("fbr", "rbr", "cgre") if timed else ():
        t.add_row(name.upper(), *(r.cell(name) for r in rows))
    if not timed:
        t.add_row("speed", *("not timed" for _ in rows))
    for r in rows:
        if r.note and r.timed:
            t.caption = f"{r.model}: {r.note}"
    return t


@app.command("eval")
def eval_(
    suite: str = typer.Argument(..., help="Suite: a built-in name or a path."),
    candidates: Path | None = typer.Option(
        None, "--candidates", help="JSONL of candidates (perfgym, evalplus or lm-eval samples)."
    ),
    solutions: list[str] = typer.Option(
        [],
        "--solutions",
        help="Judge the suite's own solutions with these labels (default: baseline and reference).",
    ),  # fmt: skip
    task: list[str] = typer.Option([], "--task", help="Only these task ids (repeatable)."),
    split: str | None = typer.Option(
        None, "--split", help=f"Only the tasks of this split ({', '.join(SPLITS)})."
    ),
    limit: int | None = typer.Option(
        None, "--limit", help="Only the first N tasks (after --task and --split)."
    ),
    out: Path | None = typer.Option(
        None, "-o", "--output", "--out", help="Results JSONL (default under results/)."
    ),
    repeats: int | None = typer.Option(
        None,
        "--repeats",
        help=f"Measured runs per workload (default: the protocol's own, {JUDGE_REPEATS} for the "
        f"staged judge as in RLPF, {ENAMEL_REPEATS_SHOWN} for ENAMEL's protocol).",
    ),
    seed: int = typer.Option(
        0, "--seed", help="Seed of the metrics' bootstrap CIs and of --sample's draw."
    ),
    sample: int | None = sample_option(),
    language: list[str] = language_option(),
    fmt: str = typer.Option(
        "auto", "--format", help=f"Candidates format: {', '.join(FORMATS)} (auto: per line)."
    ),
    allow_missing: bool = typer.Option(
        False,
        "--allow-missing",
        help="Score only the tasks a model answered (default: a missing task counts as NX).",
    ),
    skip_bad_lines: bool = typer.Option(
        False, "--skip-bad-lines", help="Judge the usable lines of a candidates file with bad ones."
    ),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable summary on stdout."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="List every failed candidate."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress bar and no table."),
    store: str = typer.Option("results/perfgym.sqlite", "--store", help="Result store (SQLite)."),
    no_store: bool = typer.Option(False, "--no-store", help="Do not record verdicts."),
    replay: bool = typer.Option(False, "--replay", help="Reuse stored verdicts; execute nothing."),
    replay_machine: str | None = typer.Option(
        None, "--replay-machine", help="Replay verdicts measured on this fingerprint ('*': any)."
    ),
    backend: str = typer.Option(
        "local", "--backend", help=f"Judge on: {', '.join(BACKENDS_SHOWN)}."
    ),
    url: str | None = typer.Option(None, "--url", help="Service URL (--backend service)."),
    token: str | None = typer.Option(
        None, "--token", envvar="PERFGYM_TOKEN", help="Service token."
    ),
    address: str | None = typer.Option(None, "--address", help="Ray address (--backend ray)."),
    no_report: bool = typer.Option(False, "--no-report", help="Do not write the HTML report."),
    resume: bool = typer.Option(
        True,
        "--resume/--no-resume",
        help="Reuse the verdicts of an interrupted run of the same command (default) or start over.",
    ),
    published: bool = typer.Option(
        False,
        "--published",
        help="PerfCodeBench: score its published eval_result.json files "
        "(no execution) and print the RLPF table per model.",
    ),  # fmt: skip
    rules: str | None = typer.Option(
        None,
        "--rules",
        metavar="perfgym|published",
        help="--published: perfgym's documented rules (default) or PerfCodeBench's own "
        "(its scripts' reading; docs/perfcodebench.md).",
    ),  # fmt: skip
    model: list[str] = typer.Option(
        [], "--model", help="Generate from this model and judge (or, with --published, only these)."
    ),
    samples: int | None = typer.Option(None, "--samples", "-k", help="--model: samples per task."),
    model_config: Path | None = typer.Option(
        None, "--model-config", help="--model: model config file (TOML/YAML, see docs/llm.md)."
    ),
    base_url: str | None = typer.Option(None, "--base-url", help="--model: endpoint (…/v1)."),
    api_key_env: str | None = typer.Option(
        None, "--api-key-env", help="--model: variable holding the API key."
    ),
    candidates_from: str | None = typer.Option(
        None, "--candidates-from", help="PerfCodeBench: judge this model's published sources."
    ),
    external: Path | None = external_option(),
    time_limit: str | None = time_limit_option(),
    fail_fast: bool = typer.Option(
        True,
        "--fail-fast/--no-fail-fast",
        help="Stop a candidate at its first failed test (default), or run every test.",
    ),  # fmt: skip
    isolate_tests: bool = typer.Option(
        False,
        "--isolate-tests",
        help="Function tasks: one sandboxed process per test (default: one per candidate).",
    ),  # fmt: skip
    time_largest: int | None = typer.Option(
        None,
        "--time-largest",
        metavar="K",
        help="Correctness-only tasks (HumanEval+): time the K largest tests by input size.",
    ),  # fmt: skip
    hidden: bool = typer.Option(
        False,
        "--hidden",
        help="Decide correctness and timing on hidden workloads drawn fresh from each task's "
        "generator (default: the declared workloads, as published results are).",
    ),  # fmt: skip
    perf_inputs: Path | None = typer.Option(
        None,
        "--perf-inputs",
        metavar="FILE",
        help="Correctness-only tasks: time these performance inputs (EvalPerf JSONL: task_id, "
        "pe_input).",
    ),  # fmt: skip
) -> None:
    """Judge every candidate through extract → build → run → check → measure."""
    from perfgym.cli.suite_arg import load_or_fail

    given = {"--candidates": candidates is not None, "--solutions": bool(solutions),
             "--replay": replay, "--no-store": no_store, "-v": verbose, "-q": quiet,
             "--json": as_json, "--replay-machine": replay_machine is not None,
             "--url": url is not None, "--address": address is not None,
             "--backend service": backend == "service", "--backend ray": backend == "ray",
             "--allow-missing": allow_missing, "--skip-bad-lines": skip_bad_lines,
             "--format": fmt != "auto", "--published": published, "--model": bool(model),
             "--candidates-from": candidates_from is not None,
             "--time-limit": time_limit is not None,
             "--samples": samples is not None, "--model-config": model_config is not None,
             "--base-url": base_url is not None, "--api-key-env": api_key_env is not None,
             "--time-largest": time_largest is not None, "--perf-inputs": perf_inputs is not None,
             "--hidden": hidden, "--rules": rules is not None,
             "--sample": sample is not None, "--language": bool(language)}  # fmt: skip
    refuse_conflicts(given, [
        ("--solutions", "--candidates", "judge a file's candidates or the suite's solutions"),
        ("--replay", "--no-store", "a replay reads its verdicts from the store"),
        ("-v", "-q", "choose one"),
        ("--published", "--candidates", "--published scores the published results only"),
        ("--published", "--solutions", "--published scores the published results only"),
        ("--candidates-from", "--candidates", "judge one set of candidates"),
        ("--candidates-from", "--solutions", "judge one set of candidates"),
        ("--time-limit", "--published", "--published runs nothing"),
        ("--time-limit", "--replay", "a replay runs nothing"),
        ("--time-largest", "--perf-inputs", "time one set of inputs"),
        ("--hidden", "--published", "--published runs nothing"),
        ("--hidden", "--model", "--hidden judges given candidates or solutions"),
        ("--hidden", "--replay", "a replay runs nothing"),
        ("--published", "--sample", "--published scores every published task (or --task)"),
        ("--published", "--language", "--published scores every published task (or --task)"),
    ])  # fmt: skip
    seconds = time_limit_of(time_limit)
    refuse_orphans(given, [("--replay-machine", "--replay"), ("--url", "--backend service"),
                           ("--address", "--backend ray"), ("--allow-missing", "--candidates"),
                           ("--skip-bad-lines", "--candidates"), ("--format", "--candidates"),
                           ("--samples", "--model"), ("--model-config", "--model"),
                           ("--base-url", "--model"), ("--api-key-env", "--model"),
                           ("--rules", "--published")])  # fmt: skip
    if published:
        from perfgym.cli.published_cmd import rules_of, run_published

        run_published(suite, model, task, as_json, rules_of(rules))
        return
    inputs = perf_inputs_or_fail(time_largest, perf_inputs)  # before the suite loads
    s, tasks = load_or_fail(suite, task, external)
    tasks = chosen_tasks(select_tasks(tasks, split, limit, s.name), language, sample, seed)
    tasks = with_time_limit(tasks, seconds)
    tasks = timed_tasks(tasks, time_largest, inputs, perf_inputs)
    if model:  # generate from a model, then judge: cli/eval_model.py
        from perfgym.cli.eval_model import eval_model_command

        eval_model_command(s, tasks, model, samples, out, store, no_store, repeats, seed,
                           as_json, quiet, no_report, given,
                           model_config=model_config, base_url=base_url, api_key_env=api_key_env)  # fmt: skip
        return
    if repeats is not None and repeats < 1:
        fail(f"--repeats must be at least 1, got {repeats}")
    from perfgym.enamel.protocol import is_enamel

    enamel = bool(tasks) and all(is_enamel(t) for t in tasks)
    if enamel and hidden:
        fail("--hidden does not apply to ENAMEL's protocol (its levels' inputs are ENAMEL's "
             "published ones)")  # fmt: skip
    if enamel and seconds is not None:
        fail("--time-limit does not apply to ENAMEL's protocol: its limits come from each "
             "problem's reference (timeout_factor x its time)")  # fmt: skip
    repeats = resolve_repeats(repeats, enamel=enamel)
    out_given = out is not None
    out = out or Path("results") / f"{s.name}-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
    # Before judging anything: a verdict judged is never lost to a path that cannot be written.
    check_writable(out, "results file")
    if not no_store:
        check_writable(Path(store), "result store")
    if enamel and candidates is not None:  # model samples through ENAMEL's own protocol
        from perfgym.cli.enamel_candidates import run_enamel_candidates

        run_enamel_candidates(s, tasks, candidates, solutions, out, repeats, as_json)
        return
    from perfgym.store.checkpoint import ResumeFrom

    resume_from = ResumeFrom(out_given, f"{s.name}-", resume and not replay)
    if enamel:
        run_enamel(tasks, solutions, out, repeats, as_json, resume=resume_from)
        return
    _judge_and_summarise(
        s, tasks, candidates, solutions, out, repeats, seed=seed, fmt=fmt,
        allow_missing=allow_missing, skip_bad_lines=skip_bad_lines, as_json=as_json,
        verbose=verbose, quiet=quiet, store=store, no_store=no_store, replay=replay,
        replay_machine=replay_machine, backend=backend, url=url, token=token, address=address,
        no_report=no_report, resume_from=resume_from, candidates_from=candidates_from,
        time_limit_s=seconds,
        judging={"fail_fast": fail_fast, "isolate_tests": isolate_tests,
                 **({"hidden_workloads": True} if hidden else {})},
    )  # fmt: skip


def perf_inputs_or_fail(time_largest: int | None, perf_inputs: Path | None
                        ) -> Mapping[str, list[list[Any]]] | None:  # fmt: skip
    """--time-largest checked and --perf-inputs read (a one-line error for a bad one)."""
    from perfgym.tasks.timed import read_perf_inputs

    if time_largest is not None and time_largest < 1:
        fail(f"--time-largest must be at least 1, got {time_largest}")
    if perf_inputs is None:
        return None
    try:
        return read_perf_inputs(perf_inputs.read_text().splitlines(), str(perf_inputs))
    except OSError as exc:
        fail(f"cannot read --perf-inputs {perf_inputs}: {exc.strerror or exc}")
    except (ValueError, UnicodeDecodeError) as exc:
        fail(f"--perf-inputs {one_line(exc)}")


def timed_tasks(tasks: list[Task], time_largest: int | None,
                inputs: Mapping[str, list[list[Any]]] | None, where: Path | None = None
                ) -> list[Task]:  # fmt: skip
    """`tasks` with what --time-largest / --perf-inputs time (correctness-only tasks only:
    every other task keeps its workloads)."""
    from perfgym.tasks.timed import is_timed, with_perf_inputs
    from perfgym.tasks.timed import time_largest as largest

    if time_largest is not None:
        return [t if is_timed(t) else largest(t, time_largest) for t in tasks]
    if inputs is None:
        return tasks
    if not {t.id for t in tasks} & set(inputs):
        fail(f"--perf-inputs {where}: names none of the selected tasks")
    return [with_perf_inputs(t, inputs[t.id]) if t.id in inputs and not is_timed(t) else t
            for t in tasks]  # fmt: skip


def _judge_and_summarise(
    s: Suite, tasks: list[Task], candidates: Path | None, solutions: list[str], out: Path,
    repeats: int, *, seed: int, fmt: str, allow_missing: bool, skip_bad_lines: bool,
    as_json: bool, verbose: bool, quiet: bool, store: str, no_store: bool, replay: bool,
    replay_machine: str | None, backend: str, url: str | None, token: str | None,
    address: str | None, no_report: bool, resume_from: ResumeFrom, candidates_from: str | None,
    time_limit_s: float | None = None,
    judging: dict[str, Any] | None = None,
) -> None:  # fmt: skip
    """Read or gather the candidates, judge them, write the results and print the summary."""
    import sqlite3

    from pydantic import ValidationError
    from rich.progress import Progress

    from perfgym.cli.candidates_arg import load_candidates_or_fail
    from perfgym.cli.candidates_file import with_meta
    from perfgym.cli.interrupted import stop_interrupted, stop_on_sigterm
    from perfgym.cli.missing import missing_counts, missing_verdicts
    from perfgym.cli.summary import failure_reasons, print_failures, print_missing
    from perfgym.errors import PerfgymError
    from perfgym.judge import JudgeConfig
    from perfgym.metrics.summary import summarise_models
    from perfgym.store.checkpoint import EvalCheckpoint
    from perfgym.store.open_judge import open_judge
    from perfgym.store.replay import RecordingJudge
    from perfgym.store.stream import judge_streaming

    problems: list[str] = []
    cands: list[Candidate]
    if candidates is not None:
        file_cands, problems = load_candidates_or_fail(candidates, s, tasks, fmt, skip_bad_lines)
        cands = list(file_cands)
    elif candidates_from is not None:
        from perfgym.cli.published_cmd import published_candidates

        cands = published_candidates(s, tasks, candidates_from)
    else:
        cands = own_solutions(tasks, solutions or ["baseline", "reference"])
        if not cands:
            fail(f"no solutions labelled {', '.join(solutions)} in {s.name}")
    cands = [dataclasses.replace(c, suite=s.name) for c in cands]  # the judge stamps it on verdicts
    missing = missing_verdicts(tasks, cands, s.name) if candidates is not None else []
    try:
        limit = {"time_limit_s": time_limit_s} if time_limit_s is not None else {}
        config = JudgeConfig(repeats=repeats, **limit, **(judging or {}))
    except ValidationError as exc:
        fail(f"invalid judge settings: {one_line(exc)}")
    t0 = time.monotonic()
    try:
        checkpoint = EvalCheckpoint(
            out, cands, config, resume=resume_from,
            store=None if no_store else store,
            header_fields={"suite": s.name, "judge": config.model_dump(mode="json"),
                           "skipped_lines": problems, "missing": missing_counts(missing),
                           "allow_missing": allow_missing, "seed": seed},
        )  # fmt: skip
    except PerfgymError as exc:
        fail(str(exc))
    except sqlite3.Error as exc:
        fail(f"result store {store}: {exc}")
    except OSError as exc:
        fail(f"cannot write results {out}: {exc.strerror or exc}")
    out = checkpoint.path
    for line in [*checkpoint.notes, checkpoint.resume_line()]:
        if line:
            err_console.print(f"[yellow]{escape(line)}[/]", soft_wrap=True)
    restore = stop_on_sigterm()
    try:
        judge = open_judge(config, backend=backend, url=url, token=token, address=address,
                           store=None if no_store else store, replay=replay,
                           replay_machine=replay_machine, run=str(out))  # fmt: skip
        with contextlib.closing(judge), Progress(console=err_console,
                                                 disable=as_json or quiet) as bar:  # fmt: skip
            job = bar.add_task(f"judging {len(cands)} candidates on {s.name}", total=len(cands),
                               completed=checkpoint.reused)  # fmt: skip
            judged = judge_streaming(
                judge, checkpoint.todo_candidates,
                finished=lambda idx, vs: checkpoint.finished(idx, with_meta(vs, cands)),
                progress=lambda done, total: bar.update(job, completed=checkpoint.reused + done),
            )  # fmt: skip
        # The results file holds what was scored, so the report and a replay agree with the
        # table: the MISSING verdicts too, unless --allow-missing (its header still counts them).
        verdicts = checkpoint.finish(with_meta(judged, cands),
                                     extra=[] if allow_missing else missing)  # fmt: skip
    except KeyboardInterrupt as exc:
        checkpoint.close()
        kept = f"{out}" + ("" if no_store else f" and the store {store}")
        stop_interrupted("verdicts", checkpoint.kept, len(cands), kept, exc)
    except PerfgymError as exc:
        checkpoint.close()
        fail(str(exc))
    except sqlite3.Error as exc:  # a store file that is not SQLite, or a locked one
        checkpoint.close()
        fail(f"result store {store}: {exc}")
    except OSError as exc:
        checkpoint.close()
        kept = "" if no_store else f"; the verdicts are in the store {store}"
        fail(f"cannot write results {out}: {exc.strerror or exc}{kept}")
    finally:
        restore()
    counted = verdicts if allow_missing else verdicts + missing
    rows = summarise_models(counted, seed=seed)
    agreed = None
    if candidates_from is not None:
        from perfgym.cli.candidates_agreement import published_agreement

        agreed = published_agreement(tasks, verdicts, candidates_from)
    print_missing(missing_counts(missing), len(tasks), allow_missing)
    report_path = None if no_report else _write_report(out)
    if as_json:
        reused = {"judged": judge.judged, "replayed": judge.replayed} if isinstance(
            judge, RecordingJudge) else {}  # fmt: skip
        print_json({"suite": s.name, "results": str(out), "skipped_lines": problems,
                    "missing": missing_counts(missing), "allow_missing": allow_missing,
                    "reused": checkpoint.reused,
                    "resumed_from": str(checkpoint.resumed_from or "") or None,
                    "report": str(report_path) if report_path else None,
                    "elapsed_s": time.monotonic() - t0, **reused,
                    "failures": failure_reasons(counted),
                    "published_agreement": None if agreed is None else agreed.model_dump(
                        mode="json"),
                    "models": [r.model_dump(mode="json") for r in rows]})  # fmt: skip
        return
    if not quiet:
        console.print(summary_table(rows, f"perfgym eval {s.name}"))
        print_failures(counted, verbose=verbose)
    if agreed is not None:
        from perfgym.cli.candidates_agreement import print_agreement

        print_agreement(agreed)
    unanswered = f" + {len(missing)} missing (NX)" if missing and not allow_missing else ""
    reused_note = f", reused {checkpoint.reused} of {len(verdicts)}" if checkpoint.reused else ""
    console.print(f"results: {out} ({len(verdicts)} verdicts{unanswered}{reused_note}, "
                  f"{time.monotonic() - t0:.0f} s)")  # fmt: skip
    if report_path is not None:
        console.print(f"report: {report_path} (per-task stages, failure reasons and speedups)")


def _write_report(results: Path) -> Path | None:
    """The HTML report beside the results; a problem with it is a warning, not a failed eval."""
    target = results.with_suffix(".html")
    try:
        from perfgym.report import write_report

        write_report([results], target)
    except Exception as exc:  # noqa: BLE001 - the verdicts are written; a report is extra
        why = (str(exc).splitlines() or [type(exc).__name__])[0]
        err_console.print(f"[yellow]no report:[/] {escape(why)}")
        return None
    return target
