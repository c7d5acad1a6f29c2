"""`check_python_workers(pool)`: what a warm Python worker must guarantee, checked by real calls.

`sandbox.conformance` holds every sandbox backend to its guarantees; the warm workers
(`sandbox.pyworker`), which the judge, ENAMEL's protocol, the task generators and the warm
checks call thousands of times, are held to theirs here: every call a fresh module (nothing a
call sets, imports or patches is seen by the next one on the same worker), nothing left between
calls (files, shared memory, processes), its limits enforced with the status that says which,
statuses that tell the program's failure from the worker's, and a worker that serves on after
a call that killed itself. Each check makes its calls on every worker of the pool, twice where
a leak is the question, so a leak cannot hide on a worker the check did not reach.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from perfgym.errors import ConfigError
from perfgym.run_status import Status
from perfgym.sandbox.conformance import ConformanceError
from perfgym.sandbox.limits import Limits, on_cpu
from perfgym.sandbox.pyworker import CallResult, PythonWorker, PythonWorkerPool

#: What an ordinary check call may use: roomy, so a loaded machine fails none.
ROOMY = Limits(wall_s=30.0, memory_mb=512)
#: The perfgym package as the host sees it: a call must not find its files.
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass(frozen=True)
class WorkerCheck:
    name: str
    fn: Callable[[PythonWorkerPool], None]


def _expect(cond: bool, what: str, r: CallResult | None = None) -> None:
    if not cond:
        extra = (
            ""
            if r is None
            else f" [status={r.status.value} error={r.error[:300]!r} value={r.value!r}]"
        )
        raise ConformanceError(f"python worker: {what}{extra}")


def _each(pool: PythonWorkerPool) -> list[PythonWorker]:
    return list(pool.workers)


def _ok(w: PythonWorker, source: str, args: list[object] | None = None) -> object:
    r = w.call(source, "f", args or [], ROOMY)
    _expect(r.status is Status.OK, "an honest call failed", r)
    return r.value


def fresh_module_per_call(pool: PythonWorkerPool) -> None:
    """A module global, a builtin, a preloaded module's attribute, `sys.modules`, `sys.path`,
    the environment and an `lru_cache` set by one call are gone for the next call on the same
    worker."""
    mark = f"pg_mark_{uuid.uuid4().hex[:8]}"
    source = f"""
import builtins, collections, functools, os, sys
SEEN = [hasattr(builtins, {mark!r}), hasattr(collections, {mark!r}), {mark!r} in sys.modules,
        getattr(sys, {mark!r}, None), os.environ.get({mark!r}), {mark!r} in sys.path]
os.environ[{mark!r}] = 'set'
sys.path.append({mark!r})
setattr(builtins, {mark!r}, 1)
setattr(collections, {mark!r}, 1)
sys.modules[{mark!r}] = sys
setattr(sys, {mark!r}, 'set')
@functools.lru_cache(maxsize=None)
def slow(n):
    return n
def f():
    hits = slow.cache_info().hits
    slow(1)
    return SEEN + [hits]
"""
    for w in _each(pool):
        for _ in range(2):
            got = _ok(w, source)
            _expect(got == [False, False, False, None, None, False, 0],
                    f"a call saw what an earlier call set: {got!r}")  # fmt: skip


def nothing_left_between_calls(pool: PythonWorkerPool) -> None:
    """Files in /tmp and /dev/shm and a process left running by a call are gone for the next."""
    tok = f"pgleft{uuid.uuid4().hex[:10]}"
    leave = f"""
import os, subprocess, sys
def f():
    open('/tmp/{tok}', 'w').write('x')
    try:
        open('/dev/shm/{tok}', 'w').write('x')
    except OSError:
        pass
    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', '{tok}'],
                     start_new_session=True)
    return True
"""
    look = f"""
import os
def f():
    found = [p for p in ('/tmp/{tok}', '/dev/shm/{tok}') if os.path.exists(p)]
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            if b'{tok}' in open(f'/proc/{{pid}}/cmdline', 'rb').read():
                found.append('process ' + pid)
        except OSError:
            pass
    return found
"""
    for w in _each(pool):
        _expect(_ok(w, leave) is True, "the leaving call did not run")
        left = _ok(w, look)
        _expect(left == [], f"the next call found what the last one left: {left!r}")


def limits_enforced(pool: PythonWorkerPool) -> None:
    """A call over its wall limit, its CPU limit or its memory ends with the status saying so,
    and the worker serves the next call."""
    spin = "def f():\n    while True:\n        pass\n"
    sleep = "import time\ndef f():\n    time.sleep(30)\n"
    hog = "def f():\n    x = []\n    while True:\n        x.append(bytearray(1 << 20))\n"
    for w in _each(pool):
        r = w.call(sleep, "f", [], Limits(wall_s=0.5, memory_mb=512))
        _expect(r.status is Status.TIMEOUT, "a call past its wall limit is not a TIMEOUT", r)
        r = w.call(spin, "f", [], on_cpu(0.3, memory_mb=512))
        _expect(r.status is Status.TIMEOUT, "a call past its CPU limit is not a TIMEOUT", r)
        r = w.call(hog, "f", [], Limits(wall_s=30.0, memory_mb=128))
        _expect(r.status is Status.MEMORY_LIMIT, "a call past its memory is not MEMORY_LIMIT", r)
        _expect(_ok(w, "def f():\n    return 1\n") == 1, "the worker did not serve on")


def statuses(pool: PythonWorkerPool) -> None:
    """OK with the value, arguments and result exact; the program's failures (an exception, a
    syntax error, no entry point, an exit or a kill of its own before returning) are the
    program's (never OK, never SANDBOX_ERROR), and the worker serves on after each."""
    args: list[object] = [[1, 2.5, "é", None, True], {"k": (1, 2)}, {3, 4}, b"\x00\xff"]
    echo = "def f(*a):\n    return a\n"
    failing = {
        "raises": "def f():\n    raise ValueError('boom')\n",
        "syntax error": "def f(:\n",
        "no entry point": "def g():\n    return 1\n",
        "exits early": "import os\ndef f():\n    os._exit(0)\n",
        "kills itself": "import os, signal\ndef f():\n    os.kill(os.getpid(), signal.SIGKILL)\n",
    }
    for w in _each(pool):
        got = _ok(w, echo, args)
        _expect(got == tuple(args) and type(got[2]) is set and type(got[3]) is bytes,
                f"arguments or result not kept exactly: {got!r}")  # fmt: skip
        for what, source in failing.items():
            r = w.call(source, "f", [], ROOMY)
            _expect(r.status.is_program_failure, f"a program that {what} is not its failure", r)
        r = w.call(failing["raises"], "f", [], ROOMY)
        _expect("ValueError" in r.error and "boom" in r.error, "the exception is not named", r)
        _expect(_ok(w, "def f():\n    return 2\n") == 2, "the worker did not serve on")


def confined(pool: PythonWorkerPool) -> None:
    """A call runs unprivileged and sees none of the perfgym package's files."""
    probe = f"""
import os
def f():
    return [os.getuid(), os.geteuid(), os.path.exists({os.path.join(PACKAGE, "judge", "judge.py")!r}),
            os.path.exists({os.path.join(PACKAGE, "sandbox", "pyworker", "worker.py")!r})]
"""
    for w in _each(pool):
        got = _ok(w, probe)
        _expect(isinstance(got, list) and len(got) == 4, f"the probe answered {got!r}")
        assert isinstance(got, list)
        _expect(got[0] != 0 and got[1] != 0, f"a call runs as root: {got!r}")
        _expect(got[2:] == [False, False], f"a call sees the perfgym package: {got!r}")


WORKER_CHECKS: tuple[WorkerCheck, ...] = tuple(
    WorkerCheck(f.__name__, f)
    for f in (
        statuses,
        fresh_module_per_call,
        nothing_left_between_calls,
        limits_enforced,
        confined,
    )  # fmt: skip
)


def check_python_workers(pool: PythonWorkerPool, only: list[str] | None = None) -> list[str]:
    """Run every worker check (or those named in `only`) on `pool`; raise `ConformanceError` on
    the first failure (a name in `only` that is no check: `ConfigError`). Returns the names of
    the checks that passed."""
    unknown = sorted(set(only or ()) - {c.name for c in WORKER_CHECKS})
    if unknown:
        raise ConfigError(f"no such worker check: {', '.join(unknown)}; known: "
                          f"{', '.join(c.name for c in WORKER_CHECKS)}")  # fmt: skip
    passed = []
    for check in WORKER_CHECKS:
        if only is not None and check.name not in only:
            continue
        check.fn(pool)
        passed.append(check.name)
    return passed
