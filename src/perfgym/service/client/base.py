"""`ClientCore`: what the sync and async clients do, as exchanges that leave the I/O to them.

Each method here is a generator that yields the next step, `Send` (an HTTP request) or `Pause`
(a retry back-off), is sent back the reply (a response, or the transport error that stood for
one) and returns the result. `ServiceClient` and `AsyncServiceClient` drive the same
generators with blocking or awaited I/O, so retries, error mapping, job following and request
bodies exist once.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeAlias, TypedDict, TypeVar, Unpack

import httpx

from perfgym.judge.candidate import Candidate, Progress
from perfgym.judge.verdict import Verdict
from perfgym.sandbox.execution import Execution
from perfgym.sandbox.run_request import RunRequest
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
from perfgym.service.status import JobState

#: How long one long-poll of a job waits on the service before asking again.
POLL_S = 20.0

T = TypeVar("T")
#: The transport a shell sends through: `httpx.BaseTransport` or `httpx.AsyncBaseTransport`.
TransportT = TypeVar("TransportT", httpx.BaseTransport, httpx.AsyncBaseTransport)


@dataclass(frozen=True)
class Send:
    """Send this request; the reply is its response, or the `httpx.TransportError` it raised."""

    method: str
    path: str
    params: dict[str, Any] | None = None
    json: Any = None


@dataclass(frozen=True)
class Pause:
    """Sleep this long before the next step (the reply is None)."""

    seconds: float


Step: TypeAlias = Send | Pause
Reply: TypeAlias = httpx.Response | httpx.TransportError | None
Exchange: TypeAlias = Generator[Step, Reply, T]


class ClientOptions(TypedDict, total=False):
    """What both clients are opened with besides the URL and the transport."""

    token: str | None
    retry_for_s: float
    deadline_s: float | None


class Stepper(Generic[T]):
    """One exchange as a shell does it: iterate for its steps and set `reply` after each `Send`;
    once the iteration ends, `result` is what the exchange returned."""

    def __init__(self, exchange: Exchange[T]) -> None:
        self._exchange = exchange
        self.reply: Reply = None
        self.result: T

    def __iter__(self) -> Stepper[T]:
        return self

    def __next__(self) -> Step:
        reply, self.reply = self.reply, None
        try:
            return self._exchange.send(reply)
        except StopIteration as done:
            self.result = done.value
            raise StopIteration from None


def event_of(line: str) -> dict[str, Any] | None:
    """One line of a job's NDJSON event stream (None for a blank keep-alive line)."""
    return json.loads(line) if line.strip() else None


class ClientCore(Generic[TransportT]):
    """Talks to `perfgym serve`.

    Every submission carries a job id chosen here, so a retry after a dropped connection, a
    429 or a restarting service returns the same job instead of running it twice.
    retry_for_s: how long to keep retrying an unreachable or busy service before giving up.
    """

    def __init__(
        self, url: str, *, transport: TransportT | None = None, **options: Unpack[ClientOptions]
    ) -> None:
        """options: token, retry_for_s (default 300 s), deadline_s (the service's default)."""
        token = options.get("token")
        self.url = url.rstrip("/")
        self.retry_for_s = options.get("retry_for_s", 300.0)
        self.deadline_s = options.get("deadline_s")
        self.retried = 0
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.timeout = httpx.Timeout(POLL_S + 30.0, connect=10.0)
        self._open(transport)

    def _open(self, transport: TransportT | None) -> None:
        """The shell's HTTP connection pool; the core alone opens none."""

    # -- plumbing ---------------------------------------------------------------------------------
    def _call(
        self, method: str, path: str, *, params: dict[str, Any] | None = None, json: Any = None
    ) -> Exchange[httpx.Response]:
        """One request, retried while the service is unreachable or busy (up to retry_for_s);
        a refusal or failure (4xx/5xx other than the retried ones) is a `ServiceError`."""
        end = time.monotonic() + self.retry_for_s
        attempt = 0
        while True:
            reply = yield Send(method, path, params, json)
            r: httpx.Response | None = None
            error: httpx.TransportError | None = None
            if isinstance(reply, httpx.Response):
                r = reply
                if r.status_code not in RETRY_STATUSES:
                    if r.status_code >= 400:
                        raise error_of(r)
                    return r
            else:
                error = reply
                if time.monotonic() > end:
                    raise _unreachable(self.url, error)
            delay = retry_delay(r, attempt)
            if time.monotonic() + delay > end:
                if r is None:
                    raise _unreachable(self.url, error)
                raise ServiceUnavailable(f"{self.url}: still {r.status_code} after retrying")
            self.retried += 1
            attempt += 1
            yield Pause(delay)

    def _follow(self, view: JobView, progress: Progress | None = None) -> Exchange[JobView]:
        """Long-poll the job until it completes, telling `progress` where it stands."""
        while view.state != JobState.COMPLETE:
            if progress is not None:
                progress(view.n_done, view.n_items)
            r = yield from self._call("GET", f"/v1/jobs/{view.job_id}", params={"wait_s": POLL_S})
            view = JobView.model_validate_json(r.content)
        if progress is not None:
            progress(view.n_done, view.n_items)
        return view

    # -- the judge interface ----------------------------------------------------------------------
    def _judge_many(
        self,
        candidates: Sequence[Candidate],
        progress: Progress | None,
        reward: RewardSpec | None,
        columns: dict[str, list[Any]] | None,
    ) -> Exchange[list[Verdict]]:
        if not candidates:
            return []
        request = judge_request(candidates, job_id=uuid.uuid4().hex, reward=reward,
                                columns=columns, deadline_s=self.deadline_s)  # fmt: skip
        view = yield from self._judge_batch(request, progress)
        return verdicts_of(view, candidates)

    def _submit(self, request: JudgeRequest) -> Exchange[JobView]:
        if request.job_id is None:
            request = request.model_copy(update={"job_id": uuid.uuid4().hex})
        body = request.model_copy(update={"wait": False}).model_dump(mode="json")
        r = yield from self._call("POST", "/v1/judge", json=body)
        return JobView.model_validate_json(r.content)

    def _judge_batch(self, request: JudgeRequest, progress: Progress | None) -> Exchange[JobView]:
        view = yield from self._submit(request)
        return (yield from self._follow(view, progress))

    def _job(self, job_id: str, wait_s: float) -> Exchange[JobView]:
        r = yield from self._call("GET", f"/v1/jobs/{job_id}", params={"wait_s": wait_s})
        return JobView.model_validate_json(r.content)

    def _wait(self, job_id: str, progress: Progress | None) -> Exchange[JobView]:
        view = yield from self._job(job_id, 0.0)
        return (yield from self._follow(view, progress))

    # -- raw runs, health -------------------------------------------------------------------------
    def _run(self, request: RunRequest, pin: bool) -> Exchange[Execution]:
        # This host's core and hidden paths mean nothing to the service (it pins and hides its
        # own): a local core asks for a pinned run there.
        pin = pin or request.cpu is not None
        request = request.model_copy(update={"cpu": None, "hide": []})
        body = ExecRequest(job_id=uuid.uuid4().hex, requests=[request], pin=pin,
                           deadline_s=request.limits.wall_s * 3 + 60.0,
                           wait=False).model_dump(mode="json")  # fmt: skip
        r = yield from self._call("POST", "/v1/executions", json=body)
        view = yield from self._follow(JobView.model_validate_json(r.content))
        return execution_of(view, request.limits)

    def _health(self) -> Exchange[Health]:
        """Asked once, not retried: a degraded service answers 503 with its health."""
        reply = yield Send("GET", "/v1/health")
        if not isinstance(reply, httpx.Response):
            assert reply is not None
            raise reply
        return Health.model_validate(reply.json())

    def _metrics(self) -> Exchange[Metrics]:
        r = yield from self._call("GET", "/v1/metrics")
        return Metrics.model_validate(r.json())

    def _config(self) -> Exchange[dict[str, Any]]:
        r = yield from self._call("GET", "/v1/config")
        return dict(r.json()["judge"])


def _unreachable(url: str, error: httpx.TransportError | None) -> ServiceUnavailable:
    exc = ServiceUnavailable(f"{url}: {type(error).__name__}: {error}")
    exc.__cause__ = error
    return exc
