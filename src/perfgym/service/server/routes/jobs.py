"""GET /v1/jobs/{id} and its NDJSON /events: a job's results so far, polled or streamed."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response, StreamingResponse

from perfgym.service.models import JobView
from perfgym.service.server.answering import (
    ANSWER_GRACE_S,
    finished_response,
    runtime_of,
    view_response,
    wait_for,
)
from perfgym.service.server.errors import error
from perfgym.service.server.runtime import ServiceRuntime
from perfgym.service.status import ItemStatus, JobState

#: The longest long-poll one GET may ask for.
MAX_POLL_S = 60.0

router = APIRouter()


@router.get("/v1/jobs/{job_id}", response_model=JobView, responses={202: {}, 404: {}})
async def job(job_id: str, request: Request, wait_s: float = 0.0,
              runtime: ServiceRuntime = Depends(runtime_of)) -> Response:  # fmt: skip
    """A job's results so far; `wait_s` (≤ 60) long-polls until it completes."""
    done = await finished_response(runtime, job_id)
    if done is not None:
        return done
    view = await run_in_threadpool(runtime.view, job_id)
    if view is None:
        return error(404, f"unknown job {job_id!r}")
    if wait_s > 0 and view.state != JobState.COMPLETE:
        until = min(time.time() + min(wait_s, MAX_POLL_S), view.deadline + ANSWER_GRACE_S)
        view = await wait_for(runtime, job_id, until, request) or view
    if view.state == JobState.COMPLETE:
        return await finished_response(runtime, job_id) or view_response(view)
    return view_response(view)


@router.get("/v1/jobs/{job_id}/events", responses={404: {}})
async def events(job_id: str, request: Request,
                 runtime: ServiceRuntime = Depends(runtime_of)) -> Any:  # fmt: skip
    """Progress as NDJSON: one `item` line per result as it lands, then one `complete` line
    with the whole job (rewards included). Ends at completion or the deadline."""
    first = await run_in_threadpool(runtime.view, job_id)
    if first is None:
        return error(404, f"unknown job {job_id!r}")
    lines = _event_lines(runtime, job_id, first.deadline + ANSWER_GRACE_S, request)
    return StreamingResponse(lines, media_type="application/x-ndjson")


async def _event_lines(runtime: ServiceRuntime, job_id: str, until: float,
                       request: Request) -> AsyncIterator[bytes]:  # fmt: skip
    sent: set[int] = set()
    while True:
        view = await run_in_threadpool(runtime.view, job_id)
        if view is None:
            return
        for it in view.items:
            if it.status != ItemStatus.PENDING and it.index not in sent:
                sent.add(it.index)
                line = {"event": "item", "n_done": view.n_done, "n_items": view.n_items,
                        "item": it.model_dump(mode="json", exclude={"reward"})}  # fmt: skip
                yield (json.dumps(line) + "\n").encode()
        if view.state == JobState.COMPLETE or time.time() >= until:
            yield (json.dumps({"event": "complete", "job": view.model_dump(mode="json")})
                   + "\n").encode()  # fmt: skip
            return
        if await request.is_disconnected():
            return
        await runtime.watch.wait(job_id, 1.0)
