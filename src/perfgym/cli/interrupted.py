"""Stopping on Ctrl-C or SIGTERM: one line saying what was kept and how to resume, exit 130
(SIGINT) or 143 (SIGTERM), no traceback.

Around its judging, a long command calls `stop_on_sigterm()`: SIGTERM (what `kill`, a job
scheduler or a container runtime sends) then interrupts the command as Ctrl-C does, so the same
handlers write what finished, close the store and say so; only the exit code and the word
differ. Before and after that (loading, printing) SIGTERM keeps its default: nothing is lost,
and a shell reports 143 all the same.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from types import FrameType
from typing import NoReturn

import typer
from rich.markup import escape

from perfgym.cli.output import err_console

#: The shell's code for a command ended by SIGINT (128 + 2).
INTERRUPTED = 130
#: The shell's code for a command ended by SIGTERM (128 + 15).
TERMINATED = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: a KeyboardInterrupt, so every Ctrl-C handler keeps what finished."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise Terminated()


def stop_on_sigterm() -> Callable[[], None]:
    """From now on SIGTERM interrupts this process as Ctrl-C does (raising `Terminated` in the
    main thread); returns what puts the previous handler back (call it when the work that
    keeps its results on an interrupt is over). Outside the main thread (signal handlers live
    there) nothing changes."""
    try:
        before = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread (an embedding caller): SIGTERM keeps its default
        return lambda: None

    def restore() -> None:
        signal.signal(signal.SIGTERM, before)

    return restore


def exit_code(exc: BaseException | None = None) -> int:
    """130 for Ctrl-C, 143 for SIGTERM (`exc`: the KeyboardInterrupt caught)."""
    return TERMINATED if isinstance(exc, Terminated) else INTERRUPTED


def said(exc: BaseException | None = None) -> str:
    """The first word of the line: 'interrupted' (Ctrl-C) or 'terminated (SIGTERM)'."""
    return "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"


def stop_interrupted(
    what: str, kept: int, total: int, where: str, exc: BaseException | None = None
) -> NoReturn:
    """Print `interrupted: kept K of N <what> in <where>; ...` (`terminated (SIGTERM): ...`
    when `exc` is SIGTERM's) and exit 130 (143)."""
    err_console.print(
        f"[yellow]{said(exc)}:[/] kept {kept} of {total} {what} in {escape(where)}; "
        "run the same command again to judge only the rest",
        soft_wrap=True,  # one line, however long the paths
    )
    raise typer.Exit(exit_code(exc))
