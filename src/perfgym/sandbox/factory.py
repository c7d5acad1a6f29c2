"""`make_sandbox(name, config)`: build a sandbox backend by name."""

from __future__ import annotations

from perfgym.errors import ConfigError
from perfgym.sandbox.base import Sandbox, SandboxConfig

BACKENDS = ("warm", "bwrap")


def make_sandbox(name: str = "warm", config: SandboxConfig | None = None) -> Sandbox:
    """'warm' (default: forked from an already-isolated launcher) or 'bwrap' (fresh per run)."""
    if name == "warm":
        from perfgym.sandbox.warm import WarmSandbox

        return WarmSandbox(config)
    if name == "bwrap":
        from perfgym.sandbox.bwrap import BwrapSandbox

        return BwrapSandbox(config)
    raise ConfigError(f"unknown sandbox backend {name!r}; choose one of {', '.join(BACKENDS)}")
