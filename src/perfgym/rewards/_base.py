"""`Reward` and `RewardOutput`: a configured, named, pure batch function of verdicts."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Stage, Verdict

Relation = Literal["<", "<=", "=="]
"""How a reward orders two consecutive rungs of the canonical staircase."""

RUNGS: tuple[str, ...] = ("NX", "NC", "NR", "WO", "correct", "faster", "reference")
"""RLPF's staircase (Eq. 7): NX < NC < NR < WO < correct < faster-than-baseline < reference-or-better."""

ScoreFn = Callable[[Sequence[Verdict], Mapping[str, Sequence[Any]]], list["RewardOutput"]]


class RewardOutput(BaseModel):
    """One verdict's reward with the parts it was made of, for logging."""

    model_config = ConfigDict(extra="forbid")

    value: float | None = Field(
        description="The reward; None when the verdict cannot be scored (never a silent 0.0)."
    )
    stage: Stage | None = Field(default=None, description="The verdict's stage (NX/NC/NR/WO/OK).")
    components: dict[str, float | bool | None] = Field(
        default_factory=dict, description="Named parts, e.g. cgre, fbr, rbr, shaping, q, g."
    )
    reason: str = Field(
        default="", description="Why the value is None, or which special rule applied."
    )
    decision: str = Field(
        default="",
        description="How the speed claims were decided: the rule ('significant' or 'strict') "
        "and, per comparison, how and what it found, e.g. 'significant: baseline tie "
        "(same-source), reference slower (paired-t)'. Empty where no speed claim was made.",
    )


class Reward:
    """A configured reward. `reward(verdicts, **columns)` returns one float (or None) per verdict.

    Built by a registered factory (`get_reward(name, **params)`); `name` and `params` rebuild
    it. Columns are per-verdict sequences (stored measurements, the input code's outcome, ...);
    columns a reward does not read are ignored, so a trainer may pass all of its dataset columns.
    """

    def __init__(
        self,
        score_fn: ScoreFn,
        *,
        bounds: tuple[float, float],
        order: tuple[Relation, ...] | None = None,
        requires: tuple[str, ...] = (),  # "a|b" = either column
        accepts: tuple[str, ...] = (),
        name: str = "",
        params: Mapping[str, Any] | None = None,
    ) -> None:
        if order is not None and len(order) != len(RUNGS) - 1:
            raise ConfigError(f"order needs {len(RUNGS) - 1} relations, got {len(order)}")
        self._score_fn = score_fn
        self.bounds = bounds
        self.order = order
        self.requires = requires
        self.accepts = accepts
        self.name = name
        self.params: dict[str, Any] = dict(params or {})

    def __call__(self, verdicts: Sequence[Verdict], **columns: Sequence[Any]) -> list[float | None]:
        return [out.value for out in self.score(verdicts, **columns)]

    def score(self, verdicts: Sequence[Verdict], **columns: Sequence[Any]) -> list[RewardOutput]:
        """Score every verdict; the outputs carry components and reasons."""
        batch = list(verdicts)
        for spec in self.requires:
            # "a|b": either column will do.
            if all(columns.get(name) is None for name in spec.split("|")):
                wanted = " or ".join(repr(n) for n in spec.split("|"))
                raise ConfigError(
                    f"reward {self.name or '?'!r} needs the column {wanted} "
                    f"(one entry per verdict); see docs/rewards.md"
                )
        read: dict[str, Sequence[Any]] = {}
        names = [n for spec in self.requires for n in spec.split("|")] + list(self.accepts)
        for column in names:
            values = columns.get(column)
            if values is None:
                continue
            if len(values) != len(batch):
                raise ConfigError(
                    f"column {column!r} has {len(values)} entries for {len(batch)} verdicts"
                )
            read[column] = values
        outputs = self._score_fn(batch, read)
        for out in outputs:
            # A reward that produced NaN/inf has a bug; never let it reach a trainer.
            if out.value is not None and not math.isfinite(out.value):
                raise ValueError(f"reward {self.name!r} produced a non-finite value {out.value}")
        return outputs

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"Reward({self.name}: {args})"


def make_config(model: type[BaseModel], **params: Any) -> Any:
    """Validate parameters into a config model; bad values become one clear ConfigError."""
    try:
        return model(**params)
    except ValidationError as exc:
        raise ConfigError(f"{model.__name__}: {exc}") from None
