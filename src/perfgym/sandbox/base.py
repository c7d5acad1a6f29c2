"""The `Sandbox` interface every backend implements, and its request types."""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from perfgym.sandbox.execution import Execution
from perfgym.sandbox.limits import Limits

#: Inside every run the private writable work directory is /tmp (a fresh tmpfs per run),
#: which is also the working directory and $HOME.
WORK_DIR = "/tmp"


class Bind(BaseModel):
    """A host directory or file made visible inside the run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    host_path: str = Field(description="Absolute path on the host.")
    sandbox_path: str = Field(description="Absolute path inside the run, normally under /tmp.")
    writable: bool = Field(False, description="Writable bind (builds write their outputs here).")

    @field_validator("host_path", "sandbox_path")
    @classmethod
    def _absolute(cls, v: str) -> str:
        if not v.startswith("/") or "\x00" in v:
            raise ValueError(f"bind paths must be absolute: {v!r}")
        return v


class SandboxConfig(BaseModel):
    """How a sandbox backend isolates and measures (not per-run limits)."""

    model_config = ConfigDict(extra="forbid")

    sample_rate_hz: float = Field(
        500.0, gt=0, le=20_000, description="Memory/CPU sampling rate of the run supervisor."
    )
    use_cgroups: bool = Field(
        True, description="Use a per-run cgroup when one is writable (else monitor and rlimits)."
    )
    hide_paths: list[str] = Field(
        default_factory=list,
        description="Host paths covered by an empty tmpfs in every run (caches, suites, secrets).",
    )
    python: str = Field("", description="Interpreter for the in-sandbox supervisor; '' = current.")
    favor_cgroup_moves: bool = Field(
        True,
        description="Switch on the kernel's cgroup 'favordynmods' mode (root, Linux >= 6.0) so "
        "moving each run into its cgroup does not wait for an RCU grace period; see "
        "perfgym.sandbox.cgroup_moves.",
    )
    site_hooks: bool = Field(
        False,
        description="Let a Python started in a run execute the host's site-packages start-up "
        "hooks (*.pth, sitecustomize); by default runs see them empty (perfgym.sandbox.site_hooks).",
    )
    exec_stub: bool = Field(
        True,
        description="Start programs through the compiled exec stub (posix_spawn; built on first "
        "use with cc) instead of forking the Python supervisor; falls back when it cannot be built.",
    )


class Sandbox(abc.ABC):
    """Runs one command in isolation under `Limits` and returns an `Execution`."""

    name: str = "abstract"

    @abc.abstractmethod
    def run(
        self,
        command: Sequence[str],
        *,
        stdin: bytes | str = b"",
        files: Mapping[str, bytes | str] | None = None,
        env: Mapping[str, str] | None = None,
        limits: Limits | None = None,
        binds: Sequence[Bind] = (),
        collect: Sequence[str] = (),
        cpu: int | None = None,
    ) -> Execution:
        """Run `command` (argv; argv[0] resolved on PATH inside the run) and measure it.

        files:   name -> content written into the work dir (/tmp) before the run.
        env:     the program's whole environment (PATH, HOME=/tmp, LANG=C.UTF-8 are defaulted).
        collect: names of files in the work dir returned in `Execution.files` after the run.
        cpu:     pin the run to this core (timing mode); None lets it float.
        """

    def close(self) -> None:
        """Release long-lived resources (warm launchers). Idempotent."""

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
