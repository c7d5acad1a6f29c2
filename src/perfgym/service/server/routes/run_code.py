"""POST /run_code: a SandboxFusion-compatible endpoint, so a verl `sandbox_fusion` config only
changes its URL to run in perfgym's sandbox (see docs/training-verl.md)."""

from __future__ import annotations

import atexit
from pathlib import Path

import anyio
from fastapi import APIRouter, Depends

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
    runner = _runner(runtime)
    # Its own limiter: requests waiting for a slot wait here, not in worker threads of the shared
    # pool (40 of them), which a flood of slow runs would otherwise fill, stalling every judge
    # request behind it.
    return await anyio.to_thread.run_sync(runner.run, req, limiter=_limiter(runner))


_limiters: dict[int, anyio.CapacityLimiter] = {}


def _limiter(runner: CodeRunner) -> anyio.CapacityLimiter:
    limiter = _limiters.get(id(runner))
    if limiter is None:
        limiter = _limiters[id(runner)] = anyio.CapacityLimiter(runner.slots)
    return limiter
