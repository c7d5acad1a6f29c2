"""Rewards on the one registry (`perfgym.registry`, kind rewards): `register_reward`, `get_reward`."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from perfgym.errors import ConfigError
from perfgym.registry import Kind, get, names, register
from perfgym.rewards._base import Reward

Factory = Callable[..., Reward]


def register_reward(name: str, *, replace: bool = False) -> Callable[[Factory], Factory]:
    """Register a reward factory under `name`.

    The factory takes keyword parameters and returns a `Reward`. The decorated factory stamps
    every reward it builds with `name` and the full parameters (defaults filled in), so
    `get_reward(r.name, **r.params)` rebuilds `r`. Unknown parameters raise `ConfigError`.
    """

    def decorate(factory: Factory) -> Factory:
        signature = inspect.signature(factory)

        @functools.wraps(factory)
        def configured(**params: Any) -> Reward:
            try:
                bound = signature.bind(**params)
            except TypeError as exc:
                accepted = ", ".join(signature.parameters)
                raise ConfigError(f"reward {name!r}: {exc}; it accepts: {accepted}") from None
            bound.apply_defaults()
            reward = factory(**bound.arguments)
            reward.name = name
            reward.params = dict(bound.arguments)
            return reward

        return register(Kind.REWARDS, name, replace=replace)(configured)

    return decorate


def derive_reward(
    name: str,
    base: Factory,
    *,
    fixed: Mapping[str, Any] | None = None,
    defaults: Mapping[str, Any] | None = None,
    doc: str,
) -> Factory:
    """Register `name` as `base` with some parameters fixed (an ablation) or re-defaulted (a preset)."""
    raw = inspect.unwrap(base)
    fixed = dict(fixed or {})
    defaults = dict(defaults or {})
    signature = inspect.signature(raw)
    parameters = [
        p.replace(default=defaults.get(p.name, p.default))
        for p in signature.parameters.values()
        if p.name not in fixed
    ]

    def factory(**params: Any) -> Reward:
        return raw(**params, **fixed)

    factory.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    factory.__doc__ = doc
    factory.__name__ = name
    factory.__qualname__ = name
    factory.__module__ = raw.__module__  # so doctest finds the example beside the base reward
    return register_reward(name)(factory)


def get_reward(name: str, **params: Any) -> Reward:
    """Build the reward registered as `name` with `params`."""
    factory: Factory = get(Kind.REWARDS, name)
    return factory(**params)


def list_rewards() -> list[str]:
    """Names of every registered reward, sorted."""
    return names(Kind.REWARDS)


def reward_factory(name: str) -> Factory:
    """The registered factory itself (its docstring documents the reward)."""
    factory: Factory = get(Kind.REWARDS, name)
    return factory
