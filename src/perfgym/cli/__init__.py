"""The `perfgym` command line: one module per command, all registered on `app`."""

from __future__ import annotations

import io
import sys

import typer

app = typer.Typer(
    name="perfgym",
    help="Performance-feedback environment for code LLMs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _main() -> None:
    """Performance-feedback environment for code LLMs."""
    # A model name or message holding a lone surrogate (from a JSON escape) or a file name that
    # is not UTF-8 is printed escaped, never an encoding traceback after the work is done.
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


from perfgym.cli import eval_cmd, report_cmd, run_cmd, serve_cmd, simulate_cmd, validate_cmd  # noqa: E402,F401  (register the commands)

__all__ = ["app"]
