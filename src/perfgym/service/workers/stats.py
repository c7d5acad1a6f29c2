"""`ServiceStats`: counters and a recent-latency window behind /v1/metrics."""

from __future__ import annotations

import collections
import threading
import time

import numpy as np

from perfgym.service.status import ItemStatus
from perfgym.timing.result import TimingStatus


class ServiceStats:
    """Thread-safe counters since start, and latencies/throughput over a recent window."""

    def __init__(self, window: int = 5000, rate_window_s: float = 30.0) -> None:
        self.started = time.monotonic()
        self._lock = threading.Lock()
        self._latencies: collections.deque[float] = collections.deque(maxlen=window)
        self._finished_at: collections.deque[float] = collections.deque(maxlen=100_000)
        self._rate_window_s = rate_window_s
        self.completed = 0
        self.infra_failed = 0
        self.deadline_missed = 0
        self.retried = 0
        self.rejected_full = 0
        self.worker_restarts = 0
        #: Warm Python worker counters of service worker processes that have been replaced.
        self.retired_pools: dict[str, int] = {}
        self.timings: dict[str, int] = {}
        self.last_degraded = ""

    def retire_pools(self, counters: dict[str, int]) -> None:
        with self._lock:
            for k, v in counters.items():
                self.retired_pools[k] = self.retired_pools.get(k, 0) + v

    def answered(self, status: str, latency_s: float | None) -> None:
        with self._lock:
            if status == ItemStatus.OK:
                self.completed += 1
            elif status == ItemStatus.INFRA_ERROR:
                self.infra_failed += 1
            elif status == ItemStatus.DEADLINE:
                self.deadline_missed += 1
            if latency_s is not None and status != ItemStatus.DEADLINE:
                self._latencies.append(latency_s)
            self._finished_at.append(time.monotonic())

    def note_finished(self, n: int) -> None:
        """`n` items answered outside the workers (a deadline), for the throughput window."""
        with self._lock:
            now = time.monotonic()
            self._finished_at.extend([now] * n)

    def timing(self, status: str, reason: str) -> None:
        """A judged candidate's timing status (drift flags and fallbacks show up here)."""
        with self._lock:
            self.timings[status] = self.timings.get(status, 0) + 1
            if status != TimingStatus.OK and reason:
                self.last_degraded = reason

    def add(self, counter: str, n: int = 1) -> None:
        with self._lock:
            setattr(self, counter, getattr(self, counter) + n)

    def throughput(self) -> float:
        """Items answered per second over the recent window."""
        now = time.monotonic()
        with self._lock:
            recent = sum(1 for t in self._finished_at if now - t <= self._rate_window_s)
        span = min(self._rate_window_s, max(now - self.started, 1e-3))
        return recent / span

    def latency_percentiles(self) -> dict[str, float | None]:
        with self._lock:
            xs = np.asarray(self._latencies, dtype=float)
        if len(xs) == 0:
            return {"p50": None, "p90": None, "p99": None, "max": None}
        p50, p90, p99 = np.quantile(xs, [0.5, 0.9, 0.99])
        return {"p50": float(p50), "p90": float(p90), "p99": float(p99), "max": float(xs.max())}

    def rates(self) -> tuple[float, float]:
        """(failure rate, retry rate) over items answered so far."""
        with self._lock:
            answered = self.completed + self.infra_failed + self.deadline_missed
            if answered == 0:
                return 0.0, 0.0
            return self.infra_failed / answered, self.retried / answered
