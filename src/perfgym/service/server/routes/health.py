"""GET /v1/health and /v1/config: whether the workers are up, and what the judge runs with."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from perfgym import __version__
from perfgym.service.models import Health
from perfgym.service.server.answering import runtime_of
from perfgym.service.server.runtime import ServiceRuntime

router = APIRouter()


@router.get("/v1/health", response_model=Health)
async def health(runtime: ServiceRuntime = Depends(runtime_of)) -> JSONResponse:
    alive = runtime.dispatcher.alive_workers()
    wanted = len(runtime.dispatcher.workers)
    pools = runtime.dispatcher.pool_counters()
    h = Health(status="ok" if alive == wanted else "degraded", workers_alive=alive,
               workers_wanted=wanted, worker_restarts=runtime.stats.worker_restarts,
               python_worker_restarts=pools["python_worker_restarts"],
               failed_cleanups=pools["failed_cleanups"],
               version=__version__, machine=runtime.machine)  # fmt: skip
    return JSONResponse(h.model_dump(mode="json"), status_code=200 if alive else 503)


@router.get("/v1/config")
async def service_config(runtime: ServiceRuntime = Depends(runtime_of)) -> dict[str, Any]:
    """The judge configuration every verdict here is produced with (token withheld)."""
    config = runtime.config
    return {"judge": config.judge.model_dump(mode="json"), "epoch": config.epoch,
            "machine": runtime.machine, "suites": config.suites, "version": __version__,
            "max_items": config.max_items, "max_body_bytes": config.max_body_bytes,
            "max_queue": config.max_queue}  # fmt: skip
