"""One registry for every pluggable thing: kind + name + factory (`register`, `get`, `names`).

Each kind registers in its own home modules (`HOMES`), with `@register(kind, name)` on a
factory whose docstring's first line describes it. A kind's homes are imported on first use,
in order, until the name asked for is registered (listing imports them all), so registering
loads nothing at `import perfgym` time, and a factory imports what it builds only when called:
`get(Kind.BACKENDS, "local")` never loads the service. `perfgym list KIND` prints a kind.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar

from perfgym.errors import ConfigError

__all__ = [
    "HOMES",
    "Registered",
    "Kind",
    "entries",
    "get",
    "kind_of",
    "names",
    "register",
    "unregister",
]


class Kind(str, Enum):
    """What a registry holds (its value is what `perfgym list` takes)."""

    REWARDS = "rewards"
    METRICS = "metrics"
    SANDBOXES = "sandboxes"
    BACKENDS = "backends"
    STRATEGIES = "strategies"
    SUITES = "suites"

    @property
    def noun(self) -> str:
        """One of the kind, as an error message names it."""
        return _NOUNS[self]


_NOUNS = {Kind.REWARDS: "reward", Kind.METRICS: "metric", Kind.SANDBOXES: "sandbox backend",
          Kind.BACKENDS: "judge backend", Kind.STRATEGIES: "strategy",
          Kind.SUITES: "suite"}  # fmt: skip

#: Where each kind registers: the modules whose import registers its built-in entries.
HOMES: dict[Kind, tuple[str, ...]] = {
    Kind.REWARDS: ("perfgym.rewards",),
    Kind.METRICS: ("perfgym.metrics.registry",),
    Kind.SANDBOXES: ("perfgym.sandbox.factory",),
    Kind.BACKENDS: ("perfgym.judge.local_backend", "perfgym.service.backend"),
    Kind.STRATEGIES: ("perfgym.optimize.strategies",),
    Kind.SUITES: ("perfgym.tasks.suite",),
}


@dataclass(frozen=True)
class Registered:
    """One registered thing: its factory and the line `perfgym list` prints for it."""

    kind: Kind
    name: str
    factory: Callable[..., Any]
    doc: str


F = TypeVar("F", bound=Callable[..., Any])
_TABLES: dict[Kind, dict[str, Registered]] = {kind: {} for kind in Kind}


def register(kind: Kind, name: str, *, doc: str = "", replace: bool = False) -> Callable[[F], F]:
    """Register `factory` as `name` of `kind`; `doc` (default: the docstring's first line)
    describes it. A name registered twice is a ConfigError unless `replace`."""

    def decorate(factory: F) -> F:
        table = _TABLES[kind]
        if name in table and not replace:
            raise ConfigError(f"a {kind.noun} named {name!r} is already registered")
        line = doc or (factory.__doc__ or "").strip().split("\n", 1)[0]
        table[name] = Registered(kind, name, factory, line.strip())
        return factory

    return decorate


def unregister(kind: Kind, name: str) -> None:
    """Remove `name` from `kind` (a test's or a plugin's own entry); absent is no error."""
    _TABLES[kind].pop(name, None)


def _load(kind: Kind, until: str | None = None) -> None:
    for home in HOMES[kind]:
        if until is not None and until in _TABLES[kind]:
            return
        importlib.import_module(home)


def get(kind: Kind, name: str) -> Callable[..., Any]:
    """The factory registered as `name`; an unknown name is one line listing the known ones."""
    _load(kind, until=name)
    entry = _TABLES[kind].get(name)
    if entry is None:
        _load(kind)
        entry = _TABLES[kind].get(name)
    if entry is None:
        known = ", ".join(names(kind))
        raise ConfigError(f"no {kind.noun} named {name!r}; registered: {known}")
    return entry.factory


def names(kind: Kind) -> list[str]:
    """Every name registered for `kind`, sorted."""
    _load(kind)
    return sorted(_TABLES[kind])


def entries(kind: Kind) -> list[Registered]:
    """Every entry of `kind`, sorted by name."""
    _load(kind)
    return [_TABLES[kind][n] for n in sorted(_TABLES[kind])]


def kind_of(text: str) -> Kind:
    """The kind `text` names; anything else is one line naming the kinds."""
    try:
        return Kind(text.strip().lower())
    except ValueError:
        kinds = ", ".join(k.value for k in Kind)
        raise ConfigError(f"no registry named {text!r}; the kinds are: {kinds}") from None
