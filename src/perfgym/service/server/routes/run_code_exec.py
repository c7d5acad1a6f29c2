"""Running one SandboxFusion-style `/run_code` request in perfgym's sandbox: build with the
language's toolchain, run with stdin and files under perfgym's limits, answer in SandboxFusion's
response shape plus perfgym's own measurement."""

from __future__ import annotations

import base64
import binascii
import math
import os
import threading
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import PerfgymError
from perfgym.run_status import Status
from perfgym.sandbox.base import Sandbox
from perfgym.sandbox.execution import Execution
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.run_request import check_name
from perfgym.tasks.task import Language
from perfgym.toolchains import Build, BuildCache, BuildStatus, toolchain

#: SandboxFusion's language names (and perfgym's own) -> the toolchain that runs them.
LANGUAGES: dict[str, Language] = {
    "python": Language.PYTHON,
    "cpp": Language.CPP,
    "c": Language.C,
    "nodejs": Language.JAVASCRIPT,
    "javascript": Language.JAVASCRIPT,
    "go": Language.GO,
    "java": Language.JAVA,
    "rust": Language.RUST,
}

#: The most a request may ask for; larger values are cut to these (a trainer's 10 s default and
#: SandboxFusion's -1 "no memory limit" both land inside them).
MAX_COMPILE_S = 60.0
MAX_RUN_S = 60.0
MAX_MEMORY_MB = 4096.0
DEFAULT_MEMORY_MB = 1024.0
#: Output kept per stream: a run printing gigabytes is stopped here and its output cut.
OUTPUT_BYTES = 1 << 20


class FusionCommandStatus(StrEnum):
    """SandboxFusion's word for one compile or run (its wire values)."""

    FINISHED = "Finished"
    ERROR = "Error"
    TIME_LIMIT_EXCEEDED = "TimeLimitExceeded"


class FusionRunStatus(StrEnum):
    """SandboxFusion's word for a whole request (its wire values)."""

    SUCCESS = "Success"
    FAILED = "Failed"
    SANDBOX_ERROR = "SandboxError"


class RunCodeRequest(BaseModel):
    """The body verl's `sandbox_fusion` reward path (and SandboxFusion's own client) sends."""

    model_config = ConfigDict(extra="ignore")

    code: str
    language: str = "python"
    stdin: str | None = None
    compile_timeout: float = 10.0
    run_timeout: float = 10.0
    memory_limit_MB: float = -1  # noqa: N815 - SandboxFusion's field name
    files: dict[str, str | None] = Field(default_factory=dict)
    fetch_files: list[str] = Field(default_factory=list)


class CommandResult(BaseModel):
    """SandboxFusion's `CommandRunResult`: one compile or run."""

    status: FusionCommandStatus
    execution_time: float | None = None
    return_code: int | None = None
    stdout: str = ""
    stderr: str = ""


class RunCodeResponse(BaseModel):
    """SandboxFusion's `RunCodeResponse`, plus `perfgym`: what perfgym measured."""

    status: FusionRunStatus
    message: str = ""
    compile_result: CommandResult | None = None
    run_result: CommandResult | None = None
    files: dict[str, str] = Field(default_factory=dict)
    perfgym: dict[str, Any] = Field(default_factory=dict)


class Refused(PerfgymError, ValueError):
    """A request perfgym will not run; the response says why (status SandboxError)."""


def refusal(message: str) -> RunCodeResponse:
    return RunCodeResponse(status=FusionRunStatus.SANDBOX_ERROR, message=message)


def _within(value: float, default: float, low: float, high: float) -> float:
    """A requested limit cut into [low, high]; NaN and values <= 0 (SandboxFusion's -1: "none")
    take the default (NaN passed min/max unchanged and failed Limits' check: an HTTP 500)."""
    if not math.isfinite(value) and value != math.inf or value <= 0:
        return default
    return max(low, min(value, high))


def _decode_files(files: dict[str, str | None]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for name, content in files.items():
        try:
            check_name(name)
        except ValueError as exc:
            raise Refused(f"files: {name!r} is refused: {exc}") from None
        try:
            out[name] = base64.b64decode(content or "", validate=True)
        except (binascii.Error, ValueError):
            raise Refused(f"files: {name!r} is not base64 content") from None
    return out


def _fetch_names(names: list[str]) -> list[str]:
    for name in names:
        try:
            check_name(name)
        except ValueError as exc:
            raise Refused(
                f"fetch_files: {name!r} is outside the run's work dir and is refused ({exc})"
            ) from None
    return names


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _compile_result(build: Build) -> CommandResult:
    seconds = build.measurement.wall_s if build.measurement else None
    if build.cached and build.status is BuildStatus.OK:
        return CommandResult(status=FusionCommandStatus.FINISHED, execution_time=0.0, return_code=0)
    if build.status is BuildStatus.OK:
        return CommandResult(
            status=FusionCommandStatus.FINISHED, execution_time=seconds, return_code=0
        )
    if build.status is BuildStatus.COMPILE_ERROR:
        timed_out = build.execution_status is Status.TIMEOUT
        return CommandResult(status=FusionCommandStatus.TIME_LIMIT_EXCEEDED if timed_out else FusionCommandStatus.FINISHED,
                             execution_time=seconds, return_code=None if timed_out else 1,
                             stderr=build.log or build.reason)  # fmt: skip
    return CommandResult(
        status=FusionCommandStatus.ERROR, execution_time=seconds, stderr=build.reason
    )


def _run_result(ex: Execution) -> CommandResult:
    seconds = ex.measurement.wall_s if ex.measurement else None
    if ex.status is Status.SANDBOX_ERROR:
        return CommandResult(
            status=FusionCommandStatus.ERROR, execution_time=seconds, stderr=ex.reason
        )
    if ex.status is Status.TIMEOUT:
        return CommandResult(status=FusionCommandStatus.TIME_LIMIT_EXCEEDED, execution_time=seconds,
                             stdout=_text(ex.stdout), stderr=_text(ex.stderr))  # fmt: skip
    code = ex.exit_code
    if code is None:  # killed by a signal (a limit, or the program's own crash)
        code = 128 + (ex.signal or 9)
    if ex.status is not Status.OK and code == 0:
        code = 1  # a limit stopped a run that would have exited 0: it did not succeed
    return CommandResult(status=FusionCommandStatus.FINISHED, execution_time=seconds, return_code=code,
                         stdout=_text(ex.stdout), stderr=_text(ex.stderr))  # fmt: skip


def _measured(build: Build, ex: Execution | None) -> dict[str, Any]:
    """perfgym's additions: the run's status and limit reason, its CPU, memory and instruction
    figures from outside the program, truncation flags and whether the build was cached."""
    out: dict[str, Any] = {"build_status": build.status.value, "build_cached": build.cached}
    if ex is None:
        return out
    out.update({"status": ex.status.value, "reason": ex.reason,
                "stdout_truncated": ex.stdout_truncated, "stderr_truncated": ex.stderr_truncated,
                "limits": ex.limits.model_dump(mode="json")})  # fmt: skip
    m = ex.measurement
    if m is not None:
        out.update({"wall_s": m.wall_s, "cpu_s": m.cpu_s, "peak_rss_mb": m.peak_rss_mb,
                    "memory_integral_mb_s": m.memory_integral_mb_s,
                    "instructions": m.instructions, "flags": list(m.flags), "host": m.host})  # fmt: skip
    return out


def _overall(compile_result: CommandResult | None, run: CommandResult | None) -> FusionRunStatus:
    results = [r for r in (compile_result, run) if r is not None]
    if any(r.status == FusionCommandStatus.ERROR for r in results):
        return FusionRunStatus.SANDBOX_ERROR
    if any(r.status == FusionCommandStatus.TIME_LIMIT_EXCEEDED or (r.return_code or 0) != 0
           for r in results):  # fmt: skip
        return FusionRunStatus.FAILED
    return FusionRunStatus.SUCCESS


class CodeRunner:
    """Builds and runs `/run_code` requests; at most `slots` at a time (one per core)."""

    def __init__(self, cache_root: Path, slots: int | None = None) -> None:
        self.cache = BuildCache.at(cache_root)
        self.slots = slots or os.cpu_count() or 1
        self._slots = threading.BoundedSemaphore(self.slots)
        self._sandbox: Sandbox | None = None
        self._lock = threading.Lock()

    def sandbox(self) -> Sandbox:
        with self._lock:
            if self._sandbox is None:
                from perfgym.sandbox.factory import make_sandbox

                self._sandbox = make_sandbox("warm", self.cache.hiding())
            return self._sandbox

    def close(self) -> None:
        with self._lock:
            if self._sandbox is not None:
                self._sandbox.close()
                self._sandbox = None

    def run(self, req: RunCodeRequest) -> RunCodeResponse:
        language = LANGUAGES.get(req.language)
        if language is None:
            return refusal(f"language {req.language!r} is not run by perfgym; it runs "
                           f"{', '.join(sorted(LANGUAGES))}")  # fmt: skip
        try:
            files = _decode_files(req.files)
            fetch = _fetch_names(req.fetch_files)
        except Refused as exc:
            return refusal(str(exc))
        memory = _within(req.memory_limit_MB, DEFAULT_MEMORY_MB, 4.0, MAX_MEMORY_MB)
        limits = Limits(wall_s=_within(req.run_timeout, 10.0, 0.1, MAX_RUN_S), memory_mb=memory,
                        stdout_bytes=OUTPUT_BYTES, stderr_bytes=OUTPUT_BYTES)  # fmt: skip
        tc = toolchain(language)
        with self._slots:
            sandbox = self.sandbox()
            build_limits = tc.recipe.build_limits.model_copy(
                update={"wall_s": _within(req.compile_timeout, 10.0, 0.1, MAX_COMPILE_S)}
            )
            build = tc.build(sandbox, req.code, self.cache, limits=build_limits)
            compiled = _compile_result(build)
            if not build.ok:
                return RunCodeResponse(status=_overall(compiled, None),
                                       message=build.reason, compile_result=compiled,
                                       perfgym=_measured(build, None))  # fmt: skip
            argv, binds = tc.run_command(build, limits=limits)
            ex = sandbox.run(argv, stdin=req.stdin or "", files=files, limits=limits,
                             binds=binds, collect=fetch)  # fmt: skip
        run = _run_result(ex)
        status = _overall(compiled, run)
        fetched = {name: base64.b64encode(data).decode() for name, data in ex.files.items()}
        return RunCodeResponse(status=status, message=ex.reason if status == FusionRunStatus.SANDBOX_ERROR else "",
                               compile_result=compiled, run_result=run, files=fetched,
                               perfgym=_measured(build, ex))  # fmt: skip
