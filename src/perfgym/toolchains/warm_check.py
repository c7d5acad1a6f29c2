"""The build check of an interpreted recipe, run in a warm Python worker instead of a sandbox.

A Python "build" is only a syntax check, and starting it as a fresh sandboxed `python3` costs
~20 ms per candidate, most of it interpreter start-up. The judge already holds warm workers
(`perfgym.sandbox.pyworker`): pre-started interpreters in their own bubblewrap sandbox that
fork a confined child per run (own uid, rlimits from the limits given, /tmp emptied after).
The recipe's `warm_check` is a fixed program; the untrusted source reaches it only on stdin,
so the worker's pristine parent never parses candidate code (it compiles the fixed checker
once), and a source that makes compile() blow up does so in the child, under the build limits.
"""

from __future__ import annotations

import os
import sys

from perfgym.machine import fingerprint
from perfgym.sandbox.execution import Measurement, Status
from perfgym.sandbox.limits import Limits, MiB
from perfgym.sandbox.pyworker import ProgramResult, PythonWorker, PythonWorkerPool
from perfgym.toolchains.build import Build, finished
from perfgym.toolchains.recipe import Recipe
from perfgym.toolchains.version import ToolVersion

Workers = PythonWorkerPool | PythonWorker

#: argv[0] of the check in the worker: as under `python3 -c`, so a traceback names the same file.
CHECK_ARGV0 = "<string>"

#: Larger sources go to the sandboxed check: the request carries the source base64-encoded in
#: JSON, which both the judge process and the worker's parent hold while it is sent (and the
#: check's copy of it must fit the worker's /tmp, 64 MiB by default).
MAX_SOURCE_BYTES = 8 * MiB

_MECHANISMS = {
    "build": "warm Python worker: the recipe's fixed check program in a forked child of a "
    "pre-started sandboxed interpreter (own uid, rlimits), source on stdin",
    "wall": "worker monotonic clock: fork of the check's child to its exit",
    "cpu": "getrusage of the check's reaped processes, user+system together (reported as user: "
    "the worker does not split them)",
    "memory": "wait4 ru_maxrss of the child less the worker's resident size at fork",
    "memory_integral": "not measured in the warm worker (no sampling): 0.0 is no figure",
    "memory_limit": "RLIMIT_AS of the worker's size at fork + the limit (MemoryError)",
    "cpu_limit": "RLIMIT_CPU of the child",
    "isolation": "bubblewrap of the worker: private pid/net/ipc/uts/mount namespaces, "
    "read-only allow-list view, tmpfs /tmp emptied after every run, unprivileged uid",
}


def interpreter(workers: Workers) -> str:
    """The interpreter file the workers run (as `PythonWorker` starts it)."""
    worker = workers.workers[0] if isinstance(workers, PythonWorkerPool) else workers
    return os.path.realpath(worker.config.python or sys.executable)


def unusable(recipe: Recipe, compiler: ToolVersion, workers: Workers, source: bytes) -> str | None:
    """Why `workers` cannot run `recipe`'s build for `source`, or None when they can."""
    if recipe.warm_check is None:
        return f"recipe {recipe.name} has no warm check"
    if len(source) > MAX_SOURCE_BYTES:
        return f"source of {len(source)} bytes is over {MAX_SOURCE_BYTES} for the worker"
    # The check must parse with the very interpreter that will run the program.
    mine, theirs = os.path.realpath(compiler.path), interpreter(workers)
    if mine != theirs:
        return f"the workers run {theirs}, the recipe's {recipe.compiler} is {mine}"
    return None


def check(recipe: Recipe, workers: Workers, source: bytes, base: Build, limits: Limits) -> Build:
    """Run `recipe.warm_check` on `source` in a worker under `limits`: `base` with the outcome.

    SANDBOX_ERROR means the worker failed (ours, never the source's): the caller checks in a
    fresh sandbox instead.
    """
    assert recipe.warm_check is not None
    result = workers.run_program(
        recipe.warm_check,
        stdin=source,
        argv=(CHECK_ARGV0,),
        limits=limits,
        env=dict(recipe.build_env),
    )
    failed = result.status is Status.SANDBOX_ERROR
    return finished(base, result, None if failed else measurement(result))


def measurement(result: ProgramResult) -> Measurement:
    """The check's resources as the worker measured them, saying how."""
    return Measurement(
        wall_s=result.wall_s,
        cpu_user_s=result.cpu_s,
        cpu_system_s=0.0,
        peak_rss_mb=result.peak_rss_mb,
        memory_integral_mb_s=0.0,
        instructions=None,
        instructions_unavailable="not counted in the warm Python worker",
        sample_rate_hz=0.0,
        samples=0,
        mechanisms={**_MECHANISMS, "memory": result.memory_mechanism or _MECHANISMS["memory"]},
        host=fingerprint(),
    )
