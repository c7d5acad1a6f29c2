"""A full queue answers 429 with Retry-After; resubmitting an accepted job is still fine."""

from __future__ import annotations

import httpx
import pytest
from service_helpers import sleeper, task_json
from small_tasks import sum_task

from perfgym.service.config import ServiceConfig
from perfgym.service.server.process import ServiceProcess


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    state = tmp_path_factory.mktemp("small")
    cfg = ServiceConfig(port=0, state_dir=str(state), judge={"repeats": 1}, workers=1,
                        max_queue=3, lease_size=1)  # fmt: skip
    with ServiceProcess(cfg, log=state / "service.log") as svc:
        yield svc


def test_full_queue_is_429_with_retry_after(small):
    url = f"{small.url}/v1/judge"
    task = task_json(sum_task())
    accepted = {"job_id": "fills", "wait": False, "tasks": [task],
                "items": [{"task_id": "sum", "source": sleeper(0.5), "sample": k} for k in range(3)]}  # fmt: skip
    assert httpx.post(url, json=accepted, timeout=30).status_code == 202
    extra = {"tasks": [task], "wait": False, "items": [{"task_id": "sum", "source": sleeper(0)}]}
    r = httpx.post(url, json=extra, timeout=30)
    assert r.status_code == 429, r.text
    assert int(r.headers["retry-after"]) >= 1 and "queue full" in r.json()["error"]
    again = httpx.post(url, json=accepted, timeout=30)  # idempotent even while full
    assert again.status_code in (200, 202) and again.json()["job_id"] == "fills"
    done = httpx.get(f"{small.url}/v1/jobs/fills", params={"wait_s": 60}, timeout=90).json()
    assert done["state"] == "complete" and [i["status"] for i in done["items"]] == ["ok"] * 3
    assert httpx.post(url, json=extra, timeout=30).status_code == 202
    assert httpx.get(f"{small.url}/v1/metrics").json()["rejected_full"] == 1


def test_a_batch_that_can_never_fit_is_422_not_429(small):
    """Four items for a queue of three: no wait makes room, so it is refused as the client's
    error at once (a 429 had `ServiceClient` retry it for 300 s: red team helper-79)."""
    task = task_json(sum_task())
    big = {"tasks": [task], "wait": False,
           "items": [{"task_id": "sum", "source": sleeper(0), "sample": k} for k in range(4)]}  # fmt: skip
    r = httpx.post(f"{small.url}/v1/judge", json=big, timeout=30)
    assert r.status_code == 422 and "more than the queue ever holds (3)" in r.json()["error"], (
        r.text
    )


def test_deadline_answers_are_counted_and_a_held_item_is_in_flight(small):
    """red team helper-79: `deadline_missed` stayed 0 through every deadline answer (the queue
    answers them, never a worker), and `in_flight` showed 0 while a worker still ran an item
    whose job had been answered.

    The deadline leaves the worker 3 s to lease the item (a 1 s one passed with it still queued
    on a loaded machine: answered "while queued", never in flight); the program outlives it."""
    before = httpx.get(f"{small.url}/v1/metrics").json()["deadline_missed"]
    body = {"tasks": [task_json(sum_task())], "wait": True, "deadline_s": 3,
            "items": [{"task_id": "sum", "source": sleeper(10)}]}  # fmt: skip
    r = httpx.post(f"{small.url}/v1/judge", json=body, timeout=60)
    assert r.status_code == 200 and [i["status"] for i in r.json()["items"]] == ["deadline"]
    assert "while still queued" not in r.text, r.text  # the worker had it before the deadline
    m = httpx.get(f"{small.url}/v1/metrics").json()
    assert m["deadline_missed"] == before + 1, m
    assert m["in_flight"] == 1, m  # the worker is still running it
