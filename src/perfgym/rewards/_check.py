"""`check_reward`: a conformance checker any reward can be run against (Gymnasium `check_env` spirit)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from perfgym.errors import PerfgymError
from perfgym.judge.verdict import Verdict
from perfgym.rewards._base import RUNGS, RewardOutput
from perfgym.rewards._canonical import CANONICAL_COLUMNS, edge_cases, staircase
from perfgym.rewards._registry import get_reward, list_rewards

_HOLDS = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    "==": lambda a, b: a == b,
}


class RewardCheckError(PerfgymError, AssertionError):
    """A reward broke a rule `check_reward` enforces; the message says which case and which rule."""


def canonical_batch() -> tuple[list[str], list[Verdict]]:
    """Labels and verdicts `check_reward` uses: the seven staircase rungs, then the edge cases."""
    cases = staircase() + edge_cases()
    return [label for label, _ in cases], [v for _, v in cases]


def canonical_columns(
    fn: Any, n: int, given: Mapping[str, Sequence[Any]] | None = None
) -> dict[str, list[Any]]:
    """`given` plus canonical values (n of each) for every column `fn.requires` that is missing."""
    columns: dict[str, list[Any]] = {k: list(v) for k, v in (given or {}).items()}
    for spec in getattr(fn, "requires", ()):
        names = spec.split("|")
        if any(name in columns for name in names):
            continue
        known = [name for name in names if name in CANONICAL_COLUMNS]
        if not known:
            raise RewardCheckError(
                f"the reward requires column {spec!r}, which check_reward cannot invent; pass "
                f"columns={{{spec.split('|')[0]!r}: [...]}} with one entry per canonical_batch() verdict"
            )
        columns[known[0]] = [CANONICAL_COLUMNS[known[0]]() for _ in range(n)]
    for name, values in columns.items():
        if len(values) != n:
            raise RewardCheckError(f"column {name!r} has {len(values)} entries, batch has {n}")
    return columns


def _call(
    fn: Callable[..., Any], labels: list[str], verdicts: list[Verdict], cols: dict[str, list[Any]]
) -> list[Any]:
    try:
        values = fn(verdicts, **cols)
    except Exception as exc:
        for i, label in enumerate(labels):  # find the case that crashes, for a useful message
            try:
                fn([verdicts[i]], **{k: [v[i]] for k, v in cols.items()})
            except Exception as one:
                raise RewardCheckError(f"crashed on case {label!r}: {one!r}") from one
        raise RewardCheckError(f"crashed on the canonical batch: {exc!r}") from exc
    if not isinstance(values, list) or len(values) != len(verdicts):
        raise RewardCheckError(
            f"must return a list of {len(verdicts)} values, got {type(values).__name__} "
            f"of length {len(values) if hasattr(values, '__len__') else '?'}"
        )
    for label, value in zip(labels, values, strict=True):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise RewardCheckError(f"case {label!r}: value {value!r} is not a float or None")
        if not math.isfinite(value):
            raise RewardCheckError(f"case {label!r}: non-finite value {value!r}")
    return values


def _check_staircase(order: Sequence[str], by_label: Mapping[str, Any]) -> None:
    for low, high, relation in zip(RUNGS, RUNGS[1:], order, strict=False):
        a, b = by_label[low], by_label[high]
        if a is None or b is None:
            raise RewardCheckError(
                f"staircase rung {low if a is None else high!r} scored None although fully measured"
            )
        if not _HOLDS[relation](a, b):
            raise RewardCheckError(
                f"claims {low} {relation} {high} but scored {low}={a!r}, {high}={b!r}"
            )


def check_reward(
    fn: Callable[..., list[float | None]], columns: Mapping[str, Sequence[Any]] | None = None
) -> dict[str, float | None]:
    """Run `fn` on the canonical batch and raise `RewardCheckError` on the first broken rule.

    Rules: no crash on any case (missing, degraded, NaN or zero timings included); one float or
    None per verdict, never NaN/inf; deterministic; reordering the batch reorders the values;
    an infrastructure error scores None; values inside `fn.bounds`; the staircase order
    `fn.order` claims holds; `fn.score` agrees with `fn(...)`; a registered reward rebuilt from
    `name + params` gives the same values. `columns` supplies columns check_reward cannot invent.
    Returns the values by case label.
    """
    labels, verdicts = canonical_batch()
    cols = canonical_columns(fn, len(verdicts), columns)
    if _call(fn, [], [], {k: [] for k in cols}) != []:
        raise RewardCheckError("an empty batch must give an empty list")
    values = _call(fn, labels, verdicts, cols)
    if _call(fn, labels, verdicts, cols) != values:
        raise RewardCheckError("non-deterministic: two calls on the same batch differ")
    flipped = _call(fn, labels[::-1], verdicts[::-1], {k: v[::-1] for k, v in cols.items()})
    if flipped[::-1] != values:
        raise RewardCheckError("reordering the batch changed the values, not just their order")
    by_label = dict(zip(labels, values, strict=True))
    if by_label["infra_error"] is not None:
        raise RewardCheckError(
            f"an infrastructure error scored {by_label['infra_error']!r}; it must be None"
        )
    bounds = getattr(fn, "bounds", None)
    if bounds is not None:
        low, high = bounds
        for label, value in by_label.items():
            if value is not None and not (low - 1e-12 <= value <= high + 1e-12):
                raise RewardCheckError(f"case {label!r}: {value!r} outside bounds {bounds}")
    order = getattr(fn, "order", None)
    if order is not None:
        _check_staircase(order, by_label)
    score = getattr(fn, "score", None)
    if score is not None:
        outputs = score(verdicts, **cols)
        if not all(isinstance(o, RewardOutput) for o in outputs):
            raise RewardCheckError("score() must return RewardOutput objects")
        if [o.value for o in outputs] != values:
            raise RewardCheckError("score() values differ from __call__ values")
    name = getattr(fn, "name", "")
    if name and name in list_rewards():
        rebuilt = get_reward(name, **getattr(fn, "params", {}))
        if _call(rebuilt, labels, verdicts, cols) != values:
            raise RewardCheckError(f"get_reward({name!r}, **params) does not rebuild this reward")
    return by_label
