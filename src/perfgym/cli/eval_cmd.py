"""`perfgym eval SUITE`: its options, parsed into an `EvalConfig` (cli/eval_run.py runs it)."""

from __future__ import annotations

from pathlib import Path

import typer

from perfgym.cli import app
from perfgym.cli.options import (
    SPLITS,
    external_option,
    refuse_conflicts,
    refuse_orphans,
    time_limit_of,
    time_limit_option,
)
from perfgym.cli.selection import language_option, sample_option
from perfgym.evaluation.candidates_formats import FORMATS
from perfgym.evaluation.repeats import JUDGE_REPEATS, resolve_repeats

#: ENAMEL's own protocol's runs, written out for --help (a test keeps it equal to the protocol's).
ENAMEL_REPEATS_SHOWN = 6
#: The judge's backends, written out for --help (a test keeps them equal to the registry's).
BACKENDS_SHOWN = ("local", "service", "ray")

__all__ = ["BACKENDS_SHOWN", "ENAMEL_REPEATS_SHOWN", "JUDGE_REPEATS", "eval_", "resolve_repeats"]


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
    enamel_timing: str | None = typer.Option(
        None,
        "--enamel-timing",
        metavar="paired|sequential",
        help="ENAMEL's protocol: ENAMEL's published order, the reference timed first "
        "(sequential, default), or each sample's calls interleaved with the reference's and "
        "ENAMEL's time correction applied per test (paired). docs/metrics.md.",
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
             "--enamel-timing": enamel_timing is not None,
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
        ("--enamel-timing", "--published", "--published runs nothing"),
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
    from perfgym.cli.eval_output import Shown
    from perfgym.cli.eval_run import evaluate
    from perfgym.evaluation.config import EvalConfig

    config = EvalConfig(
        suite=suite, task_ids=task, split=split, limit=limit, external=external,
        candidates=candidates, candidates_format=fmt, skip_bad_lines=skip_bad_lines,
        allow_missing=allow_missing, solutions=solutions, candidates_from=candidates_from,
        models=model, samples=samples, model_file=model_config, base_url=base_url,
        api_key_env=api_key_env, published=published, rules=rules, repeats=repeats,
        time_limit_s=seconds, fail_fast=fail_fast, isolate_tests=isolate_tests, hidden=hidden,
        time_largest=time_largest, perf_inputs=perf_inputs, backend=backend, url=url,
        token=token, address=address, out=out, store=None if no_store else store,
        replay=replay, replay_machine=replay_machine, resume=resume, report=not no_report,
        seed=seed, sample=sample, languages=language, enamel_timing=enamel_timing,
    )  # fmt: skip
    evaluate(config, given, Shown(as_json=as_json, verbose=verbose, quiet=quiet))
