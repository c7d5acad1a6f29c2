"""`AsyncServiceClient`: the asyncio twin of `ServiceClient` (same methods, awaited)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any, TypeVar

import httpx

from perfgym.judge.candidate import Candidate, Progress
from perfgym.judge.verdict import Verdict
from perfgym.sandbox.execution import Execution
from perfgym.sandbox.run_request import RunRequest
from perfgym.service.client.base import ClientCore, Exchange, Pause, Reply, Send, Stepper, event_of
from perfgym.service.client.wire import error_of
from perfgym.service.models import JobView, JudgeRequest, Metrics, RewardSpec

T = TypeVar("T")


class AsyncServiceClient(ClientCore[httpx.AsyncBaseTransport]):
    """For trainers that score rollouts inside an event loop; retries as `ServiceClient` does."""

    _http: httpx.AsyncClient

    def _open(self, transport: httpx.AsyncBaseTransport | None) -> None:
        self._http = httpx.AsyncClient(base_url=self.url, headers=self.headers,
                                       transport=transport, timeout=self.timeout)  # fmt: skip

    async def _drive(self, exchange: Exchange[T]) -> T:
        """Do the exchange's steps, awaiting each, until it returns."""
        run = Stepper(exchange)
        for step in run:
            if isinstance(step, Pause):
                await asyncio.sleep(step.seconds)
            else:
                run.reply = await self._send(step)
        return run.result

    async def _send(self, step: Send) -> Reply:
        try:
            return await self._http.request(step.method, step.path, params=step.params,
                                    json=step.json)  # fmt: skip
        except httpx.TransportError as exc:
            return exc

    async def judge_many(self, candidates: Sequence[Candidate], progress: Progress | None = None,
                         *, reward: RewardSpec | None = None,
                         columns: dict[str, list[Any]] | None = None) -> list[Verdict]:  # fmt: skip
        return await self._drive(self._judge_many(candidates, progress, reward, columns))

    async def judge_batch(self, request: JudgeRequest, progress: Progress | None = None) -> JobView:
        return await self._drive(self._judge_batch(request, progress))

    async def job(self, job_id: str, wait_s: float = 0.0) -> JobView:
        return await self._drive(self._job(job_id, wait_s))

    async def events(self, job_id: str) -> AsyncIterator[dict[str, Any]]:
        async with self._http.stream("GET", f"/v1/jobs/{job_id}/events", timeout=None) as r:
            if r.status_code >= 400:
                await r.aread()
                raise error_of(r)
            async for line in r.aiter_lines():
                if (event := event_of(line)) is not None:
                    yield event

    async def run(self, request: RunRequest, *, pin: bool = False) -> Execution:
        return await self._drive(self._run(request, pin))

    async def metrics(self) -> Metrics:
        return await self._drive(self._metrics())

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncServiceClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
