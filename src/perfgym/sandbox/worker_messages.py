"""Messages of the warm Python worker: a call's request, and its replies as `CallResult` or
`ProgramResult` (classified as `request.decode` classifies a sandboxed run)."""

from __future__ import annotations

import base64
import os
import signal
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from perfgym.sandbox._inside import valuecodec
from perfgym.sandbox.execution import Status
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.request import classify_exit, exit_of

#: Limits of a call made without any.
DEFAULT_CALL_LIMITS = Limits(wall_s=10.0, memory_mb=512)

#: How a call's CPU is counted when the worker's cgroup counts it.
CPU_BY_CGROUP = "cgroup: every process of the call, checked against their rusage"

_FLAGS_DOC = (
    "Timing suspicions: 'hidden_cpu' (the worker's cgroup saw CPU no rusage of the call's "
    "processes reports: a child reaped by the kernel; it is added to cpu_s), "
    "'outlived_main' (a process of the call was still there when its main process "
    "had ended; the worker killed it)."
)


#: A call using more CPU than this x its wall time (+ the slack) used more than one core.
CPU_OVER_WALL_FACTOR, CPU_OVER_WALL_SLACK_S = 1.05, 0.010


def _cpu_fields(reply: dict[str, Any], cgroup_unavailable: str) -> dict[str, Any]:
    """CPU of every process of a call: rusage, plus what only the cgroup saw (flagged)."""
    hidden = float(reply.get("cpu_hidden_s") or 0.0)
    flags = []
    if hidden > 0:
        flags.append("hidden_cpu")
    if reply.get("outlived"):
        flags.append("outlived_main")
    if reply.get("cpu_cgroup_s") is not None:
        mechanism = CPU_BY_CGROUP
    else:
        why = cgroup_unavailable or "the worker reported no cgroup figure"
        mechanism = f"rusage of reaped processes only ({why}): a child reaped by the kernel " \
                    "is not counted"  # fmt: skip
    # Never cheaper than the cgroup says, even when the excess is under the flag's tolerance
    # (a few percent hidden in an auto-reaped child would otherwise win "faster than baseline").
    cpu_s = max(reply["cpu_user_s"] + reply["cpu_system_s"] + hidden,
                float(reply.get("cpu_cgroup_s") or 0.0))  # fmt: skip
    wall_s = float(reply.get("wall_s") or 0.0)
    if cpu_s > CPU_OVER_WALL_FACTOR * wall_s + CPU_OVER_WALL_SLACK_S:
        # A call is meant to run on one core: more CPU than its wall time is work spread over
        # cores other calls may be measuring on.
        flags.append("cpu_over_wall")
    return {"cpu_s": cpu_s, "cpu_hidden_s": hidden, "flags": flags,
            "cpu_mechanism": mechanism, "memory_mechanism": _memory_mechanism(reply)}  # fmt: skip


MEMORY_BY_CGROUP = (
    "the larger of the call's processes' wait4 ru_maxrss less the worker's resident size at "
    "fork, and the rise of the worker's memory cgroup high-water mark over the call (memfds, "
    "/tmp files, pipe buffers: every page charged to the call)"
)


def _memory_mechanism(reply: dict[str, Any]) -> str:
    if reply.get("memory_cgroup"):
        return MEMORY_BY_CGROUP
    return (
        "wait4 ru_maxrss of the call's processes less the worker's resident size at fork only "
        "(no resettable memory cgroup for the worker): RAM held where no RSS shows it (a "
        "memfd never mapped, /tmp files, pipe buffers) is not counted"
    )


class CallResult(BaseModel):
    """One call's outcome, measured from outside the call's process."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    status: Status
    phase: str = Field("run", description="'compile' when the source did not compile, else 'run'.")
    value: Any = Field(None, description="The entry point's return value (plain builtin types).")
    error: str = ""
    wall_s: float = Field(0.0, description="Fork of the call's child to its exit (external).")
    cpu_s: float = Field(
        0.0,
        description="User+system CPU of every process of the call: the rusage of all of them "
        "the worker reaped, plus `cpu_hidden_s`.",
    )
    cpu_hidden_s: float = Field(
        0.0, description="CPU the worker's cgroup saw beyond the processes' rusage (counted)."
    )
    flags: list[str] = Field(default_factory=list, description=_FLAGS_DOC)
    cpu_mechanism: str = Field("", description="How cpu_s was counted.")
    peak_rss_mb: float = Field(
        0.0,
        description="Memory the call added to the interpreter: resident, or more where its "
        "processes held RAM no RSS shows (memory_mechanism).",
    )
    memory_mechanism: str = Field("", description="How peak_rss_mb was counted.")
    stdout: str = ""
    stdout_truncated: bool = False
    reported_call_s: float | None = Field(
        None, description="The entry point's duration as timed inside the child (untrusted)."
    )
    reported_call_cpu_s: float | None = Field(
        None,
        description="The CPU time of the entry point's call (every thread of the child), read "
        "inside the child around the call (untrusted, checked like reported_call_s): on a "
        "loaded machine it is not stretched by the time other processes hold the core.",
    )
    reported_call_own_s: float | None = Field(
        None,
        description="The call's time on a machine of its own, read inside the child around the "
        "call (untrusted, checked like reported_call_s): its wall time less the time its thread "
        "was runnable but waiting for a CPU (/proc schedstat), at least its CPU time. It counts "
        "what the call computed and what it waited for (sleep, I/O, another process), not the "
        "machine's load (without schedstat: the wall time, on a clock the program cannot "
        "patch). None from a worker that did not report it.",
    )
    program_wall_s: float | None = Field(
        None,
        description="From the program's first line to the child's exit, timed by the worker "
        "(a clock reading the child sent before any program code ran, and the exit): an outside "
        "upper bound of the call's own duration.",
    )
    program_cpu_s: float | None = Field(
        None,
        description="CPU the child and every process it started (waited for or not: the "
        "worker cgroup's count, where there is one) used from the program's first line to the "
        "exit (the kernel's count, less the child's own CPU sent before any program code ran): "
        "unaffected by the machine's scheduling, and no program can lower it.",
    )
    program_cpu_call_only: bool = Field(
        False,
        description="program_cpu_s counts the call alone: every process's CPU (the worker's "
        "cgroup) from the child's word that its module ran (the arguments were handed over "
        "only then) to its word that its result was written, neither the module's execution "
        "nor the exit (False: from the program's first line to the exit).",
    )


class ProgramResult(BaseModel):
    """One program-mode run: what `Sandbox.run` would report for `python3 prog.py`, measured
    from outside the run's process (no memory sampling: peak RSS from the kernel)."""

    model_config = ConfigDict(extra="forbid")

    status: Status
    exit_code: int | None = None
    signal: int | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    wall_s: float = Field(0.0, description="Fork of the run's child to its exit (external).")
    cpu_s: float = Field(0.0, description="User+system CPU of every process of the run.")
    cpu_hidden_s: float = Field(
        0.0, description="CPU the worker's cgroup saw beyond the processes' rusage (counted)."
    )
    flags: list[str] = Field(default_factory=list, description=_FLAGS_DOC)
    cpu_mechanism: str = Field("", description="How cpu_s was counted.")
    peak_rss_mb: float = Field(
        0.0,
        description="Memory the run added to the worker: resident, or more where its "
        "processes held RAM no RSS shows (memory_mechanism).",
    )
    memory_mechanism: str = Field("", description="How peak_rss_mb was counted.")
    reason: str = ""

    @property
    def stdout_text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")

    @property
    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", errors="replace")


def call_request(
    source: str,
    entry: str | None,
    args: Sequence[Any],
    limits: Limits,
    filename: str = "solution.py",
) -> dict[str, Any]:
    """The request that runs `source` as a fresh module and calls `entry(*args)`; ValueError
    when an argument cannot cross into the sandbox."""
    try:
        encoded_args = valuecodec.encode(list(args))
    except valuecodec.UnsupportedValue as exc:
        raise ValueError(str(exc)) from exc
    return {
        "source": source,
        "filename": filename,
        "entry": entry,
        "args": encoded_args,
        "limits": {**limits.model_dump(), "cpu_s": limits.effective_cpu_s},
    }


def check_request(
    source: str, checker: str, entry: str, limits: Limits, filename: str = "solution.py"
) -> dict[str, Any]:
    """The request that judges `source` by an assertion oracle (`checker` defines
    `check(candidate)`, called with the program's `entry`), the test code in its own process."""
    return {
        "mode": "check",
        "source": source,
        "checker": checker,
        "filename": filename,
        "entry": entry,
        "limits": {**limits.model_dump(), "cpu_s": limits.effective_cpu_s},
    }


def cleanup_failure(reply: dict[str, Any]) -> str:
    """Why the worker could not clean up after this call ('' when it could): the call's own
    failure (it left what could not be removed), never an infrastructure error."""
    why = reply.get("cleanup_failed")
    if not why:
        return ""
    return f"the call left its sandbox in a state the worker could not clean ({why}); " \
           "the worker was restarted"  # fmt: skip


def call_result(reply: dict[str, Any], limits: Limits, cgroup_unavailable: str = "") -> CallResult:
    """A call's reply (or the host's note that the worker failed) as a `CallResult`."""
    if "worker_failed" in reply:
        return CallResult(status=Status.SANDBOX_ERROR, error=reply["worker_failed"])
    if "undecodable" in reply:  # the program's value made the reply too deep to decode
        return CallResult(status=Status.RUNTIME_ERROR, error=reply["undecodable"])
    return _to_result(reply, limits, cgroup_unavailable)


def _to_result(reply: dict[str, Any], limits: Limits, cgroup_unavailable: str) -> CallResult:
    if reply.get("status") == "COMPILE_ERROR":
        return CallResult(status=Status.RUNTIME_ERROR, phase="compile", error=reply["error"])
    if reply.get("status") == "SANDBOX_ERROR":
        return CallResult(status=Status.SANDBOX_ERROR, error=reply.get("error", ""))
    res = reply.get("result") or {}
    if not isinstance(res, dict):  # the server passes only objects; anything else is no result
        res = {}
    exit_status = int(reply.get("exit_status", 0))
    sig = os.WTERMSIG(exit_status) if os.WIFSIGNALED(exit_status) else None
    common = dict(
        wall_s=reply["wall_s"],
        peak_rss_mb=reply["peak_rss_mb"],
        stdout=reply.get("stdout", ""),
        stdout_truncated=reply.get("stdout_truncated", False),
        program_wall_s=reply.get("program_wall_s"),
        program_cpu_s=reply.get("program_cpu_s"),
        program_cpu_call_only=reply.get("program_cpu_call_only") is True,
        **_cpu_fields(reply, cgroup_unavailable),
    )
    if unclean := cleanup_failure(reply):
        return CallResult(status=Status.RUNTIME_ERROR, error=unclean, **common)
    error = res.get("error", "")
    error = error if isinstance(error, str) else ""
    if reply.get("killed") == "TIMEOUT":
        why = reply.get("reason")
        why = why if isinstance(why, str) and why else f"wall time over {limits.wall_s:g} s"
        return CallResult(status=Status.TIMEOUT, error=why, **common)
    if sig == signal.SIGXCPU:
        why = f"CPU time over {limits.effective_cpu_s:g} s (RLIMIT_CPU, whole seconds)"
        return CallResult(status=Status.TIMEOUT, error=why, **common)
    if error.startswith("MemoryError"):
        return CallResult(status=Status.MEMORY_LIMIT, error=error, **common)
    if res.get("ok") is True:
        try:
            value = valuecodec.decode(res.get("value"))
        except (valuecodec.UnsupportedValue, ValueError, TypeError, KeyError, AttributeError,
                RecursionError, OverflowError) as exc:  # fmt: skip
            # The program's process wrote this: a malformed value is the program's failure.
            why = f"the call's result is not a value ({type(exc).__name__}: {exc})"[:500]
            return CallResult(status=Status.RUNTIME_ERROR, error=why, **common)
        reported, cpu, own = (res.get(f"reported_call{k}_ns") for k in ("", "_cpu", "_own"))
        return CallResult(
            status=Status.OK,
            value=value,
            reported_call_s=_ns_to_s(reported),
            reported_call_cpu_s=_ns_to_s(cpu),
            reported_call_own_s=_ns_to_s(own),
            **common,
        )
    if sig is not None:
        error = error or f"killed by signal {signal.Signals(sig).name}"
    return CallResult(status=Status.RUNTIME_ERROR, error=error or "the call failed", **common)


#: The longest self-reported duration taken as a number (a year); the program's process writes
#: these, so anything longer (10**400 ns overflowed a float and raised out of the judge,
#: dropping the whole batch: red team round 4) is no report.
_MAX_REPORTED_NS = 365 * 86400 * 10**9


def _ns_to_s(ns: object) -> float | None:
    """A self-reported duration in seconds; None when it is not a plausible integer of ns."""
    if type(ns) is not int or not 0 <= ns <= _MAX_REPORTED_NS:
        return None
    return ns / 1e9


def program_result(
    reply: dict[str, Any], limits: Limits, cgroup_unavailable: str = ""
) -> ProgramResult:
    """Classify a program-mode reply as `request.decode` classifies a sandboxed run."""
    if reply.get("status") == "COMPILE_ERROR":  # what `python3 prog.py` does on a SyntaxError
        err = f"{reply['error']}\n".encode()
        return ProgramResult(status=Status.RUNTIME_ERROR, exit_code=1, stderr=err,
                             reason="exit code 1")  # fmt: skip
    if reply.get("status") == "SANDBOX_ERROR":
        return ProgramResult(status=Status.SANDBOX_ERROR, reason=reply.get("error", ""))
    if reply.get("setup_error"):
        return ProgramResult(status=Status.SANDBOX_ERROR,
                             reason=f"program mode setup failed: {reply['setup_error']}")  # fmt: skip
    code, sig = exit_of(int(reply["exit_status"]))
    out_cut, err_cut = bool(reply["stdout_truncated"]), bool(reply["stderr_truncated"])
    reason = reply.get("reason", "")
    if unclean := cleanup_failure(reply):
        status, reason = Status.RUNTIME_ERROR, unclean
    elif reply.get("killed"):
        status = Status(reply["killed"])
    elif reply.get("memory_error"):
        status = Status.MEMORY_LIMIT
        reason = f"memory limit of {limits.memory_mb:g} MiB (MemoryError, address-space limit)"
    else:
        status, why = classify_exit(code, sig, out_cut or err_cut, limits)
        reason = why or reason
    return ProgramResult(
        status=status,
        exit_code=code,
        signal=sig,
        stdout=base64.b64decode(reply["stdout"]),
        stderr=base64.b64decode(reply["stderr"]),
        stdout_truncated=out_cut,
        stderr_truncated=err_cut,
        wall_s=reply["wall_s"],
        peak_rss_mb=reply["peak_rss_mb"],
        reason=reason,
        **_cpu_fields(reply, cgroup_unavailable),
    )
