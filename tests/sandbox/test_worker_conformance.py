"""The warm Python worker's conformance checks (`sandbox.worker_conformance`) against a real
pool, and proof that the checks are live: a worker that runs calls in one shared process (the
leak a warm worker exists to prevent) fails them."""

from __future__ import annotations

import builtins
import collections
import os
import sys

import pytest

from perfgym.errors import ConfigError
from perfgym.run_status import Status
from perfgym.sandbox.conformance import ConformanceError
from perfgym.sandbox.pyworker import CallResult, PythonWorkerPool
from perfgym.sandbox.worker_conformance import WORKER_CHECKS, check_python_workers


@pytest.fixture(scope="module")
def pool():
    with PythonWorkerPool(1) as p:
        yield p


@pytest.mark.parametrize("check", WORKER_CHECKS, ids=lambda c: c.name)
def test_worker_check(pool, check):
    check.fn(pool)


def test_an_unknown_check_name_is_one_clear_error_and_runs_nothing(pool):
    calls = pool.stats()["calls"]
    with pytest.raises(ConfigError, match="no such worker check: nope; known: statuses"):
        check_python_workers(pool, only=["statuses", "nope"])
    assert pool.stats()["calls"] == calls


def test_the_worker_is_still_healthy_after_every_check(pool):
    assert check_python_workers(pool, only=["statuses"]) == ["statuses"]
    assert pool.stats()["failed_cleanups"] == 0


class _SharedProcess:
    """Not a sandbox: every call exec'd in this process, builtins shared (what a worker that
    reused one interpreter would do). Used only to show the checks catch it."""

    def call(self, source, entry, args=(), limits=None, **_):
        ns: dict = {"__name__": "solution"}
        try:
            exec(compile(source, "solution.py", "exec"), ns)  # noqa: S102 - our own probe code
            return CallResult(status=Status.OK, value=ns[entry](*args))
        except Exception as exc:  # noqa: BLE001
            return CallResult(status=Status.RUNTIME_ERROR, error=repr(exc))


class _LeakyPool:
    workers = [_SharedProcess()]


def test_a_worker_that_reuses_one_interpreter_fails_the_fresh_module_check():
    try:
        with pytest.raises(ConformanceError, match="saw what an earlier call set"):
            check_python_workers(_LeakyPool(), only=["fresh_module_per_call"])  # type: ignore[arg-type]
    finally:  # what the probe set in this process
        mine = lambda n: isinstance(n, str) and n.startswith("pg_mark_")  # noqa: E731
        for ns in (builtins, collections, sys):
            for name in [n for n in vars(ns) if mine(n)]:
                delattr(ns, name)
        for name in [n for n in sys.modules if mine(n)]:
            del sys.modules[name]
        for name in [n for n in os.environ if mine(n)]:
            del os.environ[name]
        sys.path[:] = [p for p in sys.path if not mine(p)]


def test_a_worker_that_runs_as_root_on_the_host_fails_confinement():
    with pytest.raises(ConformanceError, match="root|perfgym package"):
        check_python_workers(_LeakyPool(), only=["confined"])  # type: ignore[arg-type]
