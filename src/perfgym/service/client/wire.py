"""What both HTTP clients share: building requests from candidates, reading answers, retry rules."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Sequence
from typing import Any

import httpx

from perfgym.errors import ConfigError, PerfgymError
from perfgym.judge.candidate import Candidate
from perfgym.judge.verdict import Stage, Verdict
from perfgym.sandbox.execution import Execution, Status
from perfgym.sandbox.limits import Limits
from perfgym.service.models import ItemResult, JobView, JudgeItem, JudgeRequest, RewardSpec
from perfgym.service.status import ItemStatus
from perfgym.store.keys import task_digest

#: Statuses worth retrying: the request was not (or not yet) taken; the job id keeps it idempotent.
RETRY_STATUSES = frozenset({429, 502, 503, 504})


class ServiceError(PerfgymError):
    """The service refused a request (4xx) or failed it (5xx); `status` is the HTTP status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"service answered {status}: {message}")
        self.status = status
        self.message = message


class ServiceUnavailable(PerfgymError):
    """The service could not be reached, or stayed busy, for the whole retry period."""


def judge_request(
    candidates: Sequence[Candidate],
    *,
    job_id: str,
    reward: RewardSpec | None = None,
    columns: dict[str, list[Any]] | None = None,
    deadline_s: float | None = None,
    wait: bool = False,
) -> JudgeRequest:
    """Candidates as one request: each distinct task sent once, inline."""
    tasks: dict[str, Any] = {}
    digests: dict[str, str] = {}
    items = []
    for c in candidates:
        d = task_digest(c.task)
        seen = digests.setdefault(c.task.id, d)
        if seen != d:
            raise ConfigError(f"two different tasks share the id {c.task.id!r} in one batch")
        tasks.setdefault(c.task.id, c.task)
        items.append(JudgeItem(task_id=c.task.id, completion=c.completion, source=c.source,
                               model=c.model, sample=c.sample))  # fmt: skip
    return JudgeRequest(job_id=job_id, tasks=list(tasks.values()), items=items, reward=reward,
                        columns=columns or {}, deadline_s=deadline_s, wait=wait)  # fmt: skip


def unanswered_verdict(c: Candidate, item: ItemResult) -> Verdict:
    """No verdict came back (deadline, or the infrastructure failed every try): say so as an
    infrastructure error, never as a wrong answer."""
    return Verdict(task_id=c.task.id, model=c.model, sample=c.sample, stage=Stage.NR,
                   detail="DEADLINE" if item.status == ItemStatus.DEADLINE else "SANDBOX_ERROR",
                   reason=item.reason or item.status, infra_error=True,
                   language=c.task.language.value)  # fmt: skip


def verdicts_of(view: JobView, candidates: Sequence[Candidate]) -> list[Verdict]:
    if len(view.items) != len(candidates):
        raise ServiceError(500, f"job {view.job_id} has {len(view.items)} items, expected "
                                f"{len(candidates)}")  # fmt: skip
    out = []
    for c, it in zip(candidates, sorted(view.items, key=lambda i: i.index), strict=True):
        v = it.verdict if it.verdict is not None else unanswered_verdict(c, it)
        out.append(v.model_copy(update={"suite": c.suite or v.suite}))  # the service knows no suite
    return out


def execution_of(view: JobView, limits: Limits) -> Execution:
    (item,) = view.items
    if item.execution is not None:
        return item.execution
    return Execution(status=Status.SANDBOX_ERROR, limits=limits, backend="service",
                     reason=f"no execution from the service ({item.status}): {item.reason}")  # fmt: skip


def error_of(r: httpx.Response) -> ServiceError:
    try:
        message = str(r.json().get("error", r.text))
    except ValueError:
        message = r.text[:500]
    return ServiceError(r.status_code, message)


def retry_delay(r: httpx.Response | None, attempt: int) -> float:
    """Retry-After when the service gave one, else exponential backoff (0.1 s .. 5 s)."""
    if r is not None:
        value = r.headers.get("retry-after")
        if value:
            try:
                return max(0.0, float(value))
            except ValueError:
                when = email.utils.parsedate_to_datetime(value)
                return max(0.0, when.timestamp() - time.time())
    return float(min(5.0, 0.1 * 2**attempt))
