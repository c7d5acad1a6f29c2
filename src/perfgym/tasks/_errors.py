"""Turning pydantic validation errors into one-line, field-naming messages for loaders."""

from __future__ import annotations

from pydantic import ValidationError


def describe(exc: ValidationError) -> str:
    """'field `a.b`: message; ...' with unknown fields called out as such."""
    parts = []
    for error in exc.errors():
        location = ".".join(str(item) for item in error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ")
        if not location:
            parts.append(message)
        elif error["type"] == "extra_forbidden":
            parts.append(f"unknown field '{location}'")
        elif error["type"] == "missing":
            parts.append(f"missing field '{location}'")
        else:
            parts.append(f"field '{location}': {message}")
    return "; ".join(parts)
