"""POST /v1/judge and /v1/executions: submitting judge batches and raw sandbox runs."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from perfgym.service.models import ExecRequest, JobView, JudgeRequest
from perfgym.service.server.answering import answer, runtime_of, submit
from perfgym.service.server.runtime import ServiceRuntime

router = APIRouter()


@router.post("/v1/judge", response_model=JobView, status_code=200,
             responses={202: {"model": JobView}, 400: {}, 404: {}, 409: {}, 413: {}, 422: {},
                        429: {}})  # fmt: skip
async def judge(req: JudgeRequest, request: Request,
                runtime: ServiceRuntime = Depends(runtime_of)) -> JSONResponse:  # fmt: skip
    """Judge a batch: per-item verdicts, and rewards when a reward is named.

    wait=true answers when every item has its result or at the deadline (unfinished items
    then say 'deadline'); wait=false answers 202 at once with the job id to poll or stream.
    """
    items, tasks = await run_in_threadpool(runtime.intake.judge_items, req)
    spec = {"reward": req.reward.model_dump(mode="json") if req.reward else None,
            "columns": req.columns}  # fmt: skip
    body = req.model_dump(mode="json")
    job_id = await submit(runtime, "judge", body, req.job_id, req.deadline_s, spec, items, tasks)
    return await answer(runtime, job_id, req.wait, request)


@router.post("/v1/executions", response_model=JobView,
             responses={202: {"model": JobView}, 400: {}, 409: {}, 413: {}, 422: {}, 429: {}})  # fmt: skip
async def executions(req: ExecRequest, request: Request,
                     runtime: ServiceRuntime = Depends(runtime_of)) -> JSONResponse:  # fmt: skip
    """Raw sandbox runs (no task, no judging): one Execution per request."""
    items = await run_in_threadpool(runtime.intake.exec_items, req)
    body = req.model_dump(mode="json")
    job_id = await submit(runtime, "exec", body, req.job_id, req.deadline_s, {}, items, {})
    return await answer(runtime, job_id, req.wait, request)
