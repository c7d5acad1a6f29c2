"""Lazy re-exports for package `__init__` files: a name's module is imported on first use.

A package that re-exports names from heavy modules (the judge's pipeline, the sandbox, task
loaders) would make every import of one of its small modules pay for all of them; with
`lazy_exports`, `import perfgym.judge.verdict` loads the verdict alone.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module `__getattr__` and `__dir__` for `package`: `exports` maps name -> module."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *exports})

    return __getattr__, __dir__


def exports_of(modules: Mapping[str, tuple[str, ...]]) -> dict[str, str]:
    """{module: names} -> {name: module}, refusing a name exported by two modules."""
    out: dict[str, str] = {}
    for module, names in modules.items():
        for name in names:
            if name in out:
                raise ValueError(f"{name!r} is exported by both {out[name]} and {module}")
            out[name] = module
    return out
