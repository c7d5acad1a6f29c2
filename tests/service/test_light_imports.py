"""Each room of the service loads only what it uses: the client no server or Ray, the Ray
backend no HTTP at all. Checked in a fresh interpreter, where nothing else was imported first."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SERVER_AND_RAY = {"fastapi", "starlette", "uvicorn", "ray"}
HTTP = {"fastapi", "starlette", "uvicorn", "httpx"}


def _top_level_modules_after(module: str) -> set[str]:
    names = "sorted({m.split('.')[0] for m in sys.modules})"
    code = f"import json, sys, {module}; print(json.dumps({names}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout))


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
