"""Isolated, measured execution: `Sandbox.run(command, ...) -> Execution`.

Backends: `BwrapSandbox` (a fresh bubblewrap per run) and `WarmSandbox` (an already-isolated
launcher that forks each run's private namespaces itself; the default).

Names load on first use, so the data types a run asks and returns (`Limits`, `RunRequest`,
`Execution`: the remote client's wire format) load without the engine.
"""

from typing import TYPE_CHECKING

from perfgym._lazy import exports_of, lazy_exports

if TYPE_CHECKING:
    from perfgym.sandbox.base import WORK_DIR, Sandbox, SandboxConfig
    from perfgym.sandbox.bind import Bind
    from perfgym.sandbox.bwrap import BwrapSandbox
    from perfgym.sandbox.execution import Execution, Measurement, Status
    from perfgym.sandbox.factory import make_sandbox
    from perfgym.sandbox.limits import Limits
    from perfgym.sandbox.pool import SandboxPool
    from perfgym.sandbox.run_request import RunRequest
    from perfgym.sandbox.warm import WarmSandbox

_EXPORTS = exports_of(
    {
        "perfgym.sandbox.base": ("WORK_DIR", "Sandbox", "SandboxConfig"),
        "perfgym.sandbox.bind": ("Bind",),
        "perfgym.sandbox.bwrap": ("BwrapSandbox",),
        "perfgym.sandbox.execution": ("Execution", "Measurement", "Status"),
        "perfgym.sandbox.factory": ("make_sandbox",),
        "perfgym.sandbox.limits": ("Limits",),
        "perfgym.sandbox.pool": ("SandboxPool",),
        "perfgym.sandbox.run_request": ("RunRequest",),
        "perfgym.sandbox.warm": ("WarmSandbox",),
    }
)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

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
