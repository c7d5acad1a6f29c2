"""Sandbox backends on the one registry (kind sandboxes); `make_sandbox(name, config)` builds one."""

from __future__ import annotations

from perfgym.registry import Kind, get, register
from perfgym.sandbox.base import Sandbox, SandboxConfig


@register(Kind.SANDBOXES, "warm")
def _warm(config: SandboxConfig | None) -> Sandbox:
    """Each run forked from an already-isolated launcher (the default; fastest start)."""
    from perfgym.sandbox.warm import WarmSandbox

    return WarmSandbox(config)


@register(Kind.SANDBOXES, "bwrap")
def _bwrap(config: SandboxConfig | None) -> Sandbox:
    """Each run in a fresh bubblewrap sandbox."""
    from perfgym.sandbox.bwrap import BwrapSandbox

    return BwrapSandbox(config)


def make_sandbox(name: str = "warm", config: SandboxConfig | None = None) -> Sandbox:
    """'warm' (default: forked from an already-isolated launcher) or 'bwrap' (fresh per run)."""
    sandbox: Sandbox = get(Kind.SANDBOXES, name)(config)
    return sandbox
