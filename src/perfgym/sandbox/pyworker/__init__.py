"""Warm Python workers: already-isolated interpreters that fork a fresh child per call.

For function-level tasks (thousands of calls per RL step) starting an interpreter per call
dominates the cost. A `PythonWorker` is one long-lived bubblewrap holding a pristine
interpreter (`_inside/pyworker_server.py`) that forks a request process per call, which
reads that call's request alone and exits with it: no process that runs a candidate ever held
another call's source, test code or reply. Each `call` forks from it an unprivileged child that runs
the program's module in a fresh namespace and calls its entry point, and each `run_program`
forks one that runs a whole stdio program as `python3 prog.py` would, and each `check_call`
runs a candidate against an assertion oracle's test code in two processes (the test process
alone writes the verdict). Nothing a call leaves behind (files, module state, processes) is
visible to the next call: a call whose leftovers cannot be cleaned fails, and its worker is
restarted (`restarts`, `failed_cleanups`). Its environment is the programs' default, never
this host's. Each worker runs in a cpu-accounting cgroup of its
own (`worker_cgroup`), so CPU hidden in processes nobody waited for is counted.

The package: `worker` (one `PythonWorker`: its bubblewrap, start, requests, restarts),
`pool` (`PythonWorkerPool`), `framing` (the socket's frames); the server inside the sandbox
is `sandbox/_inside/pyworker_server.py`.
"""

from __future__ import annotations

from perfgym.sandbox.pyworker.pool import PythonWorkerPool
from perfgym.sandbox.pyworker.worker import PythonWorker
from perfgym.sandbox.worker_messages import CallResult, ProgramResult

__all__ = ["CallResult", "ProgramResult", "PythonWorker", "PythonWorkerPool"]
