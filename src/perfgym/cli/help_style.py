"""How `--help` shows a boolean flag: as a bare flag, not as an option taking a `<bool>`."""

from __future__ import annotations

from typing import Any

from typer.core import TyperOption


def show_flags_bare() -> None:
    """Typer (0.29) prints `<bool>` beside every flag, as if `--no-store` took a value; a flag's
    type column is left empty instead. Other options keep their `<type>`."""
    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None or getattr(shown, "_perfgym_bare_flags", False):
        return

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        return None if self.is_flag else shown(self, ctx)

    display_type_rich._perfgym_bare_flags = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]
