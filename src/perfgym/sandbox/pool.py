"""`SandboxPool`: many executions over a local worker pool, with a timing mode that pins runs."""

from __future__ import annotations

import os
import queue
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from perfgym.errors import ConfigError
from perfgym.sandbox.base import Sandbox
from perfgym.sandbox.execution import Execution
from perfgym.sandbox.run_request import RunRequest

__all__ = ["RunRequest", "SandboxPool", "usable_cores"]


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
            # The core is the pool's choice alone (None outside timing mode), whatever the
            # request said.
            return self.sandbox.run(req.command, **{**req.keywords(), "cpu": core})
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
