"""Oracles: is one output correct? Exact, whitespace tokens, float tolerance, or a checker."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from perfgym.tasks.task import Oracle, TestCase

Checker = Callable[[Any, Any, Any], Any]
_checkers: dict[str, Checker] = {}


def _load_checker(source: str) -> Checker:
    """Compile a suite's checker once (suite data, trusted; candidate code never runs here)."""
    fn = _checkers.get(source)
    if fn is None:
        namespace: dict[str, Any] = {"__name__": "perfgym_checker"}
        exec(compile(source, "<checker>", "exec"), namespace)  # noqa: S102 - trusted suite code
        fn = namespace.get("check")
        if not callable(fn):
            raise ValueError("checker source does not define check(test_input, expected, output)")
        _checkers[source] = fn
    return fn


def _float_equal(a: Any, b: Any, tol: float) -> bool:
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_float_equal(x, y, tol) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= tol * max(1.0, abs(b))
    if isinstance(a, str) and isinstance(b, str):
        ta, tb = a.split(), b.split()
        if len(ta) != len(tb):
            return False
        for x, y in zip(ta, tb, strict=True):
            if x == y:
                continue
            try:
                if not _float_equal(float(x), float(y), tol):
                    return False
            except ValueError:
                return False
        return True
    return bool(a == b)


def check(oracle: Oracle, case: TestCase, expected: Any, output: Any) -> tuple[bool, str]:
    """(passed, message). `output` is stdout text (STDIO) or the returned value (FUNCTION)."""
    kind = oracle.kind
    if kind == "exact":
        if isinstance(output, str) and isinstance(expected, str):
            ok = output.rstrip("\n") == expected.rstrip("\n")
        else:
            ok = type(output) is type(expected) and output == expected
    elif kind == "tokens":
        if isinstance(output, str) and isinstance(expected, str):
            ok = output.split() == expected.split()
        else:
            ok = output == expected
    elif kind == "float":
        ok = _float_equal(output, expected, oracle.tolerance)
    elif kind == "checker":
        if not oracle.checker:
            raise ValueError("oracle kind 'checker' needs checker source")
        test_input = case.args if case.args is not None else case.stdin
        try:
            ok = bool(_load_checker(oracle.checker)(test_input, expected, output))
        except Exception as exc:  # noqa: BLE001 - a checker rejecting odd output is a wrong answer
            return False, f"checker rejected the output ({type(exc).__name__}: {exc})"[:300]
    else:
        raise ValueError(f"oracle kind {kind!r} is not checked by comparing outputs")
    if ok:
        return True, ""
    return False, f"wrong output: expected {_short(expected)}, got {_short(output)}"


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
