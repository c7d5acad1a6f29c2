"""Rewards of a finished judge job: the requested reward over the verdicts it got."""

from __future__ import annotations

from typing import Any

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Verdict
from perfgym.rewards import RewardOutput, get_reward
from perfgym.service.models import RewardSpec


def check_reward_request(spec: RewardSpec, columns: dict[str, list[Any]], n_items: int) -> None:
    """A judge request's reward, checked at submission: it exists, takes these parameters, and
    has the columns it needs, one value per item."""
    reward = get_reward(spec.name, **spec.params)  # ConfigError names what is wrong
    for name, values in columns.items():
        if len(values) != n_items:
            raise ConfigError(f"column {name!r} has {len(values)} entries for {n_items} items")
    for need in reward.requires:
        if not any(n in columns for n in need.split("|")):
            wanted = " or ".join(repr(n) for n in need.split("|"))
            raise ConfigError(f"reward {spec.name!r} needs the column {wanted}, one per item")


def job_rewards(
    spec: RewardSpec, columns: dict[str, list[Any]], verdicts: list[Verdict | None]
) -> list[dict[str, Any] | None]:
    """One RewardOutput (as JSON) per item. Items without a verdict (deadline) get None with a
    reason; the reward sees only the verdicts that exist, with their columns."""
    have = [i for i, v in enumerate(verdicts) if v is not None]
    outputs: list[dict[str, Any] | None] = [
        RewardOutput(value=None, reason="no verdict (deadline)").model_dump(mode="json")
    ] * len(verdicts)
    if not have:
        return outputs
    reward = get_reward(spec.name, **spec.params)
    cols = {k: [v[i] for i in have] for k, v in columns.items()}
    scored = reward.score([v for v in verdicts if v is not None], **cols)
    for i, out in zip(have, scored, strict=True):
        outputs[i] = out.model_dump(mode="json")
    return outputs
