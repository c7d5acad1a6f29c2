"""The clients' shared core without any I/O: its exchanges are driven here by hand, step by
step, as `ServiceClient` and `AsyncServiceClient` drive them over HTTP."""

from __future__ import annotations

import httpx
import pytest

from perfgym.service.client import ServiceError, ServiceUnavailable
from perfgym.service.client.base import ClientCore, Pause, Send

# Not `alone`: nothing here runs or times anything (the exchanges are driven by hand).


def _response(status: int, body: dict[str, object], **headers: str) -> httpx.Response:
    return httpx.Response(status, json=body, headers=headers)


def test_a_busy_service_is_retried_after_its_retry_after_then_answers() -> None:
    core = ClientCore("http://svc/", token="t")
    steps = core._call("GET", "/v1/metrics")
    assert next(steps) == Send("GET", "/v1/metrics")
    assert steps.send(_response(429, {"error": "full"}, **{"Retry-After": "2"})) == Pause(2.0)
    assert steps.send(None) == Send("GET", "/v1/metrics")
    with pytest.raises(StopIteration) as done:
        steps.send(_response(200, {"ok": True}))
    assert done.value.value.json() == {"ok": True}
    assert (
        core.retried == 1
        and core.url == "http://svc"
        and core.headers["Authorization"] == "Bearer t"
    )


def test_a_refusal_is_a_service_error_and_is_not_retried() -> None:
    steps = ClientCore("http://svc")._call("POST", "/v1/judge", json={})
    next(steps)
    with pytest.raises(ServiceError) as err:
        steps.send(_response(422, {"error": "invalid request: items"}))
    assert err.value.status == 422 and err.value.message == "invalid request: items"


def test_an_unreachable_service_is_unavailable_once_the_retry_period_is_spent() -> None:
    steps = ClientCore("http://svc", retry_for_s=0.0)._call("GET", "/v1/metrics")
    next(steps)
    with pytest.raises(ServiceUnavailable, match="ConnectError"):
        steps.send(httpx.ConnectError("refused"))
