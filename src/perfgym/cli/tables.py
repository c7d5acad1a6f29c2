"""Compact console tables: one style for every command's summary, narrow enough for 100 columns."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.table import Table

#: The width every console table is designed to fit (a CI log, a split terminal).
TABLE_WIDTH = 100


def compact_table(title: str | None = None) -> Table:
    """A rich table with a rule under the header and no outer frame: two columns of padding
    per column instead of three characters of border, so more fits in 100 columns."""
    from rich import box
    from rich.table import Table

    return Table(title=title, box=box.SIMPLE_HEAD, padding=(0, 1), title_justify="left")
