"""A hostile client at the service's edges (issue 13, holes 9 and 7 on the service side): odd
header bytes, a raw run asking for the host's network, lone surrogates and NULs in a batch,
undecodable URL bytes, state files other users could read, and health that hides restarts.

Each one must get a clear 4xx or a judged verdict: never an HTTP 500, never an
infrastructure error, and never the batch lost for one bad item."""

from __future__ import annotations

import json
import os
import signal
import stat
import sys
import time

import httpx
import pytest
from fastapi.testclient import TestClient

from perfgym.service.config import ServiceConfig
from perfgym.service.server.app import create_app
from perfgym.service.server.process import ServiceProcess

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "service"))

from service_helpers import (  # noqa: E402
    ADD,
    add_task,
    cmdline,
    descendants,
    task_json,
    worker_pids,
)
from small_tasks import SUM, sum_task  # noqa: E402

_FAST_JUDGE = {"repeats": 1}


@pytest.fixture(scope="module")
def edge_service(tmp_path_factory):
    state = tmp_path_factory.mktemp("edge-service") / "state"  # created by the service itself
    cfg = ServiceConfig(port=0, state_dir=str(state), judge=_FAST_JUDGE, workers=1,
                        max_body_bytes=1 << 20)  # fmt: skip
    with ServiceProcess(cfg, log=state.parent / "service.log") as svc:
        yield svc


def _client(tmp_path, **extra) -> TestClient:
    """The app in-process without its lifespan: requests are checked, nothing is judged."""
    cfg = ServiceConfig(state_dir=str(tmp_path / "state"), **extra)
    return TestClient(create_app(cfg), raise_server_exceptions=False)


def _post_raw(url: str, body: dict, timeout: float = 120) -> httpx.Response:
    # json.dumps escapes a lone surrogate as \ud800: valid JSON text that no UTF-8 can hold.
    return httpx.post(url, content=json.dumps(body).encode(), timeout=timeout,
                      headers={"content-type": "application/json"})  # fmt: skip


# -- headers ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value",
    [
        "Bearer s3cr\u00e9t".encode("latin-1"),  # one latin-1 byte
        "Bearer ключ".encode(),  # UTF-8, not latin-1 text
        b"Bearer \xff\xfe\x80",  # no text encoding at all
        b"\xc3\xa9 s3cret",  # a non-ASCII scheme
    ],
)
def test_non_ascii_authorization_is_401_not_500(tmp_path, value):
    client = _client(tmp_path, token="s3cret")
    r = client.get("/v1/config", headers={"Authorization": value})
    assert r.status_code == 401, (r.status_code, r.text)
    assert r.json()["error"] == "missing or wrong bearer token"
    assert client.get("/v1/config", headers={"Authorization": "Bearer s3cret"}).status_code == 200


def test_a_non_ascii_token_still_works(tmp_path):
    client = _client(tmp_path, token="clé-ключ")
    good = {"Authorization": "Bearer clé-ключ".encode()}
    assert client.get("/v1/config", headers=good).status_code == 200
    bad = {"Authorization": "Bearer clé-ключ".encode()[:-1]}
    assert client.get("/v1/config", headers=bad).status_code == 401


# -- raw runs asking for the network ------------------------------------------------------------
_NET_RUN = {"command": ["python3", "-c", "print(1)"], "limits": {"network": True}}


def test_network_run_is_refused_over_http(tmp_path):
    client = _client(tmp_path)
    r = client.post("/v1/executions", json={"requests": [_NET_RUN], "wait": False})
    assert r.status_code == 422, r.text
    assert "limits.network=true is refused" in r.json()["error"]
    plain = {"command": ["python3", "-c", "print(1)"]}
    r = client.post("/v1/executions", json={"requests": [plain, _NET_RUN], "wait": False})
    assert r.status_code == 422 and "run 1:" in r.json()["error"], r.text


@pytest.mark.parametrize("field", [{"cpu": 0}, {"hide": ["/usr"]}])
def test_a_client_cannot_pick_the_hosts_core_or_hidden_paths(tmp_path, field):
    client = _client(tmp_path)
    run = {"command": ["true"], **field}
    r = client.post("/v1/executions", json={"requests": [run], "wait": False})
    assert r.status_code == 422, r.text
    assert "chosen by the service" in r.text


def test_network_run_is_accepted_only_when_the_operator_opts_in(tmp_path):
    client = _client(tmp_path, allow_network=True)
    r = client.post("/v1/executions", json={"requests": [_NET_RUN], "wait": False})
    assert r.status_code == 202, r.text


# -- lone surrogates and NULs -------------------------------------------------------------------
def test_lone_surrogate_candidates_are_judged_nx_and_the_batch_survives(edge_service):
    body = {"tasks": [task_json(sum_task())],
            "items": [{"task_id": "sum", "source": SUM},
                      {"task_id": "sum", "source": SUM + "# \ud800\n"},
                      {"task_id": "sum", "completion": "```python\n" + SUM + "\udcff```"},
                      {"task_id": "sum", "source": SUM, "sample": 1}]}  # fmt: skip
    r = _post_raw(f"{edge_service.url}/v1/judge", body)
    assert r.status_code == 200, r.text
    items = r.json()["items"]
    assert [i["status"] for i in items] == ["ok"] * 4, items
    stages = [i["verdict"]["stage"] for i in items]
    assert stages == ["OK", "NX", "NX", "OK"], [i["verdict"]["reason"] for i in items]
    for bad in items[1:3]:
        assert bad["verdict"]["detail"] == "INVALID_TEXT"
        assert "not valid Unicode" in bad["verdict"]["reason"]
        assert not bad["verdict"]["infra_error"]


def test_lone_surrogate_with_a_reward_scores_the_bad_item_as_nx(edge_service):
    body = {"tasks": [task_json(sum_task("sum-r"))], "reward": {"name": "rlpf"},
            "items": [{"task_id": "sum-r", "source": SUM},
                      {"task_id": "sum-r", "source": "\ud83d" + SUM}]}  # fmt: skip
    r = _post_raw(f"{edge_service.url}/v1/judge", body)
    assert r.status_code == 200, r.text
    good, bad = r.json()["items"]
    assert bad["verdict"]["stage"] == "NX" and bad["reward"]["value"] is not None, bad
    assert good["reward"]["value"] > bad["reward"]["value"]


@pytest.mark.parametrize(
    "where",
    ["model", "task_id", "goal", "exec_command", "exec_env", "reward_param"],
)
def test_lone_surrogate_elsewhere_is_a_clear_422(tmp_path, where):
    client = _client(tmp_path)
    task = task_json(sum_task())
    item = {"task_id": "sum", "source": SUM}
    path = "/v1/judge"
    if where == "model":
        item["model"] = "m\udc80"
    elif where == "task_id":
        item["task_id"] = task["id"] = "sum\ud800"
    elif where == "goal":
        task["goal"] = "Sum \udfff them."
    body: dict = {"tasks": [task], "items": [item], "wait": False}
    if where == "reward_param":
        body["reward"] = {"name": "rlpf", "params": {"note\ud800": 1}}
    if where.startswith("exec"):
        path = "/v1/executions"
        run: dict = {"command": ["python3", "-c", "print(1)"]}
        if where == "exec_command":
            run["command"] = ["python3", "-c", "print('\ud800')"]
        else:
            run["env"] = {"X": "\ud800"}
        body = {"requests": [run], "wait": False}
    r = client.post(path, content=json.dumps(body), headers={"content-type": "application/json"})
    assert r.status_code == 422, (r.status_code, r.text)
    # a task id is refused by the task model itself (not valid text), the rest by the intake
    error = r.json()["error"]
    assert "not valid Unicode" in error or "not valid text" in error, error


def test_nul_bytes_in_sources_are_judged_not_500(edge_service):
    body = {"tasks": [task_json(sum_task("sum-n"))],
            "items": [{"task_id": "sum-n", "source": SUM + "\x00"},
                      {"task_id": "sum-n", "source": "\x00\x00"},
                      {"task_id": "sum-n", "completion": "```python\n\x00" + SUM + "```"}]}  # fmt: skip
    r = _post_raw(f"{edge_service.url}/v1/judge", body)
    assert r.status_code == 200, r.text
    for it in r.json()["items"]:
        assert it["status"] == "ok" and not it["verdict"]["infra_error"], it
        assert it["verdict"]["stage"] in ("NX", "NC", "NR"), it["verdict"]


@pytest.mark.parametrize("path", ["/v1/jobs/%FF%FE", "/v1/jobs/%ED%A0%80", "/v1/jobs/a%00b"])
def test_undecodable_url_bytes_are_not_500(edge_service, path):
    r = httpx.get(f"{edge_service.url}{path}", timeout=30)
    assert r.status_code in (400, 404, 422), (r.status_code, r.text)


# -- state files and health ---------------------------------------------------------------------
def test_state_files_are_private(edge_service):
    body = {"tasks": [task_json(sum_task("sum-p"))],
            "items": [{"task_id": "sum-p", "source": SUM}]}  # fmt: skip
    r = httpx.post(f"{edge_service.url}/v1/judge", json=body, timeout=120)
    assert r.status_code == 200, r.text
    state = edge_service.config.state_dir
    found = []
    for root, dirs, files in os.walk(state):
        for name in [*dirs, *files, "."]:
            p = os.path.join(root, name)
            found.append((p, stat.S_IMODE(os.lstat(p).st_mode)))
    names = {os.path.basename(p) for p, _m in found}
    assert {"queue.sqlite", "store.sqlite"} <= names, names
    assert any(n.endswith("-wal") for n in names), names  # WAL mode: its files are checked too
    loose = [(p, oct(m)) for p, m in found if m & 0o077]
    assert not loose, loose


def test_restart_keeps_state_private_even_if_it_was_loose(tmp_path):
    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    os.chmod(state, 0o755)
    for name in ("queue.sqlite", "store.sqlite"):
        (state / name).touch()
        os.chmod(state / name, 0o644)
    _client(tmp_path)  # the runtime opens (and fixes) them
    assert stat.S_IMODE(os.stat(state).st_mode) == 0o700
    for p in state.iterdir():
        assert stat.S_IMODE(os.stat(p).st_mode) & 0o077 == 0, p


def test_health_reports_worker_restarts(edge_service):
    before = httpx.get(f"{edge_service.url}/v1/health", timeout=30).json()
    assert isinstance(before["worker_restarts"], int), before
    pids = worker_pids(edge_service.pid())
    assert pids
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    end = time.monotonic() + 60
    health = before
    while time.monotonic() < end:
        health = httpx.get(f"{edge_service.url}/v1/health", timeout=30).json()
        if health["worker_restarts"] > before["worker_restarts"] and health["status"] == "ok":
            break
        time.sleep(0.2)
    assert health["worker_restarts"] >= before["worker_restarts"] + 1, health


def test_health_reports_python_worker_restarts_inside_the_workers(edge_service):
    url = edge_service.url
    body = {"tasks": [task_json(add_task("add-h"))], "items": [{"task_id": "add-h", "source": ADD}]}
    r = httpx.post(f"{url}/v1/judge", json=body, timeout=120)
    assert r.status_code == 200 and r.json()["items"][0]["verdict"]["stage"] == "OK", r.text
    before = httpx.get(f"{url}/v1/health", timeout=30).json()
    assert before["failed_cleanups"] == 0, before
    servers = [p for w in worker_pids(edge_service.pid()) for p in descendants(w)
               if "pyworker_server" in cmdline(p)]  # fmt: skip
    assert servers, "no warm Python worker under the service's workers"
    for pid in servers:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    body["items"][0]["sample"] = 1
    r = httpx.post(f"{url}/v1/judge", json=body, timeout=120)
    assert r.status_code == 200 and r.json()["items"][0]["verdict"]["stage"] == "OK", r.text
    after = httpx.get(f"{url}/v1/health", timeout=30).json()
    assert after["python_worker_restarts"] >= before["python_worker_restarts"] + 1, after
