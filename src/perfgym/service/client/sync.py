"""`ServiceClient`: the judge over HTTP (sync), with the same `judge_many` as the local judge."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

import httpx

from perfgym.judge.candidate import Candidate, Progress
from perfgym.judge.config import JudgeConfig
from perfgym.judge.verdict import Verdict
from perfgym.sandbox.execution import Execution
from perfgym.sandbox.run_request import RunRequest
from perfgym.service.client.base import ClientCore, Exchange, Pause, Reply, Send, Stepper, event_of
from perfgym.service.client.wire import error_of
from perfgym.service.models import Health, JobView, JudgeRequest, Metrics, RewardSpec
from perfgym.tasks.task import Task

T = TypeVar("T")


class ServiceClient(ClientCore[httpx.BaseTransport]):
    """Talks to `perfgym serve` with blocking I/O; everything but the I/O is `ClientCore`'s."""

    _http: httpx.Client

    def _open(self, transport: httpx.BaseTransport | None) -> None:
        self._http = httpx.Client(base_url=self.url, headers=self.headers, transport=transport,
                                  timeout=self.timeout)  # fmt: skip

    def _drive(self, exchange: Exchange[T]) -> T:
        """Do the exchange's steps until it returns."""
        run = Stepper(exchange)
        for step in run:
            if isinstance(step, Pause):
                time.sleep(step.seconds)
            else:
                run.reply = self._send(step)
        return run.result

    def _send(self, step: Send) -> Reply:
        try:
            return self._http.request(step.method, step.path, params=step.params,
                                    json=step.json)  # fmt: skip
        except httpx.TransportError as exc:
            return exc

    # -- the judge interface ----------------------------------------------------------------------
    def judge_many(self, candidates: Sequence[Candidate], progress: Progress | None = None,
                   *, reward: RewardSpec | None = None,
                   columns: dict[str, list[Any]] | None = None) -> list[Verdict]:  # fmt: skip
        """One verdict per candidate, in order (as `Judge.judge_many`)."""
        return self._drive(self._judge_many(candidates, progress, reward, columns))

    def judge(self, task: Task, completion: str | None = None, *, source: str | None = None,
              model: str = "", sample: int = 0) -> Verdict:  # fmt: skip
        return self.judge_many([Candidate(task, completion, source, model, sample)])[0]

    def judge_batch(self, request: JudgeRequest, progress: Progress | None = None) -> JobView:
        """Submit (or resubmit: same job id, same job) and follow the job to completion."""
        return self._drive(self._judge_batch(request, progress))

    def submit(self, request: JudgeRequest) -> JobView:
        """Submit without waiting (202); follow with `job`, `wait` or `events`."""
        return self._drive(self._submit(request))

    def job(self, job_id: str, wait_s: float = 0.0) -> JobView:
        return self._drive(self._job(job_id, wait_s))

    def wait(self, job_id: str, progress: Progress | None = None) -> JobView:
        return self._drive(self._wait(job_id, progress))

    def events(self, job_id: str) -> Iterator[dict[str, Any]]:
        """The job's NDJSON progress stream, line by line."""
        with self._http.stream("GET", f"/v1/jobs/{job_id}/events", timeout=None) as r:
            if r.status_code >= 400:
                r.read()
                raise error_of(r)
            for line in r.iter_lines():
                if (event := event_of(line)) is not None:
                    yield event

    # -- raw runs, health -------------------------------------------------------------------------
    def run(self, request: RunRequest, *, pin: bool = False) -> Execution:
        return self._drive(self._run(request, pin))

    def health(self) -> Health:
        return self._drive(self._health())

    def metrics(self) -> Metrics:
        return self._drive(self._metrics())

    @property
    def config(self) -> JudgeConfig:
        """The judge configuration the service judges with (what its verdicts are keyed by)."""
        return JudgeConfig.model_validate(self._drive(self._config()))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ServiceClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
