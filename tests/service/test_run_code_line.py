"""/run_code's line of waiters is bounded (`max_run_code_waiting`): red team helper-79 queued
slow runs without limit, and another client's print(1) waited 29 s behind 4 of them."""

from __future__ import annotations

import os
import threading
import time

import httpx
import pytest

from perfgym.service.config import ServiceConfig
from perfgym.service.server.process import ServiceProcess


@pytest.fixture(scope="module")
def no_line(tmp_path_factory):  # type: ignore[no-untyped-def]
    state = tmp_path_factory.mktemp("line")
    cfg = ServiceConfig(port=0, state_dir=str(state), workers=1, max_run_code_waiting=0)
    with ServiceProcess(cfg, log=state / "service.log") as svc:
        yield svc


def _run(svc: ServiceProcess, code: str) -> httpx.Response:
    body = {"code": code, "language": "python", "run_timeout": 20}
    return httpx.post(f"{svc.url}/run_code", json=body, timeout=60)


def test_a_request_beyond_the_line_is_429_and_the_slots_still_serve(no_line) -> None:  # type: ignore[no-untyped-def]
    slots = os.cpu_count() or 1
    got: list[int] = []
    busy = [threading.Thread(target=lambda: got.append(_run(no_line, "import time\ntime.sleep(4)\n").status_code))
            for _ in range(slots)]  # fmt: skip
    for t in busy:
        t.start()
    time.sleep(1.5)  # every slot is taken now
    refused = _run(no_line, "print(1)\n")
    assert refused.status_code == 429, refused.text
    assert "busy" in refused.json()["error"] and refused.headers["retry-after"] == "1"
    for t in busy:
        t.join()
    assert got == [200] * slots
    again = _run(no_line, "print(1)\n")
    assert again.status_code == 200 and again.json()["run_result"]["stdout"] == "1\n", again.text
