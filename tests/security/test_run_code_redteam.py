"""Red team of POST /run_code: a hostile client must not read what the sandboxed program cannot
(through `fetch_files` and symlinks the program makes), crash the route with odd numbers, or
starve the rest of the service of threads."""

from __future__ import annotations

import base64
import concurrent.futures
import time

import httpx
import pytest

from perfgym.service.config import ServiceConfig
from perfgym.service.server.process import ServiceProcess
from perfgym.service.server.routes.run_code_exec import CodeRunner, RunCodeRequest


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    r = CodeRunner(tmp_path_factory.mktemp("run_code") / "builds", slots=2)
    yield r
    r.close()


def test_fetch_files_does_not_follow_symlinks_out_of_the_run(runner):
    # The collector runs as root inside the run: following the program's symlink let it read
    # /proc/1/environ (the service's environment, PERFGYM_TOKEN included) and root-only files.
    code = ("import os\nos.symlink('/proc/1/environ', 'env')\nos.mkdir('d')\n"
            "os.symlink('/proc/1', 'p')\nopen('ok.txt', 'w').write('fine')")  # fmt: skip
    out = runner.run(RunCodeRequest(code=code, fetch_files=["env", "p/environ", "ok.txt"]))
    assert out.status == "Success", out
    assert "env" not in out.files and "p/environ" not in out.files, out.files
    assert base64.b64decode(out.files["ok.txt"]) == b"fine"


@pytest.mark.parametrize("field", ["memory_limit_MB", "run_timeout", "compile_timeout"])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), -5.0, 1e300])
def test_odd_numbers_are_capped_not_crashing(runner, field, value):
    out = runner.run(RunCodeRequest(code="print(7)", **{field: value}))
    assert out.status == "Success" and out.run_result and out.run_result.stdout == "7\n", out
    limits = out.perfgym["limits"]
    assert 0 < limits["memory_mb"] <= 4096 and 0 < limits["wall_s"] <= 60


def test_a_run_code_flood_leaves_the_service_responsive(tmp_path):
    cfg = ServiceConfig(port=0, state_dir=str(tmp_path / "state"), max_body_bytes=1 << 20,
                        token="red-team-token")  # fmt: skip
    auth = {"Authorization": "Bearer red-team-token"}
    with ServiceProcess(cfg, log=tmp_path / "service.log") as svc:
        body = {"code": "import time\ntime.sleep(4)", "language": "python", "run_timeout": 8}
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "red-team-token"}):
            r = httpx.post(f"{svc.url}/run_code", json={"code": "print(1)"}, headers=headers,
                           timeout=30)  # fmt: skip
            assert r.status_code == 401, (headers, r.text)  # no token, no run

        def flood(_: int) -> None:
            try:
                httpx.post(f"{svc.url}/run_code", json=body, headers=auth, timeout=15)
            except httpx.HTTPError:
                pass

        with concurrent.futures.ThreadPoolExecutor(60) as pool:
            futures = [pool.submit(flood, i) for i in range(60)]
            time.sleep(2.0)  # every request is in: each held a worker thread before the fix
            t0 = time.monotonic()
            r = httpx.get(f"{svc.url}/v1/metrics", headers=auth, timeout=60)
            waited = time.monotonic() - t0
            assert r.status_code == 200
            # Before the fix this waited for ~40 of the 4 s runs, two at a time (> 30 s).
            assert waited < 12, f"/v1/metrics waited {waited:.1f} s behind the /run_code flood"
            svc.stop()  # the flood still queued dies with the service
            for f in futures:
                f.cancel()
