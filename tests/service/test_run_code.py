"""POST /run_code, SandboxFusion's API on `perfgym serve`: verl's own `sandbox_fusion` scorer runs
unchanged against it, and hostile requests are contained."""

from __future__ import annotations

import base64
import importlib.util
import sys
from pathlib import Path

import httpx
import pytest

needs_verl = pytest.mark.skipif(importlib.util.find_spec("verl") is None,
                                reason="verl is not installed (pip install -e '.[verl]')")  # fmt: skip

ADD = "```python\nimport sys\na, b = map(int, sys.stdin.read().split())\nprint(a + b)\n```"
CASES = {"inputs": ["1 2", "5 6", "10 -3"], "outputs": ["3", "11", "7"]}


def verl_sandbox_fusion():
    """verl's `sandbox_fusion` package, its files loaded unchanged from the installed verl but
    without running `verl/__init__` (which imports torch and Ray: ~10 s on a loaded machine)."""
    if "verl_sandbox_fusion" in sys.modules:
        return sys.modules["verl_sandbox_fusion"]
    spec = importlib.util.find_spec("verl")
    assert spec is not None and spec.submodule_search_locations
    where = Path(next(iter(spec.submodule_search_locations))) / "utils/reward_score/sandbox_fusion"
    pkg = importlib.util.spec_from_file_location("verl_sandbox_fusion", where / "__init__.py",
                                                 submodule_search_locations=[str(where)])  # fmt: skip
    assert pkg is not None and pkg.loader is not None
    module = importlib.util.module_from_spec(pkg)
    sys.modules["verl_sandbox_fusion"] = module
    pkg.loader.exec_module(module)
    return module


def post(service, body: dict) -> dict:
    r = httpx.post(f"{service.url}/run_code", json=body, timeout=120)
    assert r.status_code == 200, r.text
    return r.json()


@needs_verl
def test_verl_sandbox_fusion_scorer_runs_unchanged(service):
    sandbox_fusion = verl_sandbox_fusion()
    check_correctness = sandbox_fusion.check_correctness

    url = f"{service.url}/run_code"
    score, meta = sandbox_fusion.compute_score(url, None, 1024, ADD, CASES)
    assert score == 1.0 and [m["status"] for m in meta] == ["success"] * 3
    assert all(m["api_response"]["perfgym"]["cpu_s"] is not None for m in meta)
    wrong = ADD.replace("a + b", "a - b")
    assert sandbox_fusion.compute_score(url, None, 1024, wrong, CASES)[0] == pytest.approx(0.0)
    crash = ADD.replace("print(a + b)", "raise SystemExit(3)")
    _, meta = sandbox_fusion.compute_score(url, None, 1024, crash, CASES)
    assert {m["status"] for m in meta} == {"runtime_error"}
    cpp = '#include <cstdio>\nint main(){long a,b;scanf("%ld %ld",&a,&b);printf("%ld\\n",a+b);}'
    res, _ = check_correctness(url, CASES, cpp, timeout=10, language="cpp")
    assert res == [True, True, True]
    res, meta = check_correctness(url, CASES, "int main( {", timeout=10, language="cpp")
    assert res == [-4, -4, -4] and meta[0]["status"] == "compile_error"
    spin = ADD.replace("print(a + b)", "while True: pass")
    res, meta = check_correctness(url, {"inputs": ["1 2"], "outputs": ["3"]}, spin.strip("`python\n"),
                                  timeout=1)  # fmt: skip
    assert res == [-3] and meta[0]["status"] == "timeout"


def test_refused_requests_say_why(service):
    for body, words in [
        ({"code": "print(1)", "language": "php"}, "language 'php' is not run by perfgym"),
        ({"code": "print(1)", "language": "python", "fetch_files": ["/etc/shadow"]},
         "fetch_files: '/etc/shadow' is outside"),
        ({"code": "print(1)", "language": "python", "fetch_files": ["../../etc/passwd"]},
         "fetch_files: '../../etc/passwd' is outside"),
        ({"code": "print(1)", "language": "python",
          "files": {"../escape.txt": base64.b64encode(b"x").decode()}}, "files: '../escape.txt'"),
    ]:  # fmt: skip
        out = post(service, body)
        assert out["status"] == "SandboxError" and words in out["message"], out
        assert out["run_result"] is None  # refused before anything ran


def test_files_in_and_fetch_files_out(service):
    out = post(service, {"code": "d = open('in.txt').read()\nopen('out.txt', 'w').write(d * 2)",
                         "language": "python", "files": {"in.txt": base64.b64encode(b"ab").decode()},
                         "fetch_files": ["out.txt"]})  # fmt: skip
    assert out["status"] == "Success" and base64.b64decode(out["files"]["out.txt"]) == b"abab"


def test_hostile_programs_are_contained(service):
    shadow = post(
        service, {"code": "print(repr(open('/etc/shadow').read()))", "language": "python"}
    )
    try:
        host = Path("/etc/shadow").read_text()
    except OSError:
        host = None
    if host:
        assert host.strip() not in shadow["run_result"]["stdout"]
    bomb = post(service, {"code": "import os\nwhile True:\n    try:\n        os.fork()\n"
                                  "    except OSError:\n        pass", "language": "python",
                          "run_timeout": 2})  # fmt: skip
    assert bomb["status"] == "Failed" and bomb["perfgym"]["limits"]["max_processes"] <= 64
    flood = post(service, {"code": "import sys\nwhile True: sys.stdout.write('x' * 65536)",
                           "language": "python", "run_timeout": 5})  # fmt: skip
    assert flood["status"] == "Failed" and flood["perfgym"]["stdout_truncated"]
    assert len(flood["run_result"]["stdout"]) <= 1 << 20
    assert httpx.get(f"{service.url}/v1/health", timeout=10).status_code == 200


def test_a_cached_compile_error_is_still_a_compile_error(service):
    # The build cache keeps failed builds too: the second request finds it cached, and once said
    # "Finished, return code 0" for the compile, so verl read the first of three concurrent
    # cases as an API error (-1) instead of a compile error (-4).
    body = {"code": "int main( { /* cached-compile-error */", "language": "cpp", "stdin": ""}
    first, second = post(service, body), post(service, body)
    for answer in (first, second):
        assert answer["status"] == "Failed", answer
        assert answer["compile_result"]["status"] == "Finished", answer
        assert answer["compile_result"]["return_code"] == 1 and answer["run_result"] is None
    assert second["perfgym"]["build_cached"] is True


def test_run_code_with_a_relative_state_dir(tmp_path):
    """`perfgym serve --state-dir REL` (and the default, relative too): the state folder is taken
    against the folder the service starts in, so /run_code's build cache works (it answered
    HTTP 500 'build cache root must be absolute' before)."""
    import os
    import signal
    import subprocess
    import time

    from perfgym.service.server.process import free_port

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "perfgym", "serve", "--port", str(port),
                             "--state-dir", "rel-state", "--workers", "1"], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)  # fmt: skip
    try:
        end = time.monotonic() + 90
        while time.monotonic() < end:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            try:
                if httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        body = {"code": "print(int(input()) * 2)", "language": "python", "stdin": "21"}
        r = httpx.post(f"http://127.0.0.1:{port}/run_code", json=body, timeout=120)
        assert r.status_code == 200, r.text
        assert r.json()["run_result"]["stdout"] == "42\n", r.json()
        assert (tmp_path / "rel-state").is_dir()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
