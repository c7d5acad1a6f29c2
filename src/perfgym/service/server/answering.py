"""Submitting a job to the queue and answering with its view: at once, or once it completes."""

from __future__ import annotations

import time
import uuid
from typing import Any

from fastapi import Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response

from perfgym.service.models import JobView
from perfgym.service.server.errors import error
from perfgym.service.server.intake import request_digest
from perfgym.service.server.runtime import ServiceRuntime
from perfgym.service.status import JobState
from perfgym.service.workers.job_queue import NewItem

#: Slack past a job's deadline before a waiting request answers with what it has.
ANSWER_GRACE_S = 2.0


def runtime_of(request: Request) -> ServiceRuntime:
    """The route dependency: the runtime `create_app` put in the app's state."""
    runtime: ServiceRuntime = request.app.state.runtime
    return runtime


async def submit(runtime: ServiceRuntime, kind: str, body: dict[str, Any], job_id: str | None,
                 deadline_s: float | None, spec: dict[str, Any], items: list[NewItem],
                 tasks: dict[str, str]) -> str:  # fmt: skip
    """Queue the job (or find it again: same id, same request) and return its id."""
    config = runtime.config
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


def view_response(view: JobView) -> JSONResponse:
    """200 for a complete job, 202 for one still running."""
    return JSONResponse(view.model_dump(mode="json"),
                        status_code=200 if view.state == JobState.COMPLETE else 202)  # fmt: skip


async def finished_response(runtime: ServiceRuntime, job_id: str) -> Response | None:
    """A finished job's answer as kept by the runtime (rendered once, in the thread pool);
    None when the job is unknown or still running."""
    body = await run_in_threadpool(runtime.finished_body, job_id)
    return None if body is None else Response(body, media_type="application/json")


async def answer(runtime: ServiceRuntime, job_id: str, wait: bool, request: Request) -> Response:
    done = await finished_response(runtime, job_id)
    if done is not None:
        return done
    view = await run_in_threadpool(runtime.view, job_id)
    if view is None:
        return error(404, f"unknown job {job_id!r} (finished jobs are kept "
                     f"{runtime.config.retention_s:g} s)")  # fmt: skip
    if wait and view.state != JobState.COMPLETE:
        view = await wait_for(runtime, job_id, view.deadline + ANSWER_GRACE_S, request) or view
    if view.state == JobState.COMPLETE:
        return await finished_response(runtime, job_id) or view_response(view)
    return view_response(view)


async def wait_for(runtime: ServiceRuntime, job_id: str, until: float,
                   request: Request | None) -> JobView | None:  # fmt: skip
    """Until the job completes, `until` passes, or the client hangs up: always returns."""
    while True:
        view = await run_in_threadpool(runtime.view, job_id)
        if view is None or view.state == JobState.COMPLETE:
            return view
        left = until - time.time()
        if left <= 0:
            return view
        if request is not None and await request.is_disconnected():
            return view  # the job goes on; its id fetches the result later
        await runtime.watch.wait(job_id, min(left, 1.0))
