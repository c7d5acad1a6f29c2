"""`AsyncServiceClient`: the asyncio twin of `ServiceClient` (same methods, awaited)."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx

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
from perfgym.service.models import ExecRequest, JobView, JudgeRequest, Metrics, RewardSpec

_POLL_S = 20.0


class AsyncServiceClient:
    """For trainers that score rollouts inside an event loop; retries as `ServiceClient` does."""

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        retry_for_s: float = 300.0,
        deadline_s: float | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.url = url.rstrip("/")
        self.retry_for_s = retry_for_s
        self.deadline_s = deadline_s
        self.retried = 0
        self._http = httpx.AsyncClient(base_url=self.url, headers=headers, transport=transport,
                                       timeout=httpx.Timeout(_POLL_S + 30.0, connect=10.0))  # fmt: skip

    async def _request(self, method: str, path: str, **kw: Any) -> httpx.Response:
        end = time.monotonic() + self.retry_for_s
        attempt = 0
        while True:
            r: httpx.Response | None = None
            try:
                r = await self._http.request(method, path, **kw)
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
            await asyncio.sleep(delay)

    async def _follow(self, view: JobView, progress: Progress | None = None) -> JobView:
        while view.state != "complete":
            if progress is not None:
                progress(view.n_done, view.n_items)
            r = await self._request("GET", f"/v1/jobs/{view.job_id}", params={"wait_s": _POLL_S})
            view = JobView.model_validate_json(r.content)
        if progress is not None:
            progress(view.n_done, view.n_items)
        return view

    async def judge_many(
        self,
        candidates: Sequence[Candidate],
        progress: Progress | None = None,
        *,
        reward: RewardSpec | None = None,
        columns: dict[str, list[Any]] | None = None,
    ) -> list[Verdict]:
        if not candidates:
            return []
        request = judge_request(candidates, job_id=uuid.uuid4().hex, reward=reward,
                                columns=columns, deadline_s=self.deadline_s)  # fmt: skip
        return verdicts_of(await self.judge_batch(request, progress), candidates)

    async def judge_batch(self, request: JudgeRequest, progress: Progress | None = None) -> JobView:
        if request.job_id is None:
            request = request.model_copy(update={"job_id": uuid.uuid4().hex})
        body = request.model_copy(update={"wait": False}).model_dump(mode="json")
        r = await self._request("POST", "/v1/judge", json=body)
        return await self._follow(JobView.model_validate_json(r.content), progress)

    async def job(self, job_id: str, wait_s: float = 0.0) -> JobView:
        r = await self._request("GET", f"/v1/jobs/{job_id}", params={"wait_s": wait_s})
        return JobView.model_validate_json(r.content)

    async def events(self, job_id: str) -> AsyncIterator[dict[str, Any]]:
        async with self._http.stream("GET", f"/v1/jobs/{job_id}/events", timeout=None) as r:
            if r.status_code >= 400:
                await r.aread()
                raise error_of(r)
            async for line in r.aiter_lines():
                if line.strip():
                    yield json.loads(line)

    async def run(self, request: RunRequest, *, pin: bool = False) -> Execution:
        body = ExecRequest(job_id=uuid.uuid4().hex, requests=[request], pin=pin,
                           deadline_s=request.limits.wall_s * 3 + 60.0,
                           wait=False).model_dump(mode="json")  # fmt: skip
        r = await self._request("POST", "/v1/executions", json=body)
        return execution_of(
            await self._follow(JobView.model_validate_json(r.content)), request.limits
        )

    async def metrics(self) -> Metrics:
        return Metrics.model_validate((await self._request("GET", "/v1/metrics")).json())

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncServiceClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
