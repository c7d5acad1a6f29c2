"""What every conformance check shares: its error, its record, its assertion and the runs
it makes (a script with a token in its name, to find leftovers on the host)."""

from __future__ import annotations

import os
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from perfgym.errors import PerfgymError
from perfgym.sandbox.base import Sandbox
from perfgym.sandbox.execution import Execution
from perfgym.sandbox.limits import Limits

PY = os.path.realpath(sys.executable)


class ConformanceError(PerfgymError, AssertionError):
    """A backend broke a sandbox guarantee."""


@dataclass(frozen=True)
class Check:
    name: str
    fn: Callable[[Sandbox], None]


def expect(cond: bool, what: str, ex: Execution | None = None) -> None:
    if not cond:
        extra = ""
        if ex is not None:
            extra = (
                f" [status={ex.status.value} reason={ex.reason!r} exit={ex.exit_code} "
                f"signal={ex.signal} stderr={ex.stderr_text[-400:]!r}]"
            )
        raise ConformanceError(what + extra)


def host_procs_with(token: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if token.encode() in f.read():
                    found.append(int(name))
        except OSError:
            continue
    return found


def run_py(
    sb: Sandbox, code: str, limits: Limits | None = None, **kw: object
) -> tuple[Execution, str]:
    """Run `code` as a script whose file name carries a unique token (to find leftovers)."""
    token = f"pgtok{uuid.uuid4().hex[:12]}"
    ex = sb.run([PY, f"{token}.py"], files={f"{token}.py": code}, limits=limits, **kw)  # type: ignore[arg-type]
    return ex, token


def no_leftovers(token: str) -> None:
    deadline = time.monotonic() + 3.0
    while host_procs_with(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = host_procs_with(token)
    expect(not left, f"processes outlived their run: {left}")
