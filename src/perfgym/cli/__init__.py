"""The `perfgym` command line: one module per command, all registered on `app`."""

from __future__ import annotations

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


from perfgym.cli import eval_cmd, report_cmd, run_cmd, serve_cmd, simulate_cmd, validate_cmd  # noqa: E402,F401  (register the commands)

__all__ = ["app"]
