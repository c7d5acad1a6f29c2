"""POST /run_code: a SandboxFusion-compatible endpoint, so a verl `sandbox_fusion` config only
changes its URL to run in perfgym's sandbox (see docs/training-verl.md)."""

from __future__ import annotations

import atexit
from pathlib import Path
from typing import Any

import anyio
from fastapi import APIRouter, Depends

from perfgym.service.server.answering import runtime_of
from perfgym.service.server.errors import error
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


@router.post("/run_code", response_model=RunCodeResponse, responses={429: {}})
async def run_code(req: RunCodeRequest,
                   runtime: ServiceRuntime = Depends(runtime_of)) -> Any:  # fmt: skip
    """Build and run `code` with `stdin` (SandboxFusion's request and response); perfgym's
    measurement of the run is added under `perfgym`."""
    runner = _runner(runtime)
    # Its own limiter: requests waiting for a slot wait here, not in worker threads of the shared
    # pool (40 of them), which a flood of slow runs would otherwise fill, stalling every judge
    # request behind it. The line of waiters is bounded too (red team helper-79: with 4 slow
    # runs another client's print(1) took 29 s, and nothing limited the line).
    limiter = _limiter(runner)
    waiting = limiter.statistics().tasks_waiting
    if limiter.available_tokens < 1 and waiting >= runtime.config.max_run_code_waiting:
        return error(429, f"/run_code is busy: {limiter.borrowed_tokens} running and {waiting} "
                     "waiting; retry later", headers={"Retry-After": "1"})  # fmt: skip
    return await anyio.to_thread.run_sync(runner.run, req, limiter=limiter)


_limiters: dict[int, anyio.CapacityLimiter] = {}


def _limiter(runner: CodeRunner) -> anyio.CapacityLimiter:
    limiter = _limiters.get(id(runner))
    if limiter is None:
        limiter = _limiters[id(runner)] = anyio.CapacityLimiter(runner.slots)
    return limiter
