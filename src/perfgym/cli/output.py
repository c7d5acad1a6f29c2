"""Shared CLI output helpers: rich tables for people, JSON for machines, clear errors."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

# Logs and CI are not terminals: give tables room instead of folding every cell.
_WIDTH = None if sys.stdout.isatty() else 220
console = Console(width=_WIDTH)
err_console = Console(stderr=True, width=_WIDTH)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print a one-line error for bad input and exit non-zero (no traceback)."""
    err_console.print(f"[bold red]error:[/] {escape(message)}")
    raise typer.Exit(code)


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")
