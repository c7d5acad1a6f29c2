"""The service against a hostile client (red team helper-79), on a real `perfgym serve` with a
token: a request without the token is refused before its body is read; a connection that
never finishes its request's head is closed; a raw run may not ask for more than the service's
ceiling nor outlive its request's deadline; JSON nested too deeply and text with a lone
surrogate get a 4xx, never a 500."""

from __future__ import annotations

import json
import socket
import time

import httpx
import pytest

from perfgym.service.config import ServiceConfig
from perfgym.service.server.process import ServiceProcess

TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):  # type: ignore[no-untyped-def]
    state = tmp_path_factory.mktemp("hostile")
    cfg = ServiceConfig(port=0, state_dir=str(state), token=TOKEN, head_timeout_s=1.0,
                        judge={"repeats": 1}, workers=1)  # fmt: skip
    with ServiceProcess(cfg, log=state / "service.log") as svc:
        yield svc


def _connect(svc: ServiceProcess) -> socket.socket:
    s = socket.create_connection((svc.config.host, svc.config.port), timeout=10)
    s.settimeout(10)
    return s


def _read_all(s: socket.socket) -> bytes | None:
    """What the server sends until it closes the connection; None if it keeps it open."""
    out = b""
    while True:
        try:
            chunk = s.recv(65536)
        except TimeoutError:
            return None
        except ConnectionResetError:
            break
        if not chunk:
            break
        out += chunk
    return out


def test_a_request_without_the_token_is_refused_before_its_body(guarded) -> None:  # type: ignore[no-untyped-def]
    """Headers announcing a 30 MiB body, and 10 bytes of it: without the token the answer is an
    immediate 401 (the server buffered 32 MiB per stalled upload before: 30 took 1.1 GiB)."""
    s = _connect(guarded)
    try:
        s.sendall(b"POST /v1/judge HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 31457280\r\n\r\n" + b"{" * 10)  # fmt: skip
        start = time.monotonic()
        head = s.recv(4096)
        assert head.startswith(b"HTTP/1.1 401"), head[:200]
        assert time.monotonic() - start < 5
    finally:
        s.close()


def test_the_schema_pages_need_the_token_too(guarded) -> None:  # type: ignore[no-untyped-def]
    for path in ("/openapi.json", "/docs", "/redoc", "/v1/health"):
        assert httpx.get(guarded.url + path, timeout=10).status_code == 401, path
    assert httpx.get(guarded.url + "/openapi.json", headers=AUTH, timeout=10).status_code == 200


def test_a_connection_that_never_finishes_its_head_is_closed(guarded) -> None:  # type: ignore[no-untyped-def]
    """`GET /v1/hea` and nothing more, and a slow trickle of a head: both closed after the
    head deadline (1 s here), and a good request is still answered meanwhile."""
    stalled, trickled = _connect(guarded), _connect(guarded)
    try:
        stalled.sendall(b"GET /v1/hea")
        start = time.monotonic()
        for ch in b"GET /v1/health HTTP/1.1\r\nHost: x\r\n":
            try:
                trickled.sendall(bytes([ch]))
            except OSError:
                break  # closed under it: what is wanted
            time.sleep(0.1)
        assert httpx.get(guarded.url + "/v1/health", headers=AUTH, timeout=10).status_code == 200
        assert _read_all(stalled) == b""  # closed without an answer
        assert time.monotonic() - start < 9
        assert _read_all(trickled) == b""
    finally:
        stalled.close()
        trickled.close()


def _exec(svc: ServiceProcess, limits: dict, **extra: object) -> httpx.Response:
    body = {"requests": [{"command": ["true"], "limits": limits}], **extra}
    return httpx.post(svc.url + "/v1/executions", json=body, headers=AUTH, timeout=30)


def test_a_raw_run_is_held_to_the_ceiling_and_to_its_deadline(guarded) -> None:  # type: ignore[no-untyped-def]
    r = _exec(guarded, {"wall_s": 50, "cpu_s": 1}, deadline_s=2)
    assert r.status_code == 422 and "deadline of 2 s" in r.json()["error"], r.text
    r = _exec(guarded, {"memory_mb": 1_000_000})
    assert r.status_code == 422 and "limits.memory_mb" in r.json()["error"], r.text
    r = _exec(guarded, {"stdout_bytes": 1 << 40})
    assert r.status_code == 422 and "ceiling" in r.json()["error"], r.text
    ok = _exec(guarded, {"wall_s": 5}, wait=True)
    assert ok.status_code == 200, ok.text
    assert ok.json()["items"][0]["execution"]["exit_code"] == 0, ok.text


def _nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


def test_deep_json_and_lone_surrogates_get_a_4xx(guarded) -> None:  # type: ignore[no-untyped-def]
    body = {"items": [{"suite": "perfgym-core", "task_id": "py-lis-dp", "source": "print(1)"}],
            "columns": {"deep": _nested(600)}}  # fmt: skip
    r = httpx.post(guarded.url + "/v1/judge", content=json.dumps(body), headers=AUTH, timeout=30)
    assert 400 <= r.status_code < 500, (r.status_code, r.text[:300])
    raw = b'{"code": "print(1)", "language": "python", "stdin": "\\ud800"}'
    r = httpx.post(guarded.url + "/run_code", content=raw, headers={**AUTH,
                   "Content-Type": "application/json"}, timeout=30)  # fmt: skip
    assert 400 <= r.status_code < 500, (r.status_code, r.text[:300])
    assert httpx.get(guarded.url + "/v1/health", headers=AUTH, timeout=10).status_code == 200
