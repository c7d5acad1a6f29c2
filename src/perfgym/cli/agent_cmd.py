"""`perfgym agent TASK|perfgym-repos --model M`: the PerfAgent loop on repository tasks."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from perfgym.cli import app, model_options
from perfgym.cli.interrupted import stop_interrupted
from perfgym.cli.output import check_writable, console, fail, one_line

if TYPE_CHECKING:
    from perfgym.repos.task import RepoTask

BUILTIN = "perfgym-repos"


def _tasks(spec: str) -> list[RepoTask]:
    from perfgym.repos.loading import load_repo_suite, load_repo_task, task_file

    if spec == BUILTIN:
        return load_repo_suite(BUILTIN)
    path = Path(spec)
    if (not path.exists() and _program_suite(spec)) or _program_folder(path):
        raise FileNotFoundError(
            f"{spec!r} holds program tasks, which `perfgym generate`, `eval` and `optimize` run "
            f"(e.g. `perfgym eval {spec} --model scripted`); agent takes repository tasks "
            f"({BUILTIN} or a folder of them)"
        )
    if not path.exists():
        raise FileNotFoundError(
            f"no task or suite {spec!r} (a task folder, a suite folder or {BUILTIN})"
        )
    return [load_repo_task(path)] if task_file(path) is not None else load_repo_suite(path)


def _program_folder(path: Path) -> bool:
    """A program task's folder, or a folder of them (no repository task in it)."""
    from perfgym.repos.loading import holds_repo_task, task_file

    if not path.is_dir() or holds_repo_task(path):
        return False
    if task_file(path) is not None:
        return True
    subs = [d for d in path.iterdir() if d.is_dir() and task_file(d) is not None]
    return bool(subs) and not any(holds_repo_task(d) for d in subs)


def _program_suite(spec: str) -> bool:
    from perfgym.tasks.suite import BUILTINS, HUB_SUITES

    return spec in BUILTINS or spec.split(":", 1)[0] in HUB_SUITES


@app.command("agent")
def agent_command(
    task: str = typer.Argument(
        ..., help=f"A repository task folder, a suite folder, or {BUILTIN}."
    ),
    model: str | None = model_options.model_option(),
    model_config: Path | None = model_options.model_config_option(),
    base_url: str | None = model_options.base_url_option(),
    api_key_env: str | None = model_options.api_key_env_option(),
    temperature: float | None = model_options.temperature_option(),
    max_tokens: int | None = model_options.max_tokens_option(),
    timeout: float | None = model_options.timeout_option(),
    max_retries: int | None = model_options.max_retries_option(),
    call_log: Path | None = typer.Option(
        None,
        "--call-log",
        help="SQLite call log: answers stored there are replayed, not paid again.",
    ),
    iterations: int = typer.Option(
        5, "--iterations", min=1, max=50, help="Submissions per task (θ)."
    ),
    steps: int = typer.Option(200, "--steps", min=1, help="Agent steps (model calls) per task."),
    cost: float = typer.Option(5.0, "--cost", min=0.0, help="US dollars per task (0: no limit)."),
    tokens: int = typer.Option(0, "--tokens", min=0, help="Tokens per task (0: no limit)."),
    wall: float = typer.Option(
        0.0, "--wall", min=0.0, help="Agent wall seconds per task (0: no limit)."
    ),
    rounds: int = typer.Option(
        5, "--rounds", min=3, help="Interleaved timing rounds per workload."
    ),
    repeats: int = typer.Option(
        2,
        "--repeats",
        min=0,
        max=20,
        help="Further calls timed after the first in each process (the caching check; 0: off).",
    ),
    test_runs: int = typer.Option(
        3, "--test-runs", min=1, help="Shuffled full-suite runs finding flaky tests."
    ),
    rate: int = typer.Option(100, "--rate", min=1, max=10000, help="py-spy samples per second."),
    native: bool = typer.Option(False, "--native", help="py-spy --native (C frames)."),
    profile_seconds: float = typer.Option(
        1.0,
        "--profile-seconds",
        min=0.05,
        max=60.0,
        help="How long each profile loops the workload.",
    ),
    tools: bool = typer.Option(False, "--tools", help="Bash tool calls instead of text actions."),
    out: Path = typer.Option(
        Path("results/agent.jsonl"), "-o", "--out", help="Results JSONL, written as produced."
    ),
    report: Path | None = typer.Option(None, "--report", help="Also write an HTML report here."),
) -> None:
    """Profile, patch, validate and measure: the best correct, significantly faster, unflagged
    patch per task, with its speedup and CI."""
    flags = model_options.ModelFlags(model=model, model_config=model_config, base_url=base_url,
                                     api_key_env=api_key_env, temperature=temperature,
                                     max_tokens=max_tokens, timeout=timeout,
                                     max_retries=max_retries)  # fmt: skip
    if not flags.given:
        fail("give --model (or --model-config)")
    try:
        tasks = _tasks(task)
    except Exception as exc:  # loading errors are the user's: one line
        fail(one_line(exc))
    check_writable(out, "results")
    from perfgym.agent.errors import AgentError
    from perfgym.agent.model_adapter import close_model
    from perfgym.agent.run import run_tasks
    from perfgym.errors import PerfgymError
    from perfgym.llm.client import ModelClient
    from perfgym.store.calls import CallLog

    log = None
    chat = None
    server = None
    try:
        config = flags.config()
        if config.model == model_options.SCRIPTED and base_url is None and model_config is None:
            # Offline: perfgym's scripted server answers with each task's expert patch.
            from perfgym.llm.repo_script import repo_script
            from perfgym.llm.scripted import ScriptedServer

            script = repo_script(tasks)
            server = ScriptedServer(script).__enter__()
            config = config.model_copy(update={"base_url": server.base_url,
                                               "endpoint": model_options.script_endpoint(script)})  # fmt: skip
        log = CallLog(call_log) if call_log is not None else None
        chat = ModelClient(config, call_log=log)
        if server is None:  # an unreachable endpoint or a refused key: one line, before setup
            import asyncio

            from perfgym.cli.generate_cmd import _checked

            asyncio.run(_checked(chat))
        done = run_tasks(tasks, chat, out, iterations=iterations, steps=steps, cost=cost,
                         tokens=tokens, wall=wall, rounds=rounds, repeats=repeats, test_runs=test_runs,
                         rate=rate, native=native, tools=tools, profile_seconds=profile_seconds,
                         progress=lambda line: console.print(escape(line), highlight=False))  # fmt: skip
    except KeyboardInterrupt:
        stop_interrupted("tasks", _finished(out), len(tasks), str(out))
    except (AgentError, PerfgymError) as exc:
        fail(one_line(exc))
    finally:
        if chat is not None:
            close_model(chat)
        if log is not None:
            log.close()
        if server is not None:
            server.__exit__(None, None, None)
    if report is not None:
        from perfgym.report import write_report

        write_report([], report, agent_results=[out])
        console.print(f"report: {escape(str(report))}")
    console.print(f"{done} of {len(tasks)} task(s) done; results in {escape(str(out))}")


def _finished(out: Path) -> int:
    try:
        return sum(1 for ln in out.read_text().splitlines() if '"kind": "task"' in ln)
    except OSError:
        return 0
