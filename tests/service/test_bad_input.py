"""Bad input gets a clear error, and nothing already queued is lost: malformed JSON, unknown
tasks and suites, oversized bodies, unsupported languages, a client hanging up mid-job, and
wrong tokens."""

from __future__ import annotations

import shutil

import httpx
import pytest
from fastapi.testclient import TestClient
from service_helpers import sleeper, task_json
from small_tasks import SUM, sum_task

from perfgym.errors import ConfigError
from perfgym.service.config import ServiceConfig
from perfgym.service.server.app import create_app


def _survivor(service) -> str:
    body = {"job_id": "survivor", "wait": False, "tasks": [task_json(sum_task("sum-s"))],
            "items": [{"task_id": "sum-s", "source": sleeper(0.3), "sample": k} for k in range(4)]}  # fmt: skip
    r = httpx.post(f"{service.url}/v1/judge", json=body, timeout=30)
    assert r.status_code in (200, 202), r.text
    return "survivor"


def test_bad_requests_are_refused_clearly_and_the_queue_keeps_its_jobs(service):
    url = f"{service.url}/v1/judge"
    job = _survivor(service)

    r = httpx.post(url, content=b'{"items": [', headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"].startswith("malformed JSON"), r.text

    ref = {"items": [{"suite": "perfgym-core", "task_id": "no-such-task", "source": SUM}]}
    r = httpx.post(url, json=ref, timeout=60)
    assert r.status_code == 404 and "has no task 'no-such-task'" in r.json()["error"], r.text
    r = httpx.post(url, json={"items": [{"suite": "nope", "task_id": "x", "source": SUM}]})
    assert r.status_code == 404 and "unknown suite 'nope'" in r.json()["error"], r.text
    r = httpx.post(url, json={"items": [{"task_id": "ghost", "source": SUM}]})
    assert r.status_code == 404 and "neither inline" in r.json()["error"], r.text

    big = {
        "tasks": [task_json(sum_task())],
        "items": [{"task_id": "sum", "source": "#" * (2 << 20)}],
    }
    r = httpx.post(url, json=big, timeout=30)
    assert r.status_code == 413 and "larger than the limit" in r.json()["error"], r.text

    def chunks():  # no Content-Length: the cap is enforced while reading
        yield b'{"items": [{"task_id": "sum", "source": "'
        for _ in range(40):
            yield b"#" * 65536
        yield b'"}]}'

    r = httpx.post(url, content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413, r.text

    cobol = dict(task_json(sum_task("c")), language="cobol")
    r = httpx.post(url, json={"tasks": [cobol], "items": [{"task_id": "c", "source": "x"}]})
    assert r.status_code == 422 and "language" in r.json()["error"], r.text
    if shutil.which("nvcc") is None:
        cuda = dict(task_json(sum_task("g")), language="cuda")
        r = httpx.post(url, json={"tasks": [cuda], "items": [{"task_id": "g", "source": "x"}]})
        assert r.status_code == 422 and "not supported here" in r.json()["error"], r.text

    r = httpx.post(url, json={"tasks": [task_json(sum_task())], "items": [{"task_id": "sum"}]})
    assert r.status_code == 422 and "exactly one of 'completion' or 'source'" in r.json()["error"]
    r = httpx.post(url, json={"tasks": [task_json(sum_task())], "reward": {"name": "nope"},
                              "items": [{"task_id": "sum", "source": SUM}]})  # fmt: skip
    assert r.status_code == 422 and "no reward named 'nope'" in r.json()["error"], r.text
    r = httpx.post(f"{service.url}/v1/executions",
                   json={"requests": [{"command": ["cat", "x"], "files": {"../escape": "eA=="}}]})  # fmt: skip
    assert r.status_code == 422 and "relative to the work dir" in r.json()["error"], r.text

    # A client that hangs up while waiting: its job goes on and is there to fetch.
    gone = {"job_id": "hung-up", "tasks": [task_json(sum_task("sum-h"))],
            "items": [{"task_id": "sum-h", "source": sleeper(1.0)}]}  # fmt: skip
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(url, json=gone, timeout=httpx.Timeout(30, read=0.3))
    done = httpx.get(f"{service.url}/v1/jobs/hung-up", params={"wait_s": 60}, timeout=90).json()
    assert done["state"] == "complete" and done["items"][0]["verdict"]["stage"] == "OK"

    survivor = httpx.get(f"{service.url}/v1/jobs/{job}", params={"wait_s": 60}, timeout=90).json()
    assert survivor["state"] == "complete"
    assert [i["status"] for i in survivor["items"]] == ["ok"] * 4
    assert all(i["verdict"]["stage"] == "OK" for i in survivor["items"])
    assert httpx.get(f"{service.url}/v1/health").json()["status"] == "ok"


def test_wrong_or_missing_token_is_401_and_open_binds_need_one(tmp_path):
    app = create_app(ServiceConfig(state_dir=str(tmp_path), token="s3cret"))
    client = TestClient(app)  # no lifespan: the token check comes before any handler
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret"}):
        r = client.get("/v1/metrics", headers=headers)
        assert r.status_code == 401 and r.json()["error"] == "missing or wrong bearer token"
        assert r.headers["www-authenticate"] == "Bearer"
        r = client.post("/v1/judge", json={"items": []}, headers=headers)
        assert r.status_code == 401
    ok = client.get("/v1/config", headers={"Authorization": "Bearer s3cret"})
    assert ok.status_code == 200 and "s3cret" not in ok.text
    with pytest.raises(ConfigError, match="without a bearer token"):
        ServiceConfig(host="0.0.0.0").check_bind()
    with pytest.raises(ConfigError):
        create_app(ServiceConfig(host="192.0.2.1", state_dir=str(tmp_path)))
    ServiceConfig(host="0.0.0.0", token="t").check_bind()
    ServiceConfig(host="::1").check_bind()
