"""`SimulatorConfig`: how the offline simulator builds its quality ladder and reads the curve."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from perfgym.judge.verdict import Stage
from perfgym.metrics.bootstrap import BootstrapConfig

#: The failing rungs RLPF orders below every correct program (Eq. 7): NX < NC < NR < WO.
FAILURE_RUNGS: tuple[Stage, ...] = (Stage.NX, Stage.NC, Stage.NR, Stage.WO)


class SimulatorConfig(BaseModel):
    """Settings of one offline simulation (written into every simulation file)."""

    model_config = ConfigDict(extra="forbid")

    failures: list[Stage] = Field(
        default_factory=lambda: list(FAILURE_RUNGS),
        description="Synthetic failing candidates put at the bottom of every task's quality "
        "ladder, in RLPF's order NX < NC < NR < WO whatever the order given. [] simulates the "
        "task's own solutions only.",
    )
    signal: Literal["reward", "pass"] = Field(
        default="reward",
        description="What the activation curve plots: the reward normalised to [0, 1] by the "
        "reward's declared bounds, or pass = 1[normalised reward >= pass_level].",
    )
    pass_level: float = Field(
        default=0.5,
        gt=0.0,
        le=1.0,
        description="signal='pass': the normalised reward at which a sample counts as passed.",
    )
    bins: int = Field(
        default=10,
        ge=2,
        le=100,
        description="Equal-width quality bins of the activation curve on [0, 1].",
    )
    smooth_window: int = Field(
        default=3,
        ge=1,
        description="Bins (odd) in the centred moving average that is the curve's smoothed trend.",
    )
    pool: Literal["leave_one_out", "all"] = Field(
        default="leave_one_out",
        description="Reference pool handed to pool-based rewards (DMC-Optim percentiles): the "
        "task's other correct solutions, or all of them including the candidate itself.",
    )
    min_solutions: int = Field(
        default=2,
        ge=1,
        description="A task needs this many measured solutions of distinct quality to join "
        "the simulation; fewer and it is skipped with a note.",
    )
    bootstrap: BootstrapConfig = Field(
        default_factory=BootstrapConfig,
        description="Resampling of tasks for the quality correlation's confidence interval.",
    )

    @field_validator("smooth_window")
    @classmethod
    def _odd(cls, v: int) -> int:
        if v % 2 == 0:
            raise ValueError("smooth_window must be odd (a centred window)")
        return v

    @field_validator("failures")
    @classmethod
    def _failures(cls, v: list[Stage]) -> list[Stage]:
        if Stage.OK in v:
            raise ValueError("failures lists failing stages only (NX, NC, NR, WO), not OK")
        if len(set(v)) != len(v):
            raise ValueError("failures lists each stage at most once")
        return sorted(v, key=lambda s: s.rank)
