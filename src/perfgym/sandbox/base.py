"""The `Sandbox` interface every backend implements, and its configuration."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from perfgym.sandbox.bind import Bind
from perfgym.sandbox.execution import Execution
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.run_request import Pin, RunRequest, make_request

__all__ = [
    "SHM_DIR",
    "WORK_DIR",
    "private_mounts",
    "Bind",
    "RunRequest",
    "Sandbox",
    "SandboxConfig",
]

#: Inside every run the private writable work directory is /tmp (a fresh tmpfs per run),
#: which is also the working directory and $HOME.
WORK_DIR = "/tmp"
#: POSIX shared memory and semaphores (shm_open, sem_open: multiprocessing's locks and pools)
#: live in /dev/shm: a fresh tmpfs per run too, never shared (`private_mounts`).
SHM_DIR = "/dev/shm"


def private_mounts(disk_bytes: int) -> list[tuple[str, int]]:
    """The run's writable tmpfs mounts and their sizes: `disk_bytes` in all (the limit is the
    total), a quarter of it for /dev/shm (a semaphore is a 32-byte file)."""
    shm = max(4096, disk_bytes // 4)
    return [(WORK_DIR, max(4096, disk_bytes - shm)), (SHM_DIR, shm)]


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
    uid_per_run: bool = Field(
        True,
        description="Run each program (without writable binds) as a uid no other run in flight "
        "has, so nothing the kernel counts per user (message queue bytes, pipe pages, "
        "processes) passes between concurrent runs; see perfgym.sandbox.run_uids.",
    )
    isolate_locks: bool = Field(
        True,
        description="Keep file locks to the run: `flock` and fcntl's lock-setting commands "
        "succeed without locking, so no run sees another's lock (a lock lives on the "
        "file, and runs share the view's files: red team helper-73 passed answers between "
        "concurrent runs through locks). False keeps real locks, for programs whose own "
        "processes exclude each other with them (repository commands).",
    )
    freeze_host_counters: bool = Field(
        True,
        description="Show the counters of the whole host a run could read and move (open "
        "files, inodes, free memory, forks, each core's idle time, pressure stalls) as a copy "
        "frozen once per boot, so no concurrent run reads another's activity in them; see "
        "perfgym.sandbox.host_counters.",
    )
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


class Sandbox:
    """Runs one command in isolation under `Limits` and returns an `Execution`.

    `run` is the one entry: it checks the call and hands the backend a `RunRequest` (`_run`).
    """

    name: str = "abstract"

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
        cpu: Pin = None,
        hide: Sequence[str] = (),
    ) -> Execution:
        """Run `command` (argv; argv[0] resolved on PATH inside the run) and measure it.

        files:   name -> content written into the work dir (/tmp) before the run.
        env:     the program's whole environment (PATH, HOME=/tmp, LANG=C.UTF-8 are defaulted).
        collect: names of files in the work dir returned in `Execution.files` after the run.
        cpu:     pin the run to this core, or to these distinct cores (timing mode; a
                 multi-core task's run); None lets it float. A pinned run's OMP_NUM_THREADS
                 and GOMAXPROCS default to its number of cores.
        hide:    host paths this run sees as empty directories, beyond the configured ones.
        """
        request = make_request(command, stdin=stdin, files=files, env=env, limits=limits,
                               binds=binds, collect=collect, cpu=cpu, hide=hide)  # fmt: skip
        return self._run(request)

    def _run(self, request: RunRequest) -> Execution:
        """Run a checked request: the backend's part of `run`, which every backend implements
        (a wrapper that only passes calls on may override `run` instead)."""
        raise NotImplementedError(f"{type(self).__name__} implements neither _run nor run")

    def hiding(self, paths: Sequence[str]) -> Sandbox:
        """This sandbox with `paths` hidden in every run made through the returned view (nothing
        of this one changes; see `HidingSandbox`)."""
        from perfgym.sandbox.hiding import HidingSandbox

        return HidingSandbox(self, paths)

    def close(self) -> None:
        """Release long-lived resources (warm launchers). Idempotent."""

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
