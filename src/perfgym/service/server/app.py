"""`create_app(config)`: the FastAPI application behind `perfgym serve`."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.exceptions import HTTPException

from perfgym import __version__
from perfgym.errors import ConfigError
from perfgym.service.config import ServiceConfig
from perfgym.service.models import ExecRequest, Health, JobView, JudgeRequest, Metrics
from perfgym.service.server.guards import BodyLimit, bearer_guard
from perfgym.service.server.intake import UnknownTask, Unsupported, request_digest
from perfgym.service.server.job_queue import JobConflict, NewItem, QueueFull
from perfgym.service.server.runtime import ServiceRuntime

#: Slack past a job's deadline before a waiting request answers with what it has.
_ANSWER_GRACE_S = 2.0
_MAX_POLL_S = 60.0


def _error(status: int, message: str, **extra: Any) -> JSONResponse:
    headers = extra.pop("headers", None)
    return JSONResponse({"error": message, **extra}, status_code=status, headers=headers)


def _validation_message(exc: RequestValidationError) -> tuple[int, str, list[dict[str, Any]]]:
    errors: list[dict[str, Any]] = [
        {"loc": [str(x) for x in e.get("loc", ())], "msg": str(e.get("msg", "")),
         "type": str(e.get("type", ""))}
        for e in exc.errors()
    ][:20]  # fmt: skip
    if any(e["type"] == "json_invalid" for e in errors):
        return 400, "malformed JSON: " + "; ".join(str(e["msg"]) for e in errors), errors
    text = "; ".join(f"{'.'.join(e['loc'][1:]) or 'body'}: {e['msg']}" for e in errors[:5])
    return 422, f"invalid request: {text}", errors


def create_app(config: ServiceConfig) -> FastAPI:
    """The app; its lifespan starts the queue dispatcher and worker processes."""
    runtime = ServiceRuntime(config)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        runtime.watch.bind(asyncio.get_running_loop())
        await run_in_threadpool(runtime.start)
        try:
            yield
        finally:
            await run_in_threadpool(runtime.stop)

    app = FastAPI(
        title="perfgym service",
        version=__version__,
        description="Judge candidates (extract → build → run → check → measure) and score them "
        "with perfgym rewards; raw sandbox runs. See docs/service.md.",
        lifespan=lifespan,
        dependencies=[Depends(bearer_guard(config.token))],
    )
    app.state.runtime = runtime
    app.add_middleware(BodyLimit, max_bytes=config.max_body_bytes)

    # -- errors: one JSON shape, {"error": "..."} ------------------------------------------------
    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        status, message, errors = _validation_message(exc)
        return _error(status, message, detail=errors)

    @app.exception_handler(HTTPException)
    async def _http(_: Request, exc: HTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail), headers=exc.headers)

    @app.exception_handler(UnknownTask)
    async def _unknown(_: Request, exc: UnknownTask) -> JSONResponse:
        return _error(404, str(exc))

    @app.exception_handler(Unsupported)
    async def _unsupported(_: Request, exc: Unsupported) -> JSONResponse:
        return _error(422, str(exc))

    @app.exception_handler(ConfigError)
    async def _config(_: Request, exc: ConfigError) -> JSONResponse:
        return _error(422, str(exc))

    @app.exception_handler(JobConflict)
    async def _conflict(_: Request, exc: JobConflict) -> JSONResponse:
        return _error(409, str(exc))

    @app.exception_handler(QueueFull)
    async def _full(_: Request, exc: QueueFull) -> JSONResponse:
        runtime.stats.add("rejected_full")
        return _error(429, str(exc), retry_after_s=exc.retry_after_s,
                      headers={"Retry-After": str(exc.retry_after_s)})  # fmt: skip

    # -- submission -------------------------------------------------------------------------------
    async def _submit(kind: str, body: dict[str, Any], job_id: str | None,
                      deadline_s: float | None, spec: dict[str, Any], items: list[NewItem],
                      tasks: dict[str, str]) -> str:  # fmt: skip
        job_id = job_id or uuid.uuid4().hex
        wanted = deadline_s if deadline_s is not None else config.default_deadline_s
        deadline = time.time() + min(wanted, config.max_deadline_s)
        created = await run_in_threadpool(
            runtime.queue.submit, job_id, kind, request_digest(kind, body), deadline, spec,
            items, tasks, retry_after_s=runtime.retry_after_s(),
        )  # fmt: skip
        if created:
            runtime.dispatcher.wake()
            runtime.watch.notify(job_id)
            # Items answered from the store may already complete the job.
            if all(i.result is not None for i in items):
                runtime.dispatcher.finish_soon(job_id)
        return job_id

    async def _answer(job_id: str, wait: bool, request: Request) -> JSONResponse:
        view = await run_in_threadpool(runtime.view, job_id)
        if view is None:
            return _error(404, f"unknown job {job_id!r} (finished jobs are kept "
                          f"{config.retention_s:g} s)")  # fmt: skip
        if wait and view.state != "complete":
            view = await _wait(job_id, view.deadline + _ANSWER_GRACE_S, request) or view
        return JSONResponse(view.model_dump(mode="json"),
                            status_code=200 if view.state == "complete" else 202)  # fmt: skip

    async def _wait(job_id: str, until: float, request: Request | None) -> JobView | None:
        """Until the job completes, `until` passes, or the client hangs up: always returns."""
        while True:
            view = await run_in_threadpool(runtime.view, job_id)
            if view is None or view.state == "complete":
                return view
            left = until - time.time()
            if left <= 0:
                return view
            if request is not None and await request.is_disconnected():
                return view  # the job goes on; its id fetches the result later
            await runtime.watch.wait(job_id, min(left, 1.0))

    @app.post("/v1/judge", response_model=JobView, status_code=200,
              responses={202: {"model": JobView}, 400: {}, 404: {}, 409: {}, 413: {}, 422: {},
                         429: {}})  # fmt: skip
    async def judge(req: JudgeRequest, request: Request) -> JSONResponse:
        """Judge a batch: per-item verdicts, and rewards when a reward is named.

        wait=true answers when every item has its result or at the deadline (unfinished items
        then say 'deadline'); wait=false answers 202 at once with the job id to poll or stream.
        """
        items, tasks = await run_in_threadpool(runtime.intake.judge_items, req)
        spec = {"reward": req.reward.model_dump(mode="json") if req.reward else None,
                "columns": req.columns}  # fmt: skip
        body = req.model_dump(mode="json")
        job_id = await _submit("judge", body, req.job_id, req.deadline_s, spec, items, tasks)
        return await _answer(job_id, req.wait, request)

    @app.post("/v1/executions", response_model=JobView,
              responses={202: {"model": JobView}, 400: {}, 409: {}, 413: {}, 422: {}, 429: {}})  # fmt: skip
    async def executions(req: ExecRequest, request: Request) -> JSONResponse:
        """Raw sandbox runs (no task, no judging): one Execution per request."""
        items = await run_in_threadpool(runtime.intake.exec_items, req)
        body = req.model_dump(mode="json")
        job_id = await _submit("exec", body, req.job_id, req.deadline_s, {}, items, {})
        return await _answer(job_id, req.wait, request)

    # -- jobs -------------------------------------------------------------------------------------
    @app.get("/v1/jobs/{job_id}", response_model=JobView, responses={202: {}, 404: {}})
    async def job(job_id: str, request: Request, wait_s: float = 0.0) -> JSONResponse:
        """A job's results so far; `wait_s` (≤ 60) long-polls until it completes."""
        view = await run_in_threadpool(runtime.view, job_id)
        if view is None:
            return _error(404, f"unknown job {job_id!r}")
        if wait_s > 0 and view.state != "complete":
            until = min(time.time() + min(wait_s, _MAX_POLL_S), view.deadline + _ANSWER_GRACE_S)
            view = await _wait(job_id, until, request) or view
        return JSONResponse(view.model_dump(mode="json"),
                            status_code=200 if view.state == "complete" else 202)  # fmt: skip

    @app.get("/v1/jobs/{job_id}/events", responses={404: {}})
    async def events(job_id: str, request: Request) -> Any:
        """Progress as NDJSON: one `item` line per result as it lands, then one `complete` line
        with the whole job (rewards included). Ends at completion or the deadline."""
        first = await run_in_threadpool(runtime.view, job_id)
        if first is None:
            return _error(404, f"unknown job {job_id!r}")

        async def lines() -> AsyncIterator[bytes]:
            sent: set[int] = set()
            until = first.deadline + _ANSWER_GRACE_S
            while True:
                view = await run_in_threadpool(runtime.view, job_id)
                if view is None:
                    return
                for it in view.items:
                    if it.status != "pending" and it.index not in sent:
                        sent.add(it.index)
                        line = {"event": "item", "n_done": view.n_done, "n_items": view.n_items,
                                "item": it.model_dump(mode="json", exclude={"reward"})}  # fmt: skip
                        yield (json.dumps(line) + "\n").encode()
                if view.state == "complete" or time.time() >= until:
                    yield (json.dumps({"event": "complete", "job": view.model_dump(mode="json")})
                           + "\n").encode()  # fmt: skip
                    return
                if await request.is_disconnected():
                    return
                await runtime.watch.wait(job_id, 1.0)

        return StreamingResponse(lines(), media_type="application/x-ndjson")

    # -- health and metrics -----------------------------------------------------------------------
    @app.get("/v1/health", response_model=Health)
    async def health() -> JSONResponse:
        alive = runtime.dispatcher.alive_workers()
        wanted = len(runtime.dispatcher.workers)
        pools = runtime.dispatcher.pool_counters()
        h = Health(status="ok" if alive == wanted else "degraded", workers_alive=alive,
                   workers_wanted=wanted, worker_restarts=runtime.stats.worker_restarts,
                   python_worker_restarts=pools["python_worker_restarts"],
                   failed_cleanups=pools["failed_cleanups"],
                   version=__version__, machine=runtime.machine)  # fmt: skip
        return JSONResponse(h.model_dump(mode="json"), status_code=200 if alive else 503)

    @app.get("/v1/metrics", response_model=Metrics)
    async def metrics() -> Metrics:
        counts = await run_in_threadpool(runtime.queue.counts)
        failure_rate, retry_rate = runtime.stats.rates()
        s = runtime.stats
        return Metrics(
            queue_depth=counts.get("queued", 0),
            in_flight=counts.get("running", 0),
            capacity=config.max_queue,
            completed=s.completed,
            infra_failed=s.infra_failed,
            deadline_missed=s.deadline_missed,
            retried=s.retried,
            rejected_full=s.rejected_full,
            failure_rate=failure_rate,
            retry_rate=retry_rate,
            latency_s=s.latency_percentiles(),
            throughput_per_s=s.throughput(),
            workers_alive=runtime.dispatcher.alive_workers(),
            worker_restarts=s.worker_restarts,
            uptime_s=time.time() - runtime.started,
            machine=runtime.machine,
            calibration={
                "epoch": config.epoch,
                "drift_probes": config.judge.drift is not None,
                "candidate_timings": dict(s.timings),
                "last_degraded_reason": s.last_degraded,
            },
        )

    @app.get("/v1/config")
    async def service_config() -> dict[str, Any]:
        """The judge configuration every verdict here is produced with (token withheld)."""
        return {"judge": config.judge.model_dump(mode="json"), "epoch": config.epoch,
                "machine": runtime.machine, "suites": config.suites, "version": __version__,
                "max_items": config.max_items, "max_body_bytes": config.max_body_bytes,
                "max_queue": config.max_queue}  # fmt: skip

    return app
