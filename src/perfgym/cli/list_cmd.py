"""`perfgym list KIND`: the names a registry holds (rewards, metrics, sandboxes, backends,
strategies, suites), one a line with its description; with no KIND, the kinds."""

from __future__ import annotations

import typer
from rich.markup import escape

from perfgym.cli import app
from perfgym.cli.output import console, fail

#: The kinds, written out for --help (a test keeps them equal to `perfgym.registry.Kind`).
KINDS_SHOWN = ("rewards", "metrics", "sandboxes", "backends", "strategies", "suites")


@app.command("list")
def list_(
    kind: str | None = typer.Argument(None, help=f"One of: {', '.join(KINDS_SHOWN)}."),
) -> None:
    """List what can be named: rewards, metrics, sandboxes, backends, strategies, suites."""
    from perfgym.errors import ConfigError
    from perfgym.registry import Kind, entries, kind_of

    if kind is None:
        for k in Kind:
            console.print(f"{k.value:12} {len(entries(k))} registered", soft_wrap=True)
        return
    try:
        chosen = kind_of(kind)
    except ConfigError as exc:
        fail(str(exc))
    rows = entries(chosen)
    width = max(len(e.name) for e in rows) if rows else 0
    for e in rows:
        console.print(f"{escape(e.name):{width}}  {escape(e.doc)}", soft_wrap=True)
