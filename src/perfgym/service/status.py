"""The service's outcome words: an item's status and a job's state, as the wire carries them."""

from __future__ import annotations

from enum import StrEnum


class ItemStatus(StrEnum):
    """One item of a job: judged (`ok`), failed by the infrastructure, past its deadline, or
    not answered yet."""

    OK = "ok"
    INFRA_ERROR = "infra_error"
    DEADLINE = "deadline"
    PENDING = "pending"


class JobState(StrEnum):
    """A job: waiting for a worker, being answered, or every item answered."""

    QUEUED = "queued"
    RUNNING = "running"
    COMPLETE = "complete"
