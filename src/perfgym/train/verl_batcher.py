"""`MicroBatcher`: calls arriving together (verl's reward workers await one `compute_score` per
sample) are gathered for a short window into one batch, so a GRPO group is judged in one call
and shares its baseline and reference measurement."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Generic, TypeVar

In = TypeVar("In")
Out = TypeVar("Out")


class MicroBatcher(Generic[In, Out]):
    """Collects items from any thread or event loop and runs `judge(batch)` once per batch.

    A batch closes `window_s` after its first item, or at once when it holds `max_batch` items;
    it then runs on a thread of its own, so callers' event loops keep accepting items. A judge
    that raises fails every item of its batch with that exception (nothing is invented)."""

    def __init__(self, judge: Callable[[list[In]], Sequence[Out]], *, window_s: float = 0.05,
                 max_batch: int = 256) -> None:  # fmt: skip
        if window_s < 0 or max_batch < 1:
            raise ValueError("window_s must be >= 0 and max_batch >= 1")
        self._judge = judge
        self.window_s = window_s
        self.max_batch = max_batch
        self._lock = threading.Lock()
        self._pending: list[tuple[In, Future[Out]]] = []
        self._timer: threading.Timer | None = None
        self.batch_sizes: list[int] = []  # one entry per judge call, for diagnostics and tests

    def submit(self, item: In) -> Future[Out]:
        future: Future[Out] = Future()
        with self._lock:
            self._pending.append((item, future))
            if len(self._pending) >= self.max_batch:
                batch = self._take()
            else:
                batch = None
                if self._timer is None:
                    self._timer = threading.Timer(self.window_s, self._flush_timer)
                    self._timer.daemon = True
                    self._timer.start()
        if batch:
            threading.Thread(target=self._run, args=(batch,), daemon=True).start()
        return future

    async def submit_async(self, item: In) -> Out:
        return await asyncio.wrap_future(self.submit(item))

    def _take(self) -> list[tuple[In, Future[Out]]]:
        batch, self._pending = self._pending, []
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        return batch

    def _flush_timer(self) -> None:
        with self._lock:
            self._timer = None
            batch, self._pending = self._pending, []
        if batch:
            self._run(batch)

    def _run(self, batch: list[tuple[In, Future[Out]]]) -> None:
        self.batch_sizes.append(len(batch))
        try:
            results = list(self._judge([item for item, _ in batch]))
            if len(results) != len(batch):
                raise RuntimeError(f"judge returned {len(results)} results for {len(batch)} items")
        except BaseException as exc:  # noqa: BLE001 - every waiting caller must hear of it
            for _, future in batch:
                future.set_exception(exc)
            return
        for (_, future), result in zip(batch, results, strict=True):
            future.set_result(result)
