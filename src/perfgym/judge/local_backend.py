"""The 'local' judge backend on the registry: a `Judge` in this process (the engine loads when
one is built, never when the name is looked up)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from perfgym.registry import Kind, register

if TYPE_CHECKING:
    from perfgym.judge.backend import BackendOptions, JudgeBackend
    from perfgym.judge.config import JudgeConfig


@register(Kind.BACKENDS, "local")
def local(config: JudgeConfig, options: BackendOptions) -> JudgeBackend:
    """A `Judge` on this machine, with this configuration."""
    from perfgym.judge.judge import Judge

    return Judge(config)
