"""POST /run_code: a SandboxFusion-compatible endpoint, so a verl `sandbox_fusion` config only
changes its URL to run in perfgym's sandbox (see docs/training-verl.md)."""

from __future__ import annotations

import atexit
from pathlib import Path

from fastapi import APIRouter, Depends
from fastapi.concurrency import run_in_threadpool

from perfgym.service.server.answering import runtime_of
from perfgym.service.server.routes.run_code_exec import CodeRunner, RunCodeRequest, RunCodeResponse
from perfgym.service.server.runtime import ServiceRuntime

router = APIRouter()

_runners: dict[int, CodeRunner] = {}


def _runner(runtime: ServiceRuntime) -> CodeRunner:
    """One runner per service (its build cache lives in the hidden state directory)."""
    runner = _runners.get(id(runtime))
    if runner is None:
        runner = CodeRunner(Path(runtime.config.state_dir) / "run_code_builds")
        _runners[id(runtime)] = runner
        atexit.register(runner.close)
    return runner


@router.post("/run_code", response_model=RunCodeResponse)
async def run_code(req: RunCodeRequest,
                   runtime: ServiceRuntime = Depends(runtime_of)) -> RunCodeResponse:  # fmt: skip
    """Build and run `code` with `stdin` (SandboxFusion's request and response); perfgym's
    measurement of the run is added under `perfgym`."""
    return await run_in_threadpool(_runner(runtime).run, req)
