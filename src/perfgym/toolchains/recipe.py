"""`Recipe`: the declarative build-and-run description of one language's toolchain."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from perfgym.sandbox.limits import Limits, MiB
from perfgym.tasks.task import Language

#: Where the build directory (source + outputs) is mounted inside a build, and where the
#: finished artifact directory is mounted (read-only) inside a run. Under /tmp because binds
#: need a writable place for their mount points and /tmp is each run's private tmpfs.
BUILD_MOUNT = "/tmp/build"

#: Placeholder in `Recipe.run` replaced by the artifact's mount point.
ARTIFACT = "{artifact}"

#: Builds need more than runs: rustc, javac and `go build` use many threads and a few hundred
#: MiB, nvcc chains cicc/ptxas/gcc and writes temporaries. CPU time may exceed wall time on
#: several cores, so the CPU limit is a multiple of the wall limit. A long error log is cut, not
#: fatal: the compiler's exit code decides, the log keeps its head.
BUILD_LIMITS = Limits(
    wall_s=120.0,
    cpu_s=600.0,
    memory_mb=2048.0,
    max_processes=512,
    stdout_bytes=1 * MiB,
    stderr_bytes=1 * MiB,
    file_size_bytes=512 * MiB,
    disk_bytes=1024 * MiB,
    open_files=4096,
    kill_on_output_limit=False,
    network=False,  # builds never download: every input is in the source
)


class Recipe(BaseModel):
    """How to build a program of one language and how to run what the build produced."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Recipe id recorded with every build, e.g. 'c-gcc'.")
    language: Language = Field(description="Language this recipe builds.")
    source_name: str = Field(description="File name the source is written to, e.g. 'main.c'.")
    compiler: str = Field(
        description="Executable the build needs (looked up on the sandbox PATH); its absence is "
        "TOOLCHAIN_MISSING. For interpreted languages, the interpreter used by the check step."
    )
    version_args: tuple[str, ...] = Field(
        default=("--version",),
        description="Arguments that make the compiler/runtime print its version.",
    )
    version_regex: str = Field(
        default=r"\d+(?:\.\d+)+",
        description="Pattern of the short version in that output (group 1 when it has a group).",
    )
    build: tuple[str, ...] | None = Field(
        description="Build argv, run with the build directory as working directory. None: no "
        "build step, the source itself is the artifact."
    )
    warm_check: str | None = Field(
        default=None,
        description="Python source of a check equivalent to `build` that reads the source on "
        "stdin (recipes whose compiler is a Python interpreter). Given warm Python workers of "
        "that same interpreter, `Toolchain.build` runs it there, in a forked, confined child "
        "under the build limits, instead of starting `build` in a fresh sandbox.",
    )
    build_env: dict[str, str] = Field(
        default_factory=dict,
        description="Extra environment of the build (on top of the sandbox's).",
    )
    outputs: tuple[str, ...] = Field(
        description="Glob patterns (in the build directory) that make up the artifact; each must "
        "match at least one regular file, or the build is a COMPILE_ERROR."
    )
    runtime: str | None = Field(
        default=None,
        description="Executable needed to run the artifact (java, node); None: native binary.",
    )
    runtime_version_args: tuple[str, ...] = Field(
        default=("--version",), description="Arguments that make the runtime print its version."
    )
    run: tuple[str, ...] = Field(
        description="Run argv; '{artifact}' is replaced by the artifact's mount point."
    )
    memory_flag: str | None = Field(
        default=None,
        description="Runtime flags sizing its heap from the run's memory limit (space-separated), "
        "'{mb}' replaced by memory_fraction x Limits.memory_mb and '{young_mb}' by a young "
        "generation of 1/128 of the limit (1-16 MiB); inserted right after run[0] when limits "
        "are given.",
    )
    memory_fraction: float = Field(
        default=0.75,
        gt=0,
        le=1,
        description="Share of the run's memory limit given to the managed heap.",
    )
    compiler_cache: str | None = Field(
        default=None,
        description="Path inside the build where a persistent, writable compiler cache is mounted "
        "when the build cache enables compiler caches (Go's GOCACHE).",
    )
    needs_gpu: bool = Field(
        default=False, description="The artifact runs only where an NVIDIA GPU exists."
    )
    build_limits: Limits = Field(
        default=BUILD_LIMITS, description="Default limits of the build step."
    )

    @field_validator("source_name")
    @classmethod
    def _plain_name(cls, v: str) -> str:
        if not v or "/" in v or v in (".", ".."):
            raise ValueError(f"source_name must be a plain file name, got {v!r}")
        return v

    @field_validator("build", "run")
    @classmethod
    def _non_empty_argv(cls, v: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if v is not None and not v:
            raise ValueError("an argv must not be empty")
        return v

    @field_validator("version_regex")
    @classmethod
    def _compiles(cls, v: str) -> str:
        re.compile(v)
        return v

    def identity(self) -> dict[str, Any]:
        """The fields that decide what a build produces (part of the build cache key).

        Run flags, limits and the compiler cache are left out: changing how an artifact runs,
        or how fast it builds, must not force a rebuild. The warm check decides outcomes too,
        so it is in when set (and absent when not: other recipes keep their keys).
        """
        fields = {"name", "language", "source_name", "compiler", "build", "build_env", "outputs"}
        if self.warm_check is not None:
            fields.add("warm_check")
        return self.model_dump(mode="json", include=fields)

    def run_argv(self, artifact_mount: str, memory_mb: float | None = None) -> list[str]:
        """The run argv for an artifact mounted at `artifact_mount`."""
        argv = [a.replace(ARTIFACT, artifact_mount) for a in self.run]
        if self.memory_flag is not None and memory_mb is not None:
            mb = max(16, int(memory_mb * self.memory_fraction))
            young = min(16, max(1, int(memory_mb) // 128))
            flags = self.memory_flag.replace("{mb}", str(mb)).replace("{young_mb}", str(young))
            argv[1:1] = flags.split()
        return argv
