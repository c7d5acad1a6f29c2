"""`ServiceClient`: the judge over HTTP (sync), with the same `judge_many` as the local judge."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import httpx

from perfgym.judge.config import JudgeConfig
from perfgym.judge.judge import Candidate, Progress
from perfgym.judge.verdict import Verdict
from perfgym.sandbox.execution import Execution
from perfgym.sandbox.pool import RunRequest
from perfgym.service.client.wire import (
    RETRY_STATUSES,
    ServiceUnavailable,
    error_of,
    execution_of,
    judge_request,
    retry_delay,
    verdicts_of,
)
from perfgym.service.models import ExecRequest, Health, JobView, JudgeRequest, Metrics, RewardSpec
from perfgym.tasks.task import Task

_POLL_S = 20.0


class ServiceClient:
    """Talks to `perfgym serve`.

    Every submission carries a job id chosen here, so a retry after a dropped connection, a
    429 or a restarting service returns the same job instead of running it twice.
    retry_for_s: how long to keep retrying an unreachable or busy service before giving up.
    """

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        retry_for_s: float = 300.0,
        deadline_s: float | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.url = url.rstrip("/")
        self.retry_for_s = retry_for_s
        self.deadline_s = deadline_s
        self.retried = 0
        self._http = httpx.Client(base_url=self.url, headers=headers, transport=transport,
                                  timeout=httpx.Timeout(_POLL_S + 30.0, connect=10.0))  # fmt: skip

    # -- plumbing ---------------------------------------------------------------------------------
    def _request(self, method: str, path: str, **kw: Any) -> httpx.Response:
        end = time.monotonic() + self.retry_for_s
        attempt = 0
        while True:
            r: httpx.Response | None = None
            try:
                r = self._http.request(method, path, **kw)
                if r.status_code not in RETRY_STATUSES:
                    if r.status_code >= 400:
                        raise error_of(r)
                    return r
            except httpx.TransportError as exc:
                if time.monotonic() > end:
                    raise ServiceUnavailable(f"{self.url}: {type(exc).__name__}: {exc}") from exc
            delay = retry_delay(r, attempt)
            if time.monotonic() + delay > end:
                assert r is not None
                raise ServiceUnavailable(f"{self.url}: still {r.status_code} after retrying")
            self.retried += 1
            attempt += 1
            time.sleep(delay)

    def _follow(self, view: JobView, progress: Progress | None = None) -> JobView:
        while view.state != "complete":
            if progress is not None:
                progress(view.n_done, view.n_items)
            r = self._request("GET", f"/v1/jobs/{view.job_id}", params={"wait_s": _POLL_S})
            view = JobView.model_validate_json(r.content)
        if progress is not None:
            progress(view.n_done, view.n_items)
        return view

    # -- the judge interface ----------------------------------------------------------------------
    def judge_many(
        self,
        candidates: Sequence[Candidate],
        progress: Progress | None = None,
        *,
        reward: RewardSpec | None = None,
        columns: dict[str, list[Any]] | None = None,
    ) -> list[Verdict]:
        """One verdict per candidate, in order (as `Judge.judge_many`)."""
        if not candidates:
            return []
        view = self.judge_batch(judge_request(candidates, job_id=uuid.uuid4().hex, reward=reward,
                                              columns=columns, deadline_s=self.deadline_s),
                                progress)  # fmt: skip
        return verdicts_of(view, candidates)

    def judge(self, task: Task, completion: str | None = None, *, source: str | None = None,
              model: str = "", sample: int = 0) -> Verdict:  # fmt: skip
        return self.judge_many([Candidate(task, completion, source, model, sample)])[0]

    def judge_batch(self, request: JudgeRequest, progress: Progress | None = None) -> JobView:
        """Submit (or resubmit: same job id, same job) and follow the job to completion."""
        if request.job_id is None:
            request = request.model_copy(update={"job_id": uuid.uuid4().hex})
        body = request.model_copy(update={"wait": False}).model_dump(mode="json")
        r = self._request("POST", "/v1/judge", json=body)
        return self._follow(JobView.model_validate_json(r.content), progress)

    def submit(self, request: JudgeRequest) -> JobView:
        """Submit without waiting (202); follow with `job`, `wait` or `events`."""
        if request.job_id is None:
            request = request.model_copy(update={"job_id": uuid.uuid4().hex})
        body = request.model_copy(update={"wait": False}).model_dump(mode="json")
        return JobView.model_validate_json(self._request("POST", "/v1/judge", json=body).content)

    def job(self, job_id: str, wait_s: float = 0.0) -> JobView:
        r = self._request("GET", f"/v1/jobs/{job_id}", params={"wait_s": wait_s})
        return JobView.model_validate_json(r.content)

    def wait(self, job_id: str, progress: Progress | None = None) -> JobView:
        return self._follow(self.job(job_id), progress)

    def events(self, job_id: str) -> Iterator[dict[str, Any]]:
        """The job's NDJSON progress stream, line by line."""
        import json

        with self._http.stream("GET", f"/v1/jobs/{job_id}/events", timeout=None) as r:
            if r.status_code >= 400:
                r.read()
                raise error_of(r)
            for line in r.iter_lines():
                if line.strip():
                    yield json.loads(line)

    # -- raw runs, health -------------------------------------------------------------------------
    def run(self, request: RunRequest, *, pin: bool = False) -> Execution:
        deadline = request.limits.wall_s * 3 + 60.0
        body = ExecRequest(job_id=uuid.uuid4().hex, requests=[request], pin=pin,
                           deadline_s=deadline, wait=False).model_dump(mode="json")  # fmt: skip
        r = self._request("POST", "/v1/executions", json=body)
        return execution_of(self._follow(JobView.model_validate_json(r.content)), request.limits)

    def health(self) -> Health:
        return Health.model_validate(self._http.get("/v1/health").json())

    def metrics(self) -> Metrics:
        return Metrics.model_validate(self._request("GET", "/v1/metrics").json())

    @property
    def config(self) -> JudgeConfig:
        """The judge configuration the service judges with (what its verdicts are keyed by)."""
        return JudgeConfig.model_validate(self._request("GET", "/v1/config").json()["judge"])

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ServiceClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
