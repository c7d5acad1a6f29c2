"""`Build`: the outcome of building one source with one toolchain."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from perfgym.sandbox.base import WORK_DIR
from perfgym.sandbox.execution import Measurement, Status
from perfgym.tasks.task import Language

#: Bytes of compiler output kept in `Build.log`. The head is kept: a compiler's first errors
#: are the ones that explain the rest.
LOG_BYTES = 64 * 1024


class BuildStatus(StrEnum):
    """How a build ended. SANDBOX_ERROR and TOOLCHAIN_MISSING are never the program's fault."""

    OK = "OK"
    COMPILE_ERROR = "COMPILE_ERROR"
    TOOLCHAIN_MISSING = "TOOLCHAIN_MISSING"
    SANDBOX_ERROR = "SANDBOX_ERROR"


class Build(BaseModel):
    """One build: status, capped compiler log, its own measurement, and where the artifact is."""

    model_config = ConfigDict(extra="forbid")

    status: BuildStatus
    language: Language
    recipe: str = Field(description="Name of the recipe that built it.")
    key: str = Field(
        default="",
        description="Content hash of (source, recipe, compiler version); '' if never hashed.",
    )
    artifact_dir: str | None = Field(
        default=None,
        description="Host directory holding the artifact (status OK only); bind it read-only.",
    )
    log: str = Field(
        default="", description="Compiler output (stderr then stdout), capped at LOG_BYTES."
    )
    log_truncated: bool = Field(default=False, description="The compiler said more than LOG_BYTES.")
    measurement: Measurement | None = Field(
        default=None,
        description="The build's own resources (never counted as run time); None when no "
        "compiler ran for this source (no build step, toolchain missing).",
    )
    execution_status: Status | None = Field(
        default=None,
        description="Sandbox status of the compiler run (TIMEOUT: the build hit a limit).",
    )
    reason: str = Field(default="", description="Why the build is not OK, in words.")
    cached: bool = Field(
        default=False, description="Served from the build cache: no compiler ran; log and measurement "
        "are those of the build that filled the cache entry.",
    )  # fmt: skip
    versions: dict[str, str] = Field(
        default_factory=dict, description="Tool name -> short version (compiler and runtime)."
    )

    @property
    def ok(self) -> bool:
        return self.status is BuildStatus.OK

    @property
    def cacheable(self) -> bool:
        """Whether this outcome is a property of the source alone, so it can be reused.

        A success is, and so is a compiler that refused the source. A build cut off by a limit
        may pass on a less loaded machine, and sandbox faults are ours: neither is cached.
        """
        if self.status is BuildStatus.OK:
            return True
        return (
            self.status is BuildStatus.COMPILE_ERROR
            and self.execution_status is Status.RUNTIME_ERROR
        )


class CompilerRun(Protocol):
    """How a compiler run ended, as both a sandbox `Execution` and a warm worker's
    `ProgramResult` report it."""

    @property
    def status(self) -> Status: ...
    @property
    def exit_code(self) -> int | None: ...
    @property
    def reason(self) -> str: ...
    @property
    def stdout(self) -> bytes: ...
    @property
    def stderr(self) -> bytes: ...
    @property
    def stdout_truncated(self) -> bool: ...
    @property
    def stderr_truncated(self) -> bool: ...


#: Lines that name the file a compiler message is about, with the file as group "path":
#: gcc/clang/javac/go `path:line[:col]: ...`, gcc's `path: In function ...` and include chain,
#: rustc's `--> path:line:col` / `::: path:...`, Python's `File "path", line N`, Node's
#: `path:line`.
_LOCATIONS = tuple(
    re.compile(p)
    for p in (
        r"^(?P<path>[^\s:][^:]*):\d+(?::\d+)?:",
        r"^(?P<path>[^\s:][^:]*): (?:In |At top level)",
        r"^(?:In file included from|\s+from) (?P<path>[^:]+):\d+",
        r"^\s*(?:-->|:::) (?P<path>[^:]+):\d+",
        r'^\s*File "(?P<path>[^"]+)", line \d+',
        r"^(?P<path>/[^:]+):\d+$",
    )
)
#: rustc states a message before its location (`error[E0425]: ...` then ` --> path`).
_HEADER = re.compile(r"^(?:error|warning|note|help)(?:\[\w+\])?:")
_REDACTED = "[perfgym: {n} line(s) about a file outside the build directory removed]"


def _location(line: str) -> str | None:
    for pattern in _LOCATIONS:
        m = pattern.match(line)
        if m:
            return m.group("path").strip()
    return None


def _own(path: str) -> bool:
    """Whether a file a compiler names is the candidate's own: relative to the build directory,
    under the run's work dir, or a compiler pseudo-file (`<stdin>`, `<built-in>`)."""
    if path.startswith("<") or not path.startswith("/"):
        return True
    return path == WORK_DIR or path.startswith(WORK_DIR + "/")


def redact_log(text: str) -> str:
    """`text` with every compiler message about a file outside the build directory removed,
    together with the lines it quotes from that file, until the next message about the
    candidate's own file. A source may `#include`, `#[path]`-mod or `import` any file the
    run can read, and compilers quote the offending lines; the log must only ever quote what
    the candidate wrote. Each removed run of lines becomes one marker line."""
    lines = text.split("\n")
    out: list[str] = []
    outside = False
    dropped = 0
    for i, line in enumerate(lines):
        path = _location(line)
        if path is not None:
            outside = not _own(path)
        elif _HEADER.match(line):
            after = _location(lines[i + 1]) if i + 1 < len(lines) else None
            outside = after is not None and not _own(after)
        if outside:
            dropped += 1
            continue
        if dropped:
            out.append(_REDACTED.format(n=dropped))
            dropped = 0
        out.append(line)
    if dropped:
        out.append(_REDACTED.format(n=dropped))
    return "\n".join(out)


def compiler_log(execution: CompilerRun) -> tuple[str, bool]:
    """The compiler's messages, capped at LOG_BYTES: (text, truncated)."""
    raw = execution.stderr
    if execution.stdout:
        raw = raw + (b"\n" if raw and not raw.endswith(b"\n") else b"") + execution.stdout
    truncated = execution.stderr_truncated or execution.stdout_truncated
    if len(raw) > LOG_BYTES:
        raw = raw[:LOG_BYTES]
        truncated = True
    text = redact_log(raw.decode("utf-8", errors="replace"))
    if truncated:
        text += "\n[... compiler output cut by perfgym ...]\n"
    return text, truncated


def classify(execution: CompilerRun) -> tuple[BuildStatus, str]:
    """Map the compiler's execution onto a build status and a reason."""
    status = execution.status
    if status is Status.OK:
        return BuildStatus.OK, ""
    if status is Status.OUTPUT_LIMIT and execution.exit_code == 0:
        return BuildStatus.OK, ""  # a chatty compiler that succeeded; its log is cut
    if status is Status.SANDBOX_ERROR:
        return (
            BuildStatus.SANDBOX_ERROR,
            f"the sandbox failed to run the compiler: {execution.reason}",
        )
    if status is Status.RUNTIME_ERROR:
        return BuildStatus.COMPILE_ERROR, f"the compiler rejected the source ({execution.reason})"
    # TIMEOUT, MEMORY_LIMIT, OUTPUT_LIMIT: the source made the compiler exceed the build limits
    # (an include of /dev/zero, a template explosion): the program does not build.
    return BuildStatus.COMPILE_ERROR, f"the build hit a limit: {status.value}: {execution.reason}"


def finished(base: Build, execution: CompilerRun, measurement: Measurement | None) -> Build:
    """`base` with the outcome of the compiler's run: status, reason, log and `measurement`."""
    status, reason = classify(execution)
    log, truncated = compiler_log(execution)
    return base.model_copy(
        update={
            "status": status,
            "reason": reason,
            "log": log,
            "log_truncated": truncated,
            "measurement": measurement,
            "execution_status": execution.status,
        }
    )
