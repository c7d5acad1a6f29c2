"""The HTTP API end to end against a real service process: sync and async judging with rewards,
streamed progress, idempotent job ids, raw runs, deadlines, retries, health, metrics, OpenAPI."""

from __future__ import annotations

import json
import os
import signal
import time

import httpx
from service_helpers import sleeper, task_json, worker_pids
from small_tasks import SLOW_SUM, SUM, sum_task

from perfgym.judge.verdict import Verdict
from perfgym.rewards import get_reward


def _batch(**extra):
    return {
        "tasks": [task_json(sum_task())],
        "items": [
            {"task_id": "sum", "completion": f"```python\n{SUM}```", "model": "m", "sample": 0},
            {"task_id": "sum", "source": SLOW_SUM, "model": "m", "sample": 1},
            {"task_id": "sum", "source": "print(42)\n", "model": "m", "sample": 2},
            {"task_id": "sum", "source": "raise SystemExit(3)\n", "model": "m", "sample": 3},
        ],
        "reward": {"name": "rlpf"},
        **extra,
    }


def test_sync_batch_gives_verdicts_and_rewards(service):
    r = httpx.post(f"{service.url}/v1/judge", json=_batch(), timeout=120)
    assert r.status_code == 200, r.text
    job = r.json()
    assert job["state"] == "complete" and job["n_done"] == job["n_items"] == 4
    items = sorted(job["items"], key=lambda i: i["index"])
    assert [i["status"] for i in items] == ["ok"] * 4
    verdicts = [Verdict.model_validate(i["verdict"]) for i in items]
    assert [v.stage.value for v in verdicts] == ["OK", "OK", "WO", "NR"]
    assert [(v.model, v.sample, v.task_id) for v in verdicts] == [("m", k, "sum") for k in range(4)]
    # Program failures are answers, never retried.
    assert [i["attempts"] for i in items] == [1, 1, 1, 1]
    # The rewards are exactly the registered reward over the returned verdicts.
    assert [i["reward"]["value"] for i in items] == get_reward("rlpf")(verdicts)


def test_async_job_streams_progress_then_completes(service):
    r = httpx.post(f"{service.url}/v1/judge", json=_batch(wait=False), timeout=30)
    assert r.status_code == 202, r.text
    job_id = r.json()["job_id"]
    lines = []
    with httpx.stream("GET", f"{service.url}/v1/jobs/{job_id}/events", timeout=120) as s:
        for line in s.iter_lines():
            if line.strip():
                lines.append(json.loads(line))
    items = [x for x in lines if x["event"] == "item"]
    assert sorted(x["item"]["index"] for x in items) == [0, 1, 2, 3]
    assert lines[-1]["event"] == "complete" and lines[-1]["job"]["state"] == "complete"
    assert all(i["reward"] is not None for i in lines[-1]["job"]["items"])
    polled = httpx.get(f"{service.url}/v1/jobs/{job_id}", timeout=30).json()
    assert polled == lines[-1]["job"]


def test_same_job_id_returns_the_same_job_and_never_runs_twice(service):
    body = _batch(job_id="idem-1")
    first = httpx.post(f"{service.url}/v1/judge", json=body, timeout=120).json()
    before = httpx.get(f"{service.url}/v1/metrics").json()["completed"]
    again = httpx.post(f"{service.url}/v1/judge", json={**body, "deadline_s": 99}, timeout=120)
    assert again.status_code == 200 and again.json() == first
    assert httpx.get(f"{service.url}/v1/metrics").json()["completed"] == before
    other = dict(body, items=body["items"][:1])
    clash = httpx.post(f"{service.url}/v1/judge", json=other, timeout=30)
    assert clash.status_code == 409 and "already used" in clash.json()["error"]


def test_raw_executions(service):
    req = {"requests": [{"command": ["python3", "-c", "import sys; print(sys.stdin.read()[::-1])"],
                         "stdin": "YWJj"}]}  # fmt: skip
    r = httpx.post(f"{service.url}/v1/executions", json=req, timeout=60)
    assert r.status_code == 200, r.text
    (item,) = r.json()["items"]
    assert item["status"] == "ok" and item["execution"]["status"] == "OK"
    assert item["execution"]["stdout"] == "Y2JhCg=="  # base64 of b"cba\n"


def test_deadline_always_answers(service):
    body = {"tasks": [task_json(sum_task())], "deadline_s": 1.5,
            "items": [{"task_id": "sum", "source": sleeper(40)}]}  # fmt: skip
    r = httpx.post(f"{service.url}/v1/judge", json=body, timeout=60)
    # Answered at the deadline, not when the 40 s sleeper ends: the item says "deadline" and
    # carries no verdict (a finished sleeper would have one); no wall time is asserted.
    assert r.status_code == 200, r.status_code
    (item,) = r.json()["items"]
    assert item["status"] == "deadline" and item["verdict"] is None
    assert "deadline" in item["reason"]


def test_killed_worker_is_an_infrastructure_retry_not_a_wrong_answer(service):
    body = {"tasks": [task_json(sum_task("sum-k"))], "wait": False, "job_id": "kill-1",
            "items": [{"task_id": "sum-k", "source": sleeper(1.5)}]}  # fmt: skip
    httpx.post(f"{service.url}/v1/judge", json=body, timeout=30).raise_for_status()
    victim = None
    end = time.monotonic() + 20
    while victim is None and time.monotonic() < end:
        job = httpx.get(f"{service.url}/v1/jobs/kill-1").json()
        if job["state"] == "running":
            # Whichever worker holds it: kill every worker once (the queue survives them).
            for pid in worker_pids(service.pid()):
                os.kill(pid, signal.SIGKILL)
                victim = pid
        time.sleep(0.1)
    assert victim is not None
    job = httpx.get(f"{service.url}/v1/jobs/kill-1", params={"wait_s": 60}, timeout=90).json()
    (item,) = job["items"]
    assert job["state"] == "complete" and item["status"] == "ok", item
    assert item["verdict"]["stage"] == "OK" and item["attempts"] >= 2 and job["retried"] >= 1
    m = httpx.get(f"{service.url}/v1/metrics").json()
    assert m["worker_restarts"] >= 1 and m["retried"] >= 1


def test_health_metrics_config_and_openapi(service):
    h = httpx.get(f"{service.url}/v1/health").json()
    assert h["workers_wanted"] >= 1 and h["machine"]
    m = httpx.get(f"{service.url}/v1/metrics").json()
    for key in ("queue_depth", "in_flight", "failure_rate", "retry_rate", "latency_s",
                "throughput_per_s", "calibration"):  # fmt: skip
        assert key in m
    assert set(m["latency_s"]) == {"p50", "p90", "p99", "max"}
    cfg = httpx.get(f"{service.url}/v1/config").json()
    assert cfg["judge"]["repeats"] == 1
    spec = httpx.get(f"{service.url}/openapi.json").json()
    for path in ("/v1/judge", "/v1/executions", "/v1/jobs/{job_id}", "/v1/jobs/{job_id}/events",
                 "/v1/health", "/v1/metrics"):  # fmt: skip
        assert path in spec["paths"]
    assert "JudgeRequest" in spec["components"]["schemas"]
