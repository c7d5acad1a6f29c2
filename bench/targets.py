"""Bench targets: each printed as met or MISSED; a missed one makes the bench exit non-zero.

A bench states what it promises as `Target`s and ends with `sys.exit(report(targets))`:

    TARGET met     isolated-run overhead: 1.12x bare subprocess (target <= 1.3x)
    TARGET MISSED  warm worker: 958 calls/s (target >= 1000)

A figure that could not be measured (None, nan) is missed, never met. Benches stay out of CI
(they take minutes and want an idle machine); the exit status lets a script or a person see a
miss without reading the figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Target:
    """One promise: `value` compared with `bound` (`at_most` or `at_least`)."""

    name: str
    value: float | None
    op: Literal["<=", ">="]
    bound: float
    unit: str = ""
    yes_no: bool = False

    @property
    def met(self) -> bool:
        if self.value is None or math.isnan(self.value):
            return False
        return self.value <= self.bound if self.op == "<=" else self.value >= self.bound

    def line(self) -> str:
        mark = "met   " if self.met else "MISSED"
        if self.yes_no:
            return f"TARGET {mark} {self.name}: {'yes' if self.met else 'no'}"
        shown = "not measured" if self.value is None else f"{self.value:.3g}{self.unit}"
        return f"TARGET {mark} {self.name}: {shown} (target {self.op} {self.bound:g}{self.unit})"


def at_most(name: str, value: float | None, bound: float, unit: str = "") -> Target:
    return Target(name, value, "<=", bound, unit)


def at_least(name: str, value: float | None, bound: float, unit: str = "") -> Target:
    return Target(name, value, ">=", bound, unit)


def holds(name: str, ok: bool) -> Target:
    """A yes/no promise (e.g. 'no decision changed'): met when `ok`."""
    return Target(name, 1.0 if ok else 0.0, ">=", 1.0, yes_no=True)


def report(targets: list[Target]) -> int:
    """Print every target, then the tally; 0 when all are met, 1 when one is missed or none ran."""
    for t in targets:
        print(t.line(), flush=True)
    missed = [t for t in targets if not t.met]
    print(f"TARGETS {len(targets) - len(missed)} of {len(targets)} met", flush=True)
    return 1 if missed or not targets else 0
