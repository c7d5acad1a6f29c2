"""GET /v1/metrics: queue depth, outcomes, latency, throughput and calibration of one service."""

from __future__ import annotations

import time

from fastapi import APIRouter, Depends
from fastapi.concurrency import run_in_threadpool

from perfgym.service.models import Metrics
from perfgym.service.server.answering import runtime_of
from perfgym.service.server.runtime import ServiceRuntime

router = APIRouter()


@router.get("/v1/metrics", response_model=Metrics)
async def metrics(runtime: ServiceRuntime = Depends(runtime_of)) -> Metrics:
    counts = await run_in_threadpool(runtime.queue.counts)
    failure_rate, retry_rate = runtime.stats.rates()
    s = runtime.stats
    config = runtime.config
    return Metrics(
        queue_depth=counts.get("queued", 0),
        # what the workers hold: an item answered 'deadline' may still be running there
        in_flight=max(counts.get("running", 0), runtime.dispatcher.in_flight()),
        capacity=config.max_queue,
        completed=s.completed,
        infra_failed=s.infra_failed,
        deadline_missed=s.deadline_missed,
        retried=s.retried,
        rejected_full=s.rejected_full,
        failure_rate=failure_rate,
        retry_rate=retry_rate,
        latency_s=s.latency_percentiles(),
        throughput_per_s=s.throughput(),
        workers_alive=runtime.dispatcher.alive_workers(),
        worker_restarts=s.worker_restarts,
        uptime_s=time.time() - runtime.started,
        machine=runtime.machine,
        calibration={
            "epoch": config.epoch,
            "drift_probes": config.judge.drift is not None,
            "candidate_timings": dict(s.timings),
            "last_degraded_reason": s.last_degraded,
        },
    )
