"""`Execution` and `Measurement`: what one sandboxed run returns."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from perfgym.run_status import HIDING_FLAGS, Status
from perfgym.sandbox.limits import Limits

__all__ = ["HIDING_FLAGS", "Execution", "Measurement", "Status"]


class Measurement(BaseModel):
    """Resources one run used, each figure with the mechanism that produced it."""

    model_config = ConfigDict(extra="forbid")

    wall_s: float = Field(description="Wall time from exec of the program to the end of its tree.")
    cpu_user_s: float = Field(description="User CPU time of every process the run created.")
    cpu_system_s: float = Field(description="System CPU time of every process the run created.")
    peak_rss_mb: float = Field(
        description="Peak memory of the run, MiB: the whole process tree's resident memory, or "
        "more where the run holds RAM no process maps (memfds, tmpfs files, shared memory, pipe "
        "buffers; mechanisms['memory'] says how it was seen)."
    )
    memory_integral_mb_s: float = Field(
        description="The run's memory (as for peak_rss_mb) integrated over time (trapezoid "
        "rule), MiB·s."
    )
    instructions: int | None = Field(
        None, description="Instructions retired by the tree; None when unavailable (see reason)."
    )
    instructions_unavailable: str | None = Field(
        None, description="Why instructions is None (e.g. no hardware counters in this kernel)."
    )
    sample_rate_hz: float = Field(description="Configured memory sampling rate.")
    samples: int = Field(description="Memory samples actually taken.")
    max_processes_seen: int = Field(0, description="Most processes seen alive at one sample.")
    cores: list[int] | None = Field(
        None,
        description="The cores the run was pinned to (timing mode: one, or a multi-core task's "
        "reserved set); None when it floated over the machine's cores.",
    )
    cpu_cgroup_s: float | None = Field(
        None,
        description="CPU of every process the run's cgroup ever held (cpuacct / cpu.stat), "
        "auto-reaped ones included; None without a cgroup.",
    )
    cpu_sampled_s: float | None = Field(
        None,
        description="Without a cgroup: the CPU of every process seen in /proc samples (a lower "
        "bound that still sees children never waited for); None with a cgroup.",
    )
    flags: list[str] = Field(
        default_factory=list,
        description="Accounting suspicions (see HIDING_FLAGS): 'hidden_cpu' (the cgroup or the "
        "samples saw more CPU than every reaped process's rusage: a child reaped by the kernel), "
        "'outlived_main' (processes still ran when the main process exited), 'cpu_over_wall' "
        "(more CPU than wall time x the cores the run may use).",
    )
    mechanisms: dict[str, str] = Field(
        default_factory=dict,
        description="figure -> mechanism, e.g. {'cpu': 'cgroup-v1 cpuacct', 'memory_limit': 'cgroup'}.",
    )
    host: str = Field("", description="Fingerprint of the machine that measured.")

    @property
    def cpu_s(self) -> float:
        """CPU time of the run: the largest of the rusage of every reaped process, the cgroup's
        count and the sampled figure (never cheaper than what the cgroup says)."""
        return max(
            self.cpu_user_s + self.cpu_system_s, self.cpu_cgroup_s or 0.0, self.cpu_sampled_s or 0.0
        )


class Execution(BaseModel):
    """The outcome of `Sandbox.run`: status, exit, capped output and measurement."""

    model_config = ConfigDict(extra="forbid", ser_json_bytes="base64", val_json_bytes="base64")

    status: Status
    exit_code: int | None = Field(None, description="Exit code when the program exited normally.")
    signal: int | None = Field(None, description="Signal number when the program was killed.")
    stdout: bytes = b""
    stderr: bytes = b""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    measurement: Measurement | None = Field(
        None, description="None only for SANDBOX_ERROR runs that never started."
    )
    limits: Limits
    files: dict[str, bytes] = Field(
        default_factory=dict, description="Files collected from the work dir after the run."
    )
    reason: str = Field("", description="Human-readable detail: which limit, which sandbox fault.")
    backend: str = Field("", description="Sandbox backend that ran it.")

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    @property
    def stdout_text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")

    @property
    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", errors="replace")
