"""The Python build in a warm worker: same outcomes as the sandboxed check, under the limits."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from perfgym.sandbox import Limits, Status
from perfgym.sandbox.pyworker import PythonWorkerPool
from perfgym.tasks.task import Language
from perfgym.toolchains import BUILD_LIMITS, BuildStatus, toolchain
from perfgym.toolchains.version import locate
from perfgym.toolchains.warm_check import MAX_SOURCE_BYTES

from .programs import PROGRAMS

PY = toolchain(Language.PYTHON)
#: compile() of this builds a million nested Attribute nodes (~350 MB) before its recursion
#: check gives up: a cheap way for a source to make a syntax check expensive.
DEEP = "a" + ".b" * 1_000_000 + "\n"

SOURCES = {
    "good": PROGRAMS[Language.PYTHON],
    "syntax": "def f(:\n    pass\n",
    "indent": "x = 1\n  y = 2\n",
    "tab": "def f():\n\tif 1:\n        pass\n",
    "null-byte": "a\x00b\n",
    "return-outside": "return 5\n",
    "bad-utf8": b"\xff\xfe = 1\n",
    "latin-1-cookie": "# -*- coding: latin-1 -*-\nx = '\xe9'\n".encode("latin-1"),
    "bom": "\ufeffprint(2)\n",
    "syntax-warning": "x = 1\nif x is 1:\n    pass\n",
    "deep": DEEP,
}


def _tagged(source: str | bytes, tag: str) -> str | bytes:
    """`source` with a first-line comment: a distinct cache key, the same line structure."""
    if isinstance(source, bytes):
        return f"# {tag}\n".encode() + source
    return f"# {tag}\n{source}"


def _outcome(build):  # type: ignore[no-untyped-def]
    return build.status, build.reason, build.log, build.log_truncated, build.execution_status


@pytest.mark.parametrize("name", list(SOURCES))
def test_worker_and_sandbox_agree(name, sandbox, workers, fresh_cache):
    source = SOURCES[name]
    # The cookie line must stay first: tag it at the end (no error quotes that line).
    tag = (lambda s, t: s + f"# {t}\n".encode()) if name == "latin-1-cookie" else _tagged
    fresh = PY.build(sandbox, tag(source, "sandbox"), fresh_cache)
    warm = PY.build(sandbox, tag(source, "worker"), fresh_cache, workers=workers)
    assert _outcome(warm) == _outcome(fresh), (warm.log, fresh.log)
    assert warm.measurement is not None and fresh.measurement is not None
    assert warm.measurement.mechanisms["build"].startswith("warm Python worker")
    assert "build" not in fresh.measurement.mechanisms
    assert warm.cacheable == fresh.cacheable and not warm.cached


def test_good_source_builds_ok_in_the_worker_and_is_cached(sandbox, workers, fresh_cache):
    source = PROGRAMS[Language.PYTHON]
    build = PY.build(sandbox, source, fresh_cache, workers=workers)
    assert build.status is BuildStatus.OK and build.log == ""
    assert build.artifact_dir is not None
    assert (Path(build.artifact_dir) / "main.py").read_text() == source
    m = build.measurement
    assert m is not None and m.wall_s > 0 and m.cpu_s > 0  # measured (OK: within its limits)
    again = PY.build(sandbox, source, fresh_cache, workers=workers)
    assert again.cached and again.key == build.key and again.measurement == m
    # The artifact runs exactly as one built by the sandboxed check.
    limits = Limits(wall_s=20, memory_mb=512)
    argv, binds = PY.run_command(build, limits=limits)
    run = sandbox.run(argv, binds=binds, limits=limits, stdin="1000\n")
    assert run.status is Status.OK and run.stdout_text.strip().isdigit()


def test_syntax_error_is_a_compile_error_printed_as_py_compile(sandbox, workers, fresh_cache):
    build = PY.build(sandbox, "def f(:\n    pass\n", fresh_cache, workers=workers)
    assert build.status is BuildStatus.COMPILE_ERROR
    assert build.execution_status is Status.RUNTIME_ERROR and build.cacheable
    assert (
        build.log
        == '  File "main.py", line 1\n    def f(:\n          ^\nSyntaxError: invalid syntax\n'
    )
    assert build.reason == "the compiler rejected the source (exit code 1)"


@pytest.mark.parametrize("kind", ["unary", "attribute"])
def test_nesting_limit_is_that_of_python3_main_py(kind, sandbox, workers, fresh_cache, tmp_path):
    """Near the compiler's recursion limit, both checks accept exactly what a fresh
    `python3 main.py` compiles (harmless sources: they assign or are dead code)."""
    make = {
        "unary": lambda n: "x = " + "-" * n + "1\n",
        "attribute": lambda n: "def g():\n    a" + ".b" * n + "\n",
    }[kind]

    def runs(n: int) -> bool:
        (tmp_path / "main.py").write_text(make(n))
        argv = [locate("python3") or "python3", "-I", "-S", str(tmp_path / "main.py")]
        return subprocess.run(argv, capture_output=True, timeout=60).returncode == 0

    lo, hi = 10, 100_000  # runs(lo), not runs(hi)
    assert runs(lo) and not runs(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if runs(mid) else (lo, mid)
    for n, ok in ((lo, True), (hi, False)):
        for how, pool in (("sandbox", None), ("worker", workers)):
            build = PY.build(sandbox, _tagged(make(n), how), fresh_cache, workers=pool)
            assert build.ok is ok, (kind, n, how, build.log[-300:])


def test_compile_over_the_memory_limit_is_a_limit_and_not_cached(sandbox, workers, fresh_cache):
    small = BUILD_LIMITS.model_copy(update={"memory_mb": 150.0})
    build = PY.build(sandbox, DEEP, fresh_cache, workers=workers, limits=small)
    assert build.status is BuildStatus.COMPILE_ERROR
    assert build.execution_status is Status.MEMORY_LIMIT, build.reason
    assert not build.cacheable and fresh_cache.lookup(build.key) is None
    # The worker survives its child's failure and checks the next source.
    assert PY.build(sandbox, "print(1)\n", fresh_cache, workers=workers).ok


def test_compile_over_the_wall_limit_is_a_timeout(sandbox, workers, fresh_cache):
    quick = BUILD_LIMITS.model_copy(update={"wall_s": 0.1, "cpu_s": 0.1})
    build = PY.build(sandbox, DEEP, fresh_cache, workers=workers, limits=quick)
    assert build.status is BuildStatus.COMPILE_ERROR
    assert build.execution_status is Status.TIMEOUT, build.reason


_GROWTH_SCRIPT = """
import json, resource, sys
from perfgym.sandbox.pyworker import PythonWorkerPool
from perfgym.sandbox.warm import WarmSandbox
from perfgym.toolchains import BuildCache, toolchain
cache = BuildCache.at(sys.argv[1])
deep = "a" + ".b" * 1_000_000 + "\\n"
with WarmSandbox(cache.hiding()) as sb, PythonWorkerPool(1, sb.config) as pool:
    tc = toolchain("python")
    assert tc.build(sb, "print(1)\\n", cache, workers=pool).ok  # worker started
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    b = tc.build(sb, deep, cache, workers=pool)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"status": b.status, "log": b.log, "build": b.measurement.mechanisms["build"],
                  "peak_mb": b.measurement.peak_rss_mb, "grew_mb": (after - before) / 1024}))
"""


def test_pathological_source_does_not_grow_the_building_process(cache_root):
    # In a fresh process, whose peak RSS no earlier test has raised already.
    proc = subprocess.run(
        [sys.executable, "-c", _GROWTH_SCRIPT, str(cache_root / "growth")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["status"] == "COMPILE_ERROR"
    assert out["log"].endswith(
        "RecursionError: maximum recursion depth exceeded during compilation\n"
    )
    assert out["build"].startswith("warm Python worker")
    # compile() used hundreds of MB, in the worker's child; the caller grew by its request only.
    assert out["peak_mb"] > 150, out
    assert out["grew_mb"] < 60, out


def _kill_workers_of(pid: int) -> int:
    """SIGKILL every warm-worker bubblewrap that `pid` started (as a crash would)."""
    killed = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid and b"pyworker_server" in cmdline:
            os.kill(int(entry), signal.SIGKILL)
            killed += 1
    return killed


def test_a_worker_dying_mid_check_falls_back_to_the_sandbox(sandbox, fresh_cache):
    with PythonWorkerPool(size=1, config=sandbox.config) as pool:
        assert PY.build(sandbox, "print('warm')\n", fresh_cache, workers=pool).ok
        killer = threading.Timer(0.1, lambda: _kill_workers_of(os.getpid()))
        killer.start()
        t0 = time.monotonic()
        build = PY.build(sandbox, DEEP, fresh_cache, workers=pool)
        killer.join()
        assert time.monotonic() - t0 > 0.1  # the kill landed during the check
        expected = PY.build(sandbox, _tagged(DEEP, "sandbox"), fresh_cache)
        assert _outcome(build) == _outcome(expected)
        assert build.measurement is not None
        note = build.measurement.mechanisms["build"]
        assert note.startswith("fresh sandbox (warm worker not used: the warm worker failed"), note
        # The pool restarts its worker on the next request.
        again = PY.build(sandbox, "print('again')\n", fresh_cache, workers=pool)
        assert again.ok and again.measurement is not None
        assert again.measurement.mechanisms["build"].startswith("warm Python worker")


def test_workers_of_another_interpreter_are_not_used(sandbox, fresh_cache):
    ours = os.path.realpath(locate("python3") or "")
    other = next(
        (
            p
            for p in (shutil.which("python3", path="/usr/bin:/bin"),)
            if p and os.path.realpath(p) != ours
        ),
        None,
    )
    if other is None:
        pytest.skip("no second python3 interpreter on this host")
    config = sandbox.config.model_copy(update={"python": other})
    with PythonWorkerPool(size=1, config=config) as pool:
        build = PY.build(sandbox, "print(1)\n", fresh_cache, workers=pool)
        assert pool.workers[0].calls == 0  # never asked
    assert build.ok and build.measurement is not None
    note = build.measurement.mechanisms["build"]
    assert note.startswith("fresh sandbox (warm worker not used: the workers run"), note


def test_a_source_over_the_worker_cap_is_checked_in_the_sandbox(sandbox, workers, fresh_cache):
    source = "x = 1\n" + "#" * (MAX_SOURCE_BYTES + 1) + "\n"
    calls = workers.workers[0].calls
    build = PY.build(sandbox, source, fresh_cache, workers=workers)
    assert workers.workers[0].calls == calls
    assert build.ok and build.measurement is not None
    assert "is over" in build.measurement.mechanisms["build"]


def test_recipes_without_a_warm_check_ignore_workers(sandbox, workers, fresh_cache):
    tc = toolchain(Language.JAVASCRIPT)
    if (why := tc.missing()) is not None:
        pytest.skip(why)
    calls = workers.workers[0].calls
    build = tc.build(sandbox, "console.log(1)\n", fresh_cache, workers=workers)
    assert build.ok and workers.workers[0].calls == calls
    assert build.measurement is not None and "build" not in build.measurement.mechanisms
