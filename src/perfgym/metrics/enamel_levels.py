"""ENAMEL's level times: what its protocol measures per problem, and the level-limit rule.

`perfgym.enamel.protocol` produces `EnamelProblem`s; `perfgym.metrics.enamel` scores
them (eff@k, pass@k) and re-exports these names.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import ConfigError
from perfgym.tasks.enamel_constants import LEVEL_WEIGHTS
from perfgym.timing.estimators import finite_values

ENAMEL_WEIGHTS: tuple[float, ...] = LEVEL_WEIGHTS


class EnamelSample(BaseModel):
    """One code sample's outcome on one problem."""

    model_config = ConfigDict(extra="forbid")

    correct: bool = Field(description="False: a wrong answer or an error on any test.")
    level_times_s: list[float | None] = Field(
        description="Per level, t_j (max over the level's tests of the HL time); None where the "
        "level timed out. Levels after a timeout were never run and must be None too."
    )


class EnamelProblem(BaseModel):
    """One problem: the reference's level times, the level limits and the samples."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    reference_times_s: list[float] = Field(description="r_j per level.")
    level_limits_s: list[float] = Field(description="T_j per level (see enamel_level_limits).")
    samples: list[EnamelSample]


def enamel_level_limits(
    reference_times_s: Sequence[float],
    weights: Sequence[float] = ENAMEL_WEIGHTS,
    timeout_factor: float = 2.0,
) -> list[float]:
    """ENAMEL's limits: T = α · (largest reference time over weighted levels), every level."""
    if len(reference_times_s) != len(weights):
        raise ConfigError("enamel: one reference time per level is needed")
    if not math.isfinite(timeout_factor) or timeout_factor <= 1.0:
        raise ConfigError(f"enamel: timeout_factor {timeout_factor!r} must be a number > 1")
    refs = finite_values(reference_times_s, "enamel reference times")
    weighted = [r for r, w in zip(refs, weights, strict=True) if w > 0]
    if not weighted:
        raise ConfigError("enamel: no level has a positive weight")
    return [timeout_factor * max(weighted)] * len(weights)
