"""`perfgym generate SUITE --model M --samples k`: a candidates JSONL from any OpenAI-compatible model."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from perfgym.cli import app
from perfgym.cli import model_options as mo
from perfgym.cli.options import SPLITS, external_option, select_tasks
from perfgym.cli.output import check_writable, console, err_console, fail, print_json

if TYPE_CHECKING:
    from perfgym.llm.client import ModelClient
    from perfgym.tasks.task import Task


def default_output(suite: str, model: str, samples: int) -> Path:
    """results/<suite>-<model>-k<samples>.candidates.jsonl: the same command resumes the same file."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("_") or "model"
    return Path("results") / f"{suite}-{slug}-k{samples}.candidates.jsonl"


@app.command("generate")
def generate(
    suite: str = typer.Argument(..., help="Suite: a built-in name or a path."),
    samples: int | None = typer.Option(
        None, "--samples", "-k", help="Samples per task (default: the model config's n, else 1)."
    ),
    task: list[str] = typer.Option([], "--task", help="Only these task ids (repeatable)."),
    split: str | None = typer.Option(
        None, "--split", help=f"Only the tasks of this split ({', '.join(SPLITS)})."
    ),
    limit: int | None = typer.Option(None, "--limit", help="Only the first N tasks."),
    out: Path | None = typer.Option(
        None,
        "-o",
        "--output",
        help="Candidates JSONL (default under results/; resumed if present).",
    ),
    store: str = typer.Option(
        "results/perfgym.sqlite", "--store", help="Result store holding the call log (SQLite)."
    ),
    no_store: bool = typer.Option(False, "--no-store", help="Keep no call log (no replay)."),
    prompt: Path | None = typer.Option(
        None, "--prompt", help="Your own generation template (jinja2, blocks system and user)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable summary on stdout."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress bar."),
    model: str | None = mo.model_option(),
    model_config: Path | None = mo.model_config_option(),
    base_url: str | None = mo.base_url_option(),
    api_key_env: str | None = mo.api_key_env_option(),
    temperature: float | None = mo.temperature_option(),
    top_p: float | None = mo.top_p_option(),
    max_tokens: int | None = mo.max_tokens_option(),
    model_seed: int | None = mo.model_seed_option(),
    concurrency: int | None = mo.concurrency_option(),
    timeout: float | None = mo.timeout_option(),
    max_retries: int | None = mo.max_retries_option(),
    stream: bool | None = mo.stream_option(),
    no_json: bool = mo.no_json_option(),
    allow_empty: bool = mo.allow_empty_option(),
    external: Path | None = external_option(),
) -> None:
    """Ask a model for k samples per task with RLPF's prompt; write what `perfgym eval
    --candidates` reads. Rerunning the same command generates only the missing samples and
    replays every answer the call log holds (no paid call is made twice)."""
    from perfgym.cli.suite_arg import load_or_fail

    flags = mo.ModelFlags(model, model_config, base_url, api_key_env, temperature, top_p,
                          max_tokens, model_seed, concurrency, timeout, max_retries, stream,
                          no_json, allow_empty)  # fmt: skip
    if not flags.given:
        fail("--model is required (a model name the server serves, or 'scripted')")
    s, tasks = load_or_fail(suite, task, external)
    tasks = select_tasks(tasks, split, limit, s.name)
    run_generate(s.name, tasks, flags, samples=samples, out=out,
                 call_log=None if no_store else store, prompt=prompt, as_json=as_json,
                 quiet=quiet)  # fmt: skip


def run_generate(
    suite: str, tasks: list[Task], flags: mo.ModelFlags, *, samples: int | None, out: Path | None,
    call_log: str | None, prompt: Path | None, as_json: bool, quiet: bool,
) -> Path:  # fmt: skip
    """Generate the missing samples into `out`; one line and exit 2 on bad input or a model
    error (every line already written stays, and the next run resumes after it)."""
    import asyncio

    from rich.progress import Progress

    from perfgym.errors import PerfgymError
    from perfgym.llm.candidates_out import CandidatesOut
    from perfgym.llm.generation import plan, run_jobs

    try:
        config = flags.config()
    except PerfgymError as exc:
        fail(str(exc))
    k = samples if samples is not None else config.n
    if k < 1:
        fail(f"--samples must be at least 1, got {k}")
    out = out or default_output(suite, config.model, k)
    check_writable(out, "candidates file")
    if call_log is not None:
        check_writable(Path(call_log), "result store")
    written = CandidatesOut(out)
    try:
        with mo.open_model(flags, tasks, call_log=call_log) as (client, _server):
            jobs = plan(tasks, k, config.model, written.done, prompt)
            total = len(tasks) * k
            done_before = total - len(jobs)
            if jobs:  # an unreachable endpoint or a refused key: one line, before any bar
                asyncio.run(_checked(client))
            with Progress(console=err_console, disable=as_json or quiet, transient=True) as bar:
                job = bar.add_task(f"generating {total} samples from {config.model}",
                                   total=total, completed=done_before)  # fmt: skip

                def on_line(line: dict[str, Any]) -> None:
                    written.write(line)
                    bar.advance(job)

                async def main() -> None:
                    try:
                        await run_jobs(client, jobs, config.model,
                                       json_output=client.config.json_output, on_line=on_line)  # fmt: skip
                    finally:
                        await client.aclose()

                asyncio.run(main())
            totals = client.totals
        written.finish([t.id for t in tasks])
    except KeyboardInterrupt:
        written.close()
        from perfgym.cli.interrupted import stop_interrupted

        stop_interrupted("samples", len(written.lines), len(tasks) * k, str(out))
    except PerfgymError as exc:
        written.close()
        fail(f"{exc} ({len(written.lines)} samples kept; rerun to resume)")
    summary = {"candidates": str(out), "samples": len(tasks) * k, "new": len(jobs),
               "kept": done_before, "requests": totals.requests, "replayed": totals.replayed,
               "retries": totals.retries, "truncated": totals.truncated,
               "prompt_tokens": totals.prompt_tokens,
               "completion_tokens": totals.completion_tokens,
               "cost_usd": round(totals.cost_usd, 6)}  # fmt: skip
    if as_json:
        print_json(summary)
    elif not quiet:
        console.print(
            f"candidates: {escape(str(out))} ({len(tasks) * k} samples: {len(jobs)} new, "
            f"{done_before} kept; {totals.requests} requests, {totals.replayed} replayed, "
            f"{totals.retries} retries, {totals.truncated} truncated, "
            f"{totals.prompt_tokens}+{totals.completion_tokens} tokens, "
            f"${totals.cost_usd:.4f})",
            highlight=False,
        )
    return out


async def _checked(client: ModelClient) -> None:
    try:
        await client.check()
    finally:
        await client.aclose()
