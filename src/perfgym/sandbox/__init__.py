"""Isolated, measured execution: `Sandbox.run(command, ...) -> Execution`.

Backends: `BwrapSandbox` (a fresh bubblewrap per run) and `WarmSandbox` (an already-isolated
launcher that forks each run's private namespaces itself; the default).
"""

from perfgym.sandbox.base import WORK_DIR, Bind, Sandbox, SandboxConfig
from perfgym.sandbox.bwrap import BwrapSandbox
from perfgym.sandbox.execution import Execution, Measurement, Status
from perfgym.sandbox.factory import make_sandbox
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.pool import RunRequest, SandboxPool
from perfgym.sandbox.warm import WarmSandbox

__all__ = [
    "WORK_DIR",
    "Bind",
    "BwrapSandbox",
    "Execution",
    "Limits",
    "Measurement",
    "RunRequest",
    "Sandbox",
    "SandboxConfig",
    "SandboxPool",
    "Status",
    "WarmSandbox",
    "make_sandbox",
]
