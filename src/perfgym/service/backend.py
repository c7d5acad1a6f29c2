"""The 'service' and 'ray' judge backends on the registry (`perfgym.judge.backend.get_backend`
builds them); each imports its client only when one is built."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from perfgym.errors import ConfigError
from perfgym.registry import Kind, register

if TYPE_CHECKING:
    from perfgym.judge.backend import BackendOptions, JudgeBackend
    from perfgym.judge.config import JudgeConfig


@register(Kind.BACKENDS, "service")
def service(config: JudgeConfig, options: BackendOptions) -> JudgeBackend:
    """A `perfgym serve` at --url (its own judge configuration applies)."""
    if not options.url:
        raise ConfigError("the service backend needs a URL (--url http://host:port)")
    from perfgym.service.client import ServiceClient

    more: dict[str, Any] = {}
    if options.retry_for_s is not None:
        more["retry_for_s"] = options.retry_for_s
    if options.deadline_s is not None:
        more["deadline_s"] = options.deadline_s
    return ServiceClient(options.url, token=options.token, **more)


@register(Kind.BACKENDS, "ray")
def ray(config: JudgeConfig, options: BackendOptions) -> JudgeBackend:
    """A Ray cluster at --address (or a local one) judging with this configuration."""
    from perfgym.service.ray_backend import RayJudge

    return RayJudge(config, address=options.address)
