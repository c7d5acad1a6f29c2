"""Shared CLI output helpers: rich tables for people, JSON for machines, clear errors."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from perfgym.errors import one_line

__all__ = ["check_writable", "console", "err_console", "fail", "one_line", "print_json"]


def _width() -> int | None:
    """COLUMNS when set (a terminal's width, or what a log wants); else the terminal's own width,
    and 100 columns when not a terminal (CI logs, pipes: every table is designed to fit 100)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) >= 40:
        return int(columns)
    return None if sys.stdout.isatty() else 100


_WIDTH = _width()
console = Console(width=_WIDTH)
err_console = Console(stderr=True, width=_WIDTH)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print a one-line error for bad input and exit non-zero (no traceback); the outputs the
    command created and that hold no result yet are removed (cli/provisional.py)."""
    from perfgym.cli.provisional import remove_unfinished

    remove_unfinished()
    err_console.print(
        f"[bold red]error:[/] {escape(message)}", soft_wrap=True
    )  # one line, however long
    raise typer.Exit(code)


def check_writable(path: Path, what: str) -> None:
    """Fail (one line, exit 2) unless a file can be written at `path`: checked before any work
    whose result would go there, by creating its directory and a scratch file beside it."""
    from perfgym.cli.provisional import note_missing

    if path.is_dir():
        fail(f"cannot write {what} {path}: it is a directory")
    note_missing(path)  # removed again if the command fails before its first result
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", suffix=".probe"):
            pass
        if path.exists():
            with path.open("ab"):
                pass
    except (FileExistsError, NotADirectoryError) as exc:  # a file where a directory must be
        fail(f"cannot write {what} {path}: {exc.filename or path.parent} is not a directory")
    except OSError as exc:
        fail(f"cannot write {what} {path}: {exc.strerror or exc}")


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")
