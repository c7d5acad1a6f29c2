"""Batch calls of the warm Python worker: the request that runs one candidate's tests in one
child (each under its own limits), and its reply as `BatchResult` (one `BatchCase` per test
the child was asked; see `_inside/pyworker_batch.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from perfgym.sandbox._inside import valuecodec
from perfgym.sandbox.execution import Status
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.worker_messages import cleanup_failure

#: Most CPU one batch's child may use in all (its RLIMIT_CPU), whatever its tests' limits sum to.
MAX_BATCH_CPU_S = 3600.0

_STATUS = {"OK": Status.OK, "RUNTIME_ERROR": Status.RUNTIME_ERROR, "TIMEOUT": Status.TIMEOUT,
           "MEMORY_LIMIT": Status.MEMORY_LIMIT, "CRASH": Status.RUNTIME_ERROR}  # fmt: skip


@dataclass(frozen=True)
class ValueDigest:
    """A large returned value, as the worker replied it: the SHA-256 of the answer's bytes
    (the worker took it, not the program). Equal digests: the same value, in the same form;
    unequal ones say nothing (ask for the values)."""

    sha256: str
    size: int


class BatchCase:
    """One test of a batch: how it ended, the value it returned (or its `ValueDigest`, when
    large), and what it cost, measured by the worker (wall time from question to answer; the
    child's CPU from /proc). A plain slotted class, not a model: one is made per test (124,000
    in a HumanEval+ run), and a pydantic model cost 10x the time per test on the host."""

    __slots__ = ("status", "value", "error", "wall_s", "cpu_s")

    def __init__(self, status: Status, value: Any = None, error: str = "",
                 wall_s: float = 0.0, cpu_s: float = 0.0) -> None:  # fmt: skip
        self.status, self.value, self.error = status, value, error
        self.wall_s, self.cpu_s = wall_s, cpu_s

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BatchCase):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    __hash__ = None  # type: ignore[assignment] # mutable, compared by value

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__)
        return f"BatchCase({fields})"


class BatchResult(BaseModel):
    """A batch's tests in order, as far as the child was asked: a batch that stopped early
    (a crash, a timeout, or a failure under fail_fast) has fewer cases than tests, and the
    last case says why; the tests after it have no verdict (never run)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    status: Status = Field(Status.OK, description="SANDBOX_ERROR: the worker failed; "
                           "RUNTIME_ERROR with phase 'compile': the source does not compile.")  # fmt: skip
    phase: str = "run"
    error: str = ""
    cases: list[BatchCase] = Field(default_factory=list)
    wall_s: float = 0.0
    peak_rss_mb: float = 0.0


def batch_request(
    source: str,
    entry: str,
    tests: Sequence[tuple[Sequence[Any], Limits]],
    limits: Limits,
    *,
    fail_fast: bool,
    filename: str = "solution.py",
) -> dict[str, Any]:
    """The request running `entry(*args)` for every (args, its limits) of `tests` in one child
    of a fresh module; `limits`: the module's load and the child's memory, processes and
    files. ValueError when an argument cannot cross into the sandbox."""
    encoded = []
    total = limits.effective_cpu_s
    for args, own in tests:
        try:
            encoded.append({"args": valuecodec.encode(list(args)), "cpu_s": own.effective_cpu_s,
                            "wall_s": own.wall_s})  # fmt: skip
        except valuecodec.UnsupportedValue as exc:
            raise ValueError(str(exc)) from exc
        total += own.effective_cpu_s
    return {
        "mode": "batch",
        "source": source,
        "filename": filename,
        "entry": entry,
        "fail_fast": fail_fast,
        "tests": encoded,
        "load_cpu_s": limits.effective_cpu_s,
        "load_wall_s": limits.wall_s,
        "limits": {**limits.model_dump(), "cpu_s": min(total, MAX_BATCH_CPU_S)},
    }


def batch_result(reply: dict[str, Any]) -> BatchResult:
    """A batch's reply (or the host's note that the worker failed) as a `BatchResult`."""
    if "worker_failed" in reply:
        return BatchResult(status=Status.SANDBOX_ERROR, error=reply["worker_failed"])
    if "undecodable" in reply:  # the program's values made the reply too deep to decode
        return BatchResult(status=Status.RUNTIME_ERROR, error=reply["undecodable"])
    if reply.get("status") == "COMPILE_ERROR":
        return BatchResult(status=Status.RUNTIME_ERROR, phase="compile", error=reply["error"])
    if reply.get("status") == "SANDBOX_ERROR":
        return BatchResult(status=Status.SANDBOX_ERROR, error=str(reply.get("error", "")))
    cases = [_case(raw) for raw in reply.get("results", [])]
    # what the batch left could not be cleaned: its last test carries the failure
    if (unclean := cleanup_failure(reply)) and cases:
        cases[-1] = BatchCase(status=Status.RUNTIME_ERROR, error=unclean,
                              wall_s=cases[-1].wall_s, cpu_s=cases[-1].cpu_s)  # fmt: skip
    return BatchResult(cases=cases, wall_s=float(reply.get("wall_s", 0.0)),
                       peak_rss_mb=float(reply.get("peak_rss_mb", 0.0)))  # fmt: skip


def _case(raw: dict[str, Any]) -> BatchCase:
    # One per test (250,000 in a HumanEval+ run): every field is made of its exact type here.
    status = _STATUS.get(str(raw.get("status")), Status.RUNTIME_ERROR)
    wall, cpu = float(raw.get("wall_s", 0.0)), float(raw.get("cpu_s", 0.0))
    error = str(raw.get("error", ""))[:2000]
    if raw.get("status") == "CRASH":
        error = f"the process ended during the test: {error}"
    if status is not Status.OK:
        return BatchCase(status=status, error=error, wall_s=wall, cpu_s=cpu)
    if isinstance(raw.get("digest"), str):
        digest = ValueDigest(raw["digest"], int(raw.get("size", 0)))
        return BatchCase(status=status, value=digest, wall_s=wall, cpu_s=cpu)
    try:
        value = valuecodec.decode(raw.get("value"))
    except (valuecodec.UnsupportedValue, ValueError, TypeError, KeyError, AttributeError,
            RecursionError, OverflowError) as exc:  # fmt: skip
        # the child wrote this: a malformed value is the program's failure
        why = f"the test's result is not a value ({type(exc).__name__}: {exc})"[:500]
        return BatchCase(status=Status.RUNTIME_ERROR, error=why, wall_s=wall,
                                         cpu_s=cpu)  # fmt: skip
    return BatchCase(status=Status.OK, value=value, wall_s=wall, cpu_s=cpu)
