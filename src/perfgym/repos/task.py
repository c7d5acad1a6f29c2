"""A repository task: the repository, how to build and test it, the workloads to speed up.

Workload script contract (perfgym-written tasks): a Python file defining `setup() -> state` and
`experiment(state) -> result`. perfgym imports it in a fresh process inside the sandbox, calls
`setup()`, calls `experiment(state)` and records a digest of `repr(result)` for the equivalence
check against the original repository's output. No work escapes the clock: a process outside
the workload's times the import, the setup, the *first* call (PerfAgent's defence against
caching across timed calls) and the digest; a speedup counts the first call and its digest plus
whatever the patch added to import + setup (`perfgym.repos.measure`).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field


class Workload(BaseModel):
    """One workload script, relative to the task folder. Hidden ones are never shown to the agent."""

    model_config = ConfigDict(frozen=True)

    name: str
    script: str
    hidden: bool = False


class RepoLimits(BaseModel):
    """Per-command limits inside the sandbox."""

    model_config = ConfigDict(frozen=True)

    build_s: float = 300.0
    test_s: float = 600.0
    workload_s: float = 120.0
    memory_mb: int = 4096


class RepoTask(BaseModel):
    """A repository optimisation task (GSO / SWE-fficiency / PerfAgent shape)."""

    model_config = ConfigDict(frozen=True)

    id: str
    repo: str
    """A local directory (relative to the task folder, or absolute) or a git URL."""
    commit: str | None = None
    setup: str | None = None
    """Shell command run in a fresh copy before tests or workloads (e.g. building a C extension)."""
    test_command: str = "python -m pytest -q -p no:cacheprovider"
    workloads: tuple[Workload, ...] = ()
    expert_patch: str | None = None
    """Path (relative to the task folder) of the expert's unified diff."""
    expert_speedup: float | None = None
    """The expert patch's speedup as perfgym measured it (geometric mean over workloads)."""
    description: str = ""
    limits: RepoLimits = RepoLimits()
    protected_paths: tuple[str, ...] = ()
    """Repository paths (glob patterns) a patch must not touch beyond the usual tests and
    benchmarks (`perfgym.repos.hacks` flags edits to them)."""
    folder: Path | None = Field(default=None, exclude=True)
    """Where the task was loaded from (set by the loader)."""

    @property
    def visible_workloads(self) -> tuple[Workload, ...]:
        return tuple(w for w in self.workloads if not w.hidden)

    @property
    def hidden_workloads(self) -> tuple[Workload, ...]:
        return tuple(w for w in self.workloads if w.hidden)
