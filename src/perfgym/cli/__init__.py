"""The `perfgym` command line: one module per command, all registered on `app`.

Start-up stays light (`perfgym --help` well under a second): the command modules import only
typer, rich and the CLI's own helpers at import time, and their judge, metrics, store, scipy,
Ray or FastAPI inside the command functions.
"""

from __future__ import annotations

import io
import sys

import typer

from perfgym.cli.help_style import show_flags_bare

show_flags_bare()

app = typer.Typer(
    name="perfgym",
    help="Performance-feedback environment for code LLMs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        from perfgym import __version__

        typer.echo(f"perfgym {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """Performance-feedback environment for code LLMs."""
    from perfgym.cli.provisional import reset

    reset()  # what an earlier command in this process created is not this one's to remove
    # A model name or message holding a lone surrogate (from a JSON escape) or a file name that
    # is not UTF-8 is printed escaped, never an encoding traceback after the work is done.
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


import perfgym.cli.dataset_cmd  # noqa: E402,F401  (registers `perfgym dataset`)
from perfgym.cli import (  # noqa: E402,F401  (register the commands)
    agent_cmd,  # noqa: E402,F401  (register the command)
    audit_cmd,
    eval_cmd,
    generate_cmd,
    list_cmd,
    optimize_cmd,
    report_cmd,
    run_cmd,
    serve_cmd,
    simulate_cmd,
    validate_cmd,
)

#: Top-level module of an optional dependency -> the extra that installs it.
_EXTRA_OF = {
    "openai": "llm", "yaml": "llm", "jinja2": "report", "matplotlib": "report",
    "fastapi": "service", "uvicorn": "service", "httpx": "service", "ray": "service",
    "pyarrow": "service", "torch": "train", "transformers": "train", "trl": "train",
    "peft": "train", "datasets": "train", "accelerate": "train", "verl": "verl",
    "minisweagent": "agent", "testmon": "agent",
}  # fmt: skip


def missing_extra(exc: ModuleNotFoundError) -> str | None:
    """The one-line install instruction for an optional dependency that is not installed."""
    top = (exc.name or "").split(".")[0]
    extra = _EXTRA_OF.get(top)
    if extra is None:
        return None
    return (f"this command needs the optional package {top!r}, which is not installed: "
            f"pip install 'perfgym[{extra}]' (or scripts/setup {extra})")  # fmt: skip


def main() -> None:
    """The `perfgym` entry point: `app`, with a missing optional dependency said in one line
    (with the extra that installs it) instead of a traceback."""
    from perfgym.collector import pace_for_long_runs

    pace_for_long_runs()
    try:
        app()
    except ModuleNotFoundError as exc:
        line = missing_extra(exc)
        if line is None:
            raise
        print(f"error: {line}", file=sys.stderr)
        raise SystemExit(2) from None


__all__ = ["app", "main"]
