"""Stopping on Ctrl-C: one line saying what was kept and how to resume, exit 130, no traceback."""

from __future__ import annotations

from typing import NoReturn

import typer
from rich.markup import escape

from perfgym.cli.output import err_console

#: The shell's code for a command ended by SIGINT (128 + 2).
INTERRUPTED = 130


def stop_interrupted(what: str, kept: int, total: int, where: str) -> NoReturn:
    """Print `interrupted: kept K of N <what> in <where>; ...` and exit 130."""
    err_console.print(
        f"[yellow]interrupted:[/] kept {kept} of {total} {what} in {escape(where)}; "
        "run the same command again to judge only the rest",
        soft_wrap=True,  # one line, however long the paths
    )
    raise typer.Exit(INTERRUPTED)
