"""Oracles: is one output correct? Exact, whitespace tokens, float tolerance, or a task's checker
(run sandboxed: `run_checker`)."""

from __future__ import annotations

import math
import os
from typing import Any

from perfgym.errors import SandboxUnavailable
from perfgym.sandbox.execution import Status
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.per_process import PerProcess
from perfgym.sandbox.pyworker import PythonWorkerPool
from perfgym.tasks.task import Oracle, TestCase

#: What one checker call may use (it runs in a warm worker's forked, unprivileged child).
CHECKER_LIMITS = Limits(wall_s=30.0, memory_mb=2048)
_pools: PerProcess[PythonWorkerPool] = PerProcess(
    lambda: PythonWorkerPool(size=min(4, len(os.sched_getaffinity(0))))
)


def checker_pool_if_started() -> PythonWorkerPool | None:
    """This process's checker workers, or None when no checker ran here (for health)."""
    return _pools.if_started()


def run_checker(source: str, test_input: Any, expected: Any, output: Any) -> tuple[bool, str]:
    """`check(test_input, expected, output)` of a task's checker, run in the sandbox.

    A checker is task code (a task may come from any client of `perfgym serve`): it never runs
    in this process. Only an exact `True` passes: False, any other value (1, "yes", None, a
    truthy object), an exception, a timeout or a compile error is a wrong answer with the reason.
    The value crosses as tagged JSON of exact builtin types, so no object of the checker's can
    act on this side. The worker itself failing is an infrastructure error (SandboxUnavailable).
    """
    try:
        r = _pools.get().call(source, "check", [test_input, expected, output], CHECKER_LIMITS)
    except ValueError as exc:  # a value that cannot cross into the sandbox
        return False, f"the checker cannot be given this output: {exc}"[:300]
    if r.status is Status.SANDBOX_ERROR:
        raise SandboxUnavailable(f"the checker could not be run: {r.error}")
    if r.status is not Status.OK:
        what = (
            "does not compile" if r.phase == "compile" else f"rejected the output ({r.status.value}"
        )
        what += "" if r.phase == "compile" else ")"
        return False, f"checker {what}: {r.error}"[:300]
    if r.value is True:
        return True, ""
    if r.value is False:
        return False, ""
    return False, f"the checker returned {type(r.value).__name__}, not a bool: counted as wrong"


def _float_equal(a: Any, b: Any, tol: float) -> bool:
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_float_equal(x, y, tol) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        try:
            if math.isnan(a) or math.isnan(b):
                return math.isnan(a) and math.isnan(b)
            return abs(a - b) <= tol * max(1.0, abs(b))
        except OverflowError:  # an int beyond any float (10**400): equal only when identical
            return a == b
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
        ok, why = run_checker(oracle.checker, test_input, expected, output)
        if not ok and why:
            return False, why
    else:
        raise ValueError(f"oracle kind {kind!r} is not checked by comparing outputs")
    if ok:
        return True, ""
    return False, f"wrong output: expected {_short(expected)}, got {_short(output)}"


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
