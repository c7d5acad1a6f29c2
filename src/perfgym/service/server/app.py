"""`create_app(config)`: the FastAPI app behind `perfgym serve`, assembled from its parts."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from fastapi import Depends, FastAPI
from fastapi.concurrency import run_in_threadpool

from perfgym import __version__
from perfgym.service.config import ServiceConfig
from perfgym.service.server.errors import install_error_handlers
from perfgym.service.server.guards import BodyLimit, bearer_guard
from perfgym.service.server.routes import health, jobs, judge, run_code, stats
from perfgym.service.server.runtime import ServiceRuntime


@contextlib.asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Start the queue dispatcher and worker processes with the app; stop them after it."""
    runtime: ServiceRuntime = app.state.runtime
    runtime.watch.bind(asyncio.get_running_loop())
    await run_in_threadpool(runtime.start)
    try:
        yield
    finally:
        await run_in_threadpool(runtime.stop)


def create_app(config: ServiceConfig) -> FastAPI:
    """The app; its state holds the `ServiceRuntime` every route works on."""
    runtime = ServiceRuntime(config)
    app = FastAPI(
        title="perfgym service",
        version=__version__,
        description="Judge candidates (extract → build → run → check → measure) and score them "
        "with perfgym rewards; raw sandbox runs. See docs/service.md.",
        lifespan=_lifespan,
        dependencies=[Depends(bearer_guard(config.token))],
    )
    app.state.runtime = runtime
    app.add_middleware(BodyLimit, max_bytes=config.max_body_bytes, token=config.token)
    install_error_handlers(app)
    for routes in (judge, jobs, health, stats, run_code):
        app.include_router(routes.router)
    return app
