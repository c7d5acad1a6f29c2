"""`Limits`: the resource bounds one sandboxed execution runs under."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from perfgym.ceilings import MAX_MEMORY_MB, MAX_TIME_S, MIN_MEMORY_MB, WALL_BACKSTOP

MiB = 1024 * 1024

# Ceilings that catch absurd values (typos such as 10**9 seconds) while allowing real work.
_MAX_WALL_S = MAX_TIME_S
_MAX_MEMORY_MB = int(MAX_MEMORY_MB)
_MAX_PROCS = 100_000
_MAX_BYTES = 1 << 40

__all__ = ["MAX_MEMORY_MB", "MAX_TIME_S", "MIN_MEMORY_MB", "WALL_BACKSTOP", "Limits", "on_cpu"]


class Limits(BaseModel):
    """Resource limits for one execution. Every field is validated; zero and negative are rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    wall_s: float = Field(
        10.0, description="Wall-clock limit in seconds; the run is killed after it."
    )
    cpu_s: float | None = Field(
        None, description="CPU-time limit (user+system, whole process tree); None means wall_s."
    )
    memory_mb: float = Field(
        1024.0, description="Resident-memory limit for the whole process tree, in MiB."
    )
    max_processes: int = Field(
        64, description="Most processes/threads alive at once in the run (fork-bomb guard)."
    )
    stdout_bytes: int = Field(8 * MiB, description="Bytes of stdout kept; more is cut and flagged.")
    stderr_bytes: int = Field(1 * MiB, description="Bytes of stderr kept; more is cut and flagged.")
    file_size_bytes: int = Field(64 * MiB, description="Largest single file the run may write.")
    disk_bytes: int = Field(
        256 * MiB, description="Total bytes the run may hold in its writable directories."
    )
    open_files: int = Field(256, description="Most file descriptors one process may hold.")
    network: bool = Field(
        False, description="Allow network access (off: private network namespace)."
    )
    kill_on_output_limit: bool = Field(
        True, description="Stop the run when an output cap is exceeded (status OUTPUT_LIMIT)."
    )
    forget_page_cache: bool = Field(
        False,
        description="When the run ends, drop from the host's page cache every page it brought "
        "there (its memory cgroup's): a page of a read-only file a run caches is a bit a later "
        "run can read by timing its reads (and so is a name its lookups cached as missing). "
        "The judge sets it on candidates' measured runs, ENAMEL on a sample's calls; a warm "
        "worker's call forgets where the host gave its calls a memory cgroup (cgroup v1).",
    )

    @field_validator("wall_s", "cpu_s", "memory_mb")
    @classmethod
    def _positive_float(cls, v: float | None, info):  # type: ignore[no-untyped-def]
        if v is None:
            return v
        if not (v > 0):
            raise ValueError(f"{info.field_name} must be > 0, got {v}")
        cap = {"wall_s": _MAX_WALL_S, "cpu_s": _MAX_WALL_S, "memory_mb": _MAX_MEMORY_MB}[
            info.field_name
        ]
        if v > cap:
            raise ValueError(f"{info.field_name}={v} is absurd (ceiling {cap})")
        return v

    @field_validator(
        "max_processes",
        "stdout_bytes",
        "stderr_bytes",
        "file_size_bytes",
        "disk_bytes",
        "open_files",
    )
    @classmethod
    def _positive_int(cls, v: int, info):  # type: ignore[no-untyped-def]
        if v <= 0:
            raise ValueError(f"{info.field_name} must be > 0, got {v}")
        cap = _MAX_PROCS if info.field_name == "max_processes" else _MAX_BYTES
        if info.field_name == "open_files":
            cap = 1 << 20
        if v > cap:
            raise ValueError(f"{info.field_name}={v} is absurd (ceiling {cap})")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> Limits:
        if self.open_files < 16:
            raise ValueError("open_files must be at least 16 (stdio and runtimes need some)")
        if self.memory_mb < MIN_MEMORY_MB:
            raise ValueError("memory_mb below 4 MiB cannot start any program")
        return self

    @property
    def effective_cpu_s(self) -> float:
        """The CPU-time limit in force (the wall limit when none was given)."""
        return self.cpu_s if self.cpu_s is not None else self.wall_s


def on_cpu(cpu_s: float, backstop: float = WALL_BACKSTOP, **fields: object) -> Limits:
    """Limits whose time limit is `cpu_s` of CPU (the run's whole process tree), with a wall
    limit `backstop` times that (at most a day); other fields as given."""
    wall = min(_MAX_WALL_S, backstop * cpu_s)
    return Limits(cpu_s=min(cpu_s, wall), wall_s=wall, **fields)  # type: ignore[arg-type]
