"""Each verdict's value under every registered reward (defaults; None where a reward needs
columns an audit does not have)."""

from __future__ import annotations

from collections.abc import Sequence

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Verdict


def reward_values(verdicts: Sequence[Verdict]) -> list[dict[str, float | None]]:
    """One mapping per verdict: reward name -> its value over this batch."""
    from perfgym.rewards import get_reward, list_rewards

    out: list[dict[str, float | None]] = [{} for _ in verdicts]
    for name in list_rewards():
        try:
            values = get_reward(name)(list(verdicts))
        except ConfigError:  # needs a column (pool, input code's outcome): not scored here
            values = [None] * len(verdicts)
        for row, value in zip(out, values, strict=True):
            row[name] = value
    return out
