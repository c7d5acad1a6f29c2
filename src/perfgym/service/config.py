"""`ServiceConfig`: how `perfgym serve` binds, queues, retries and judges."""

from __future__ import annotations

import ipaddress
import os

from pydantic import BaseModel, ConfigDict, Field, field_validator

from perfgym.errors import ConfigError
from perfgym.judge.config import JudgeConfig
from perfgym.sandbox.limits import Limits
from perfgym.tasks.suite import BUILTINS


class ServiceConfig(BaseModel):
    """Settings of one service instance (written into its /v1/config answer)."""

    model_config = ConfigDict(extra="forbid")

    host: str = Field("127.0.0.1", description="Bind address; anything but loopback needs a token.")
    port: int = Field(8765, ge=0, le=65535, description="TCP port (0: any free port).")
    token: str | None = Field(
        None, description="Bearer token every request must carry (required off loopback)."
    )
    state_dir: str = Field(
        "perfgym-service",
        validate_default=True,
        description="Directory of the persisted queue (queue.sqlite); a relative one is taken "
        "against the folder the service starts in.",
    )
    store: str | None = Field(
        None, description="Result store file for judged verdicts (default: STATE_DIR/store.sqlite)."
    )
    epoch: str = Field("0", description="Calibration epoch recorded with every stored verdict.")
    reuse_stored: bool = Field(
        False,
        description="Answer a candidate already in the store from it instead of judging it again.",
    )
    workers: int | None = Field(
        None,
        ge=1,
        description="Worker processes; each gets its own share of the cores (default: one per core).",
    )
    lease_size: int = Field(16, ge=1, le=1024, description="Most items a worker takes at once.")
    max_queue: int = Field(
        10_000, ge=1, description="Most unfinished items held; more is refused with 429."
    )
    max_items: int = Field(4096, ge=1, description="Most items in one request.")
    max_body_bytes: int = Field(32 << 20, ge=1024, description="Largest request body accepted.")
    default_deadline_s: float = Field(600.0, gt=0, description="Deadline of a request without one.")
    max_deadline_s: float = Field(3600.0, gt=0, description="Longest deadline a request may ask.")
    max_attempts: int = Field(
        3,
        ge=1,
        le=20,
        description="Tries per item when the infrastructure (not the program) fails.",
    )
    retention_s: float = Field(
        86_400.0, gt=0, description="How long finished jobs stay retrievable."
    )
    max_run_code_waiting: int = Field(
        64,
        ge=0,
        description="/run_code requests that may wait for a free slot (one slot per core); "
        "more get 429 with Retry-After.",
    )
    max_build_cache_bytes: int = Field(
        8 << 30,
        ge=1 << 20,
        description="Bytes each build cache the service fills (the judge's, /run_code's) may "
        "hold: checked every minute, least recently used builds out first "
        "(perfgym.toolchains.cache_trim).",
    )
    build_cache_keep_s: float = Field(
        600.0,
        ge=0,
        description="A build used this recently is never trimmed (a run may be about to use it).",
    )
    max_job_output_bytes: int = Field(
        64 << 20,
        ge=1 << 16,
        description="Bytes of results one job may store: a raw run finishing past it keeps "
        "only the start of its output, and says so (perfgym.service.workers.output_budget).",
    )
    max_stored_output_bytes: int = Field(
        4 << 30,
        ge=1 << 20,
        description="Bytes of results all retained jobs may store: past it the oldest finished "
        "jobs are forgotten before their retention_s is up.",
    )
    head_timeout_s: float = Field(
        10.0,
        gt=0,
        le=3600,
        description="Seconds a connection may take to send a request's head (its request line "
        "and headers), from its opening or its last response; then it is closed "
        "(perfgym.service.server.head_timeout).",
    )
    exec_ceiling: Limits = Field(
        default_factory=lambda: Limits(
            wall_s=60.0,
            memory_mb=4096.0,
            max_processes=1024,
            stdout_bytes=8 << 20,
            stderr_bytes=8 << 20,
            file_size_bytes=1 << 30,
            disk_bytes=1 << 30,
            open_files=4096,
        ),  # fmt: skip
        description="The most a /v1/executions run may ask for, field by field (a run asking "
        "more is refused with 422). Its wall and CPU time are also held within the request's "
        "deadline: a run that outlived its job held a worker after its answer (red team "
        "helper-79 kept every worker for as long as it asked, up to a day).",
    )
    allow_network: bool = Field(
        False,
        description="Let /v1/executions requests ask for limits.network=true (the run then "
        "shares the host's network, loopback included). Off: such a request is refused with "
        "422. Only for a service whose every client is trusted.",
    )
    suites: list[str] = Field(
        default_factory=lambda: list(BUILTINS),
        description="Suites requests may name (built-in names or paths); inline tasks always work.",
    )
    judge: JudgeConfig = Field(
        default_factory=JudgeConfig, description="How every candidate is judged."
    )

    @field_validator("state_dir", "store")
    @classmethod
    def _absolute(cls, v: str | None) -> str | None:
        # Taken against the folder the service starts in: a relative --state-dir must not mean
        # another folder once a worker or a build cache resolves it elsewhere.
        return None if v is None else os.path.abspath(os.path.expanduser(v))

    def store_path(self) -> str:
        return self.store or f"{self.state_dir}/store.sqlite"

    def check_bind(self) -> None:
        """It executes code: refuse to listen beyond this machine without a token."""
        if not is_loopback(self.host) and not self.token:
            raise ConfigError(
                f"refusing to bind {self.host} without a bearer token: the service runs "
                "submitted code. Pass --token (or PERFGYM_TOKEN), or bind 127.0.0.1"
            )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
