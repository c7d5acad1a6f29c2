"""The settings of the timing checks (drift probes, first-call gap): no sandbox, so a config
that holds them (`JudgeConfig`) imports no engine."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DriftConfig", "FirstCallConfig", "ProbeName"]

ProbeName = Literal["startup", "interpreter", "memory"]
_ALL_PROBES: tuple[ProbeName, ...] = ("startup", "interpreter", "memory")


class DriftConfig(BaseModel):
    """How the drift probes run and when a probe counts as moved."""

    model_config = ConfigDict(extra="forbid")

    probes: list[ProbeName] = Field(
        default_factory=lambda: list(_ALL_PROBES), description="Probe set."
    )
    start_runs: int = Field(7, ge=3, le=100, description="Runs per probe that set its band.")
    check_runs: int = Field(3, ge=1, le=100, description="Runs per probe at each check.")
    min_band: float = Field(
        0.25,
        gt=0,
        le=10,
        description="Smallest band half-width: CPU time alone moves 10-30 % on a shared VM.",
    )
    band_sigmas: float = Field(
        4.0, gt=0, description="Band half-width in robust CVs of the start runs (if wider)."
    )
    reuse_s: float = Field(
        30.0,
        ge=0,
        description="A check this recent (with no measurement since) is reused, so one "
        "check closes one task's measurement and opens the next.",
    )


class FirstCallConfig(BaseModel):
    """How the first-call check runs and when its gap is flagged."""

    model_config = ConfigDict(extra="forbid")

    repeat_calls: int = Field(8, ge=1, le=1000, description="k: extra calls after the first.")
    rounds: int = Field(5, ge=1, le=100, description="Interleaved rounds of the three kinds.")
    gap_ratio: float = Field(
        3.0, gt=1, description="first / repeat at or above this is a caching signature."
    )
    min_first_s: float = Field(
        0.002, ge=0, description="Gaps of first calls shorter than this are below resolution."
    )
