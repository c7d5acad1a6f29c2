"""First call vs repeated calls of a Python function in one fresh process: a large gap is the
signature of a program that caches its answer across calls (PerfAgent's reward hack).

Three kinds of fresh worker children run the same composed program, interleaved over rounds:
n = 0 calls (module load only), 1 call, and 1 + k calls, each call on its own deep copy of
the arguments (made in every kind, so copying costs cancel). From outside the process:

    first call   = T(1) - T(0)
    repeat call  = (T(1 + k) - T(1)) / k
    gap          = first / repeat

Nothing is read from inside the candidate's process, so a patched timer changes nothing.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from perfgym.sandbox.execution import Status
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.pyworker import CallResult, PythonWorkerPool
from perfgym.timing.check_configs import FirstCallConfig

DRIVER = "__perfgym_first_call__"
_RESOLUTION_S = 1e-6
_DRIVER_SOURCE = f"""

def {DRIVER}(__entry, __calls, __copies, __args):
    import copy as __copy
    __sets = [__copy.deepcopy(__args) for __ in range(__copies)]
    __fn = globals()[__entry]
    for __i in range(__calls):
        __fn(*__sets[__i])
"""


class FirstCallReport(BaseModel):
    """External cost of the first call and of a repeated call, and the verdict on the gap."""

    model_config = ConfigDict(extra="forbid")

    clock: str
    first_s: float | None = Field(description="T(1) - T(0); None when not above zero.")
    repeat_s: float = Field(description="(T(1+k) - T(1)) / k, floored at 0.")
    gap: float | None = Field(description="first / repeat (repeat floored at 1 µs).")
    caching_signature: bool
    medians_s: dict[int, float] = Field(description="calls -> median duration of that kind.")
    error: str = ""


def compose(source: str) -> str:
    """The candidate's module with the driver appended (defined last, so it cannot be shadowed)."""
    return source + _DRIVER_SOURCE


def first_call_check(
    workers: PythonWorkerPool,
    source: str,
    entry: str,
    args: Sequence[Any],
    limits: Limits,
    config: FirstCallConfig | None = None,
    clock: str = "cpu",
) -> FirstCallReport:
    """Run the three kinds interleaved in fresh worker children and report the gap."""
    cfg = config or FirstCallConfig()
    program = compose(source)
    k = cfg.repeat_calls
    kinds = [0, 1, 1 + k]
    runs: dict[int, list[float]] = {n: [] for n in kinds}
    for r in range(cfg.rounds):
        order = kinds[r % 3 :] + kinds[: r % 3]
        for n in order:
            res = workers.call(program, DRIVER, [entry, n, 1 + k, list(args)], limits)
            if res.status is not Status.OK:
                return _failed(clock, f"{n} call(s): {res.status.value} {res.error}".strip())
            runs[n].append(_duration(res, clock))
    med = {n: statistics.median(xs) for n, xs in runs.items()}
    first = med[1] - med[0]
    repeat = max(0.0, (med[1 + k] - med[1]) / k)
    first_s = first if first > 0 else None
    # Repeats cheaper than a microsecond are below what a process-level clock resolves.
    gap = None if first_s is None else first_s / max(repeat, _RESOLUTION_S)
    flagged = (
        first_s is not None and first_s >= cfg.min_first_s and gap is not None
        and gap >= cfg.gap_ratio
    )  # fmt: skip
    return FirstCallReport(clock=clock, first_s=first_s, repeat_s=repeat, gap=gap,
                           caching_signature=flagged, medians_s=med)  # fmt: skip


def _duration(res: CallResult, clock: str) -> float:
    return res.cpu_s if clock == "cpu" else res.wall_s


def _failed(clock: str, why: str) -> FirstCallReport:
    return FirstCallReport(clock=clock, first_s=None, repeat_s=0.0, gap=None,
                           caching_signature=False, medians_s={}, error=why)  # fmt: skip
