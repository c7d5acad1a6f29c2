"""`SandboxPool`: many executions over a local worker pool, with a timing mode that pins runs."""

from __future__ import annotations

import os
import queue
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import ConfigError
from perfgym.sandbox.base import Bind, Sandbox
from perfgym.sandbox.execution import Execution
from perfgym.sandbox.limits import Limits


class RunRequest(BaseModel):
    """One `Sandbox.run` call as data (what the pool, the service and Ray pass around)."""

    model_config = ConfigDict(extra="forbid", ser_json_bytes="base64", val_json_bytes="base64")

    command: list[str]
    stdin: bytes = b""
    files: dict[str, bytes] = Field(default_factory=dict)
    env: dict[str, str] | None = None
    limits: Limits = Field(default_factory=Limits)
    binds: list[Bind] = Field(default_factory=list)
    collect: list[str] = Field(default_factory=list)


def usable_cores() -> list[int]:
    return sorted(os.sched_getaffinity(0))


class SandboxPool:
    """Runs requests concurrently on one sandbox backend.

    concurrency: most runs at once (default: the number of usable cores).
    timing:      timing mode — each run is pinned to a core that no other measured run uses
                 while it runs (one measured run per core), so runs never share a core.
    """

    def __init__(self, sandbox: Sandbox, concurrency: int | None = None, timing: bool = False):
        cores = usable_cores()
        if concurrency is not None and concurrency < 1:
            raise ConfigError(f"concurrency must be >= 1, got {concurrency}")
        if timing:
            concurrency = min(concurrency or len(cores), len(cores))
        self.sandbox = sandbox
        self.timing = timing
        self.concurrency = concurrency or len(cores)
        self._cores: queue.Queue[int] = queue.Queue()
        for c in cores[: self.concurrency]:
            self._cores.put(c)
        self._executor = ThreadPoolExecutor(max_workers=self.concurrency)

    def _run_one(self, req: RunRequest) -> Execution:
        core = self._cores.get() if self.timing else None
        try:
            return self.sandbox.run(
                req.command,
                stdin=req.stdin,
                files=dict(req.files),
                env=req.env,
                limits=req.limits,
                binds=req.binds,
                collect=req.collect,
                cpu=core,
            )
        finally:
            if core is not None:
                self._cores.put(core)

    def run_many(
        self,
        requests: Sequence[RunRequest],
        on_done: Callable[[int, Execution], None] | None = None,
    ) -> list[Execution]:
        """Run all requests; results come back in request order. `on_done(i, ex)` reports progress."""
        futures = [self._executor.submit(self._run_one, r) for r in requests]
        results: list[Execution] = []
        for i, fut in enumerate(futures):
            ex = fut.result()
            if on_done is not None:
                on_done(i, ex)
            results.append(ex)
        return results

    def close(self) -> None:
        self._executor.shutdown(wait=True)

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
