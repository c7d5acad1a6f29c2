"""`OptimizeConfig`: what one `perfgym optimize` run does (it names the run: same config, same run)."""

from __future__ import annotations

import hashlib
import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from perfgym.optimize.objective import Objective
from perfgym.registry import Kind, get

Start = Literal["baseline", "generate"]


class OptimizeConfig(BaseModel):
    """Settings of the optimisation loop (the model's and the judge's are their own)."""

    model_config = ConfigDict(extra="forbid")

    iterations: int = Field(8, ge=1, le=1000, description="Rounds of proposals per task.")
    objective: Objective = "time"
    strategy: str = Field(
        "greedy", description="A registered strategy (`perfgym list strategies`)."
    )
    n: int = Field(4, ge=1, le=64, description="best-of-n / evolve: proposals per round.")
    start: Start = Field("baseline", description="Start from the baseline, or a generated program.")
    patience: int | None = Field(
        None, ge=1, description="Stop a task after this many rounds without a significant gain."
    )
    max_tokens: int | None = Field(None, ge=1, description="Token budget of the whole run.")
    max_usd: float | None = Field(None, gt=0, description="Dollar budget of the whole run.")
    max_wall_s: float | None = Field(None, gt=0, description="Wall-time budget of one invocation.")
    alpha: float = Field(0.05, gt=0, lt=0.5, description="Significance level of acceptance.")
    confirm: int = Field(
        3,
        ge=0,
        le=10,
        description="A proposal about to be accepted on hidden inputs is judged again on this "
        "many fresh draws of them, and accepted only when correct on every one (a program "
        "wrong on half the task's inputs passed one draw often enough to be kept). 0: one draw.",
    )
    final_check: int = Field(
        8,
        ge=0,
        le=64,
        description="When a task's search ends, its best program is judged for correctness on "
        "this many more fresh draws of the hidden inputs; wrong on any, it is dropped for the "
        "best before it, which is checked the same way (a program right on 6 of 7 of the "
        "task's inputs passed a round's draws and its confirmations in 2 of 2 runs). 0: none.",
    )
    seed: int = 0
    islands: int = Field(3, ge=1, le=32, description="evolve: islands per task.")
    migrate_every: int = Field(3, ge=1, description="evolve: rounds between migrations.")
    concurrency: int = Field(8, ge=1, le=1024, description="Model calls in flight at once.")

    @field_validator("strategy")
    @classmethod
    def _registered(cls, name: str) -> str:
        get(Kind.STRATEGIES, name)  # an unknown name: one line listing the known ones
        return name

    @property
    def per_round(self) -> int:
        return int(get(Kind.STRATEGIES, self.strategy)().per_round(self))

    def run_id(self, suite: str, tasks: list[str], model: str, judge: dict[str, object]) -> str:
        """The run's name: a hash of everything that decides its steps (budgets excluded: a
        resumed run may get more of them)."""
        keep = self.model_dump(exclude={"max_tokens", "max_usd", "max_wall_s", "concurrency",
                                        "iterations", "patience"})  # fmt: skip
        doc = {"suite": suite, "tasks": sorted(tasks), "model": model, "judge": judge, **keep}
        digest = hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode())
        return f"opt-{digest.hexdigest()[:12]}"
