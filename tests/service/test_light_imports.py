"""Each room of the service loads only what it uses: the client no server or Ray, the Ray
backend no HTTP at all. Checked in a fresh interpreter, where nothing else was imported first."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SERVER_AND_RAY = {"fastapi", "starlette", "uvicorn", "ray"}
HTTP = {"fastapi", "starlette", "uvicorn", "httpx"}


def _modules_after(module: str) -> set[str]:
    code = f"import json, sys, {module}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout))


def _top_level_modules_after(module: str) -> set[str]:
    return {name.split(".")[0] for name in _modules_after(module)}


@pytest.mark.parametrize(
    "module", ["perfgym.service.client", "perfgym.service.client.base", "perfgym.service.backend"]
)
def test_the_client_loads_no_server_and_no_ray(module: str) -> None:
    assert _top_level_modules_after(module) & SERVER_AND_RAY == set()


@pytest.mark.parametrize(
    "module", ["perfgym.service.ray_backend", "perfgym.service.workers.worker_main"]
)
def test_ray_and_the_worker_processes_load_no_http(module: str) -> None:
    assert _top_level_modules_after(module) & HTTP == set()


@pytest.mark.parametrize("module", ["perfgym.judge.backend", "perfgym.store.replay"])
def test_the_judging_interface_and_the_store_load_nothing_of_the_service(module: str) -> None:
    assert {m for m in _modules_after(module) if m.startswith("perfgym.service")} == set()
