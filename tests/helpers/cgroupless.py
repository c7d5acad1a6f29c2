"""A warm Python worker started without a cgroup of its own (its calls metered by rusage)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from perfgym.sandbox import worker_cgroup as wc
from perfgym.sandbox.pyworker import PythonWorker


@contextmanager
def cgroupless_worker() -> Iterator[PythonWorker]:
    real = wc.WorkerCgroup.create
    wc.WorkerCgroup.create = classmethod(lambda cls: (None, "turned off by the test"))  # type: ignore[method-assign]
    try:
        w = PythonWorker()
        w.call("def f():\n    return 0\n", "f", [])  # started while create says no
    finally:
        wc.WorkerCgroup.create = real  # type: ignore[method-assign]
    try:
        yield w
    finally:
        w.close()
