"""The service's wire types: requests, per-item results, job views, health and metrics."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from perfgym.judge.verdict import Verdict
from perfgym.rewards import RewardOutput
from perfgym.sandbox.execution import Execution
from perfgym.sandbox.run_request import RunRequest
from perfgym.service.status import ItemStatus, JobState
from perfgym.tasks.task import Task

JOB_ID_PATTERN = r"^[A-Za-z0-9._:\-]{1,128}$"


class RewardSpec(BaseModel):
    """A registered reward by name and parameters (see docs/rewards.md)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    params: dict[str, Any] = Field(default_factory=dict)


class JudgeItem(BaseModel):
    """One candidate: a task by id (in `suite`, or among the request's inline `tasks`)."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    suite: str | None = Field(None, description="A suite the service serves; None: inline task.")
    completion: str | None = Field(None, description="Raw model text (code is extracted).")
    source: str | None = Field(None, description="A ready program.")
    model: str = ""
    sample: int = 0

    @model_validator(mode="after")
    def _one_text(self) -> JudgeItem:
        if (self.completion is None) == (self.source is None):
            raise ValueError("give exactly one of 'completion' or 'source'")
        return self


class _Submission(BaseModel):
    model_config = ConfigDict(extra="forbid")

    job_id: str | None = Field(
        None,
        pattern=JOB_ID_PATTERN,
        description="Client-chosen id: resubmitting it returns the same job, never a second run.",
    )
    deadline_s: float | None = Field(
        None, gt=0, description="Seconds until unfinished items are answered 'deadline'."
    )
    wait: bool = Field(True, description="Answer when done (or at the deadline); else at once.")


class JudgeRequest(_Submission):
    """A batch of candidates to judge, and optionally a reward over their verdicts."""

    tasks: list[Task] = Field(default_factory=list, description="Inline tasks items refer to.")
    items: list[JudgeItem] = Field(min_length=1)
    reward: RewardSpec | None = None
    columns: dict[str, list[Any]] = Field(
        default_factory=dict, description="Reward columns, one entry per item."
    )


class ExecRequest(_Submission):
    """Raw sandbox runs."""

    requests: list[RunRequest] = Field(min_length=1)
    pin: bool = Field(False, description="Timing mode: pin each run to a core of its own.")

    @model_validator(mode="after")
    def _no_host_fields(self) -> ExecRequest:
        """`cpu` and `hide` name this host's cores and paths: the service picks them, not a
        client (`pin` asks for a core of its own)."""
        for i, r in enumerate(self.requests):
            if r.cpu is not None or r.hide:
                raise ValueError(
                    f"requests[{i}]: 'cpu' and 'hide' are chosen by the service; use 'pin'"
                )
        return self


class ItemResult(BaseModel):
    """Exactly one per submitted item."""

    model_config = ConfigDict(extra="forbid")

    index: int
    status: ItemStatus
    verdict: Verdict | None = None
    execution: Execution | None = None
    reward: RewardOutput | None = None
    attempts: int = 0
    latency_s: float | None = Field(None, description="Submission to result, seconds.")
    reason: str = ""


class JobView(BaseModel):
    """A job's state and every result so far."""

    model_config = ConfigDict(extra="forbid")

    job_id: str
    kind: Literal["judge", "exec"]
    state: JobState
    n_items: int
    n_done: int
    retried: int = Field(0, description="Item retries after infrastructure failures.")
    created: float
    deadline: float
    reward: RewardSpec | None = None
    reward_error: str = ""
    items: list[ItemResult] = Field(default_factory=list)


class Health(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: Literal["ok", "degraded"]
    workers_alive: int
    workers_wanted: int
    worker_restarts: int = Field(
        0, description="Worker processes replaced since the service started (crashed or hung)."
    )
    python_worker_restarts: int = Field(
        0,
        description="Warm Python workers started again inside the worker processes (after a "
        "failed cleanup or a crash), summed over every worker process so far.",
    )
    failed_cleanups: int = Field(
        0,
        description="Calls whose leftovers a warm Python worker could not remove (each one "
        "the candidate's failure and a restart of that worker).",
    )
    version: str
    machine: str


class Metrics(BaseModel):
    """Queue and reliability figures since the service started (latencies: recent window)."""

    model_config = ConfigDict(extra="forbid")

    queue_depth: int
    in_flight: int
    capacity: int
    completed: int
    infra_failed: int
    deadline_missed: int
    retried: int
    rejected_full: int
    failure_rate: float
    retry_rate: float
    latency_s: dict[str, float | None]
    throughput_per_s: float
    workers_alive: int
    worker_restarts: int
    uptime_s: float
    machine: str
    calibration: dict[str, Any]
