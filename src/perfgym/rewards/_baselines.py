"""Simple reward baselines: RLVR, runtime-only (paper 000) and raw-duration maps (paper 003 §D.5)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Stage, Verdict
from perfgym.rewards._base import Reward, RewardOutput, make_config
from perfgym.rewards._durations import role_durations, seconds_or_reason
from perfgym.rewards._registry import register_reward
from perfgym.rewards._speed import decided
from perfgym.timing.decision import DECISIONS, Decision
from perfgym.timing.result import is_positive_seconds


def _gate(verdict: Verdict) -> RewardOutput | None:
    """The shared first step: None for infra errors, 0.0 for any failure, else go on."""
    if verdict.infra_error:
        return RewardOutput(value=None, stage=verdict.stage, reason="infra_error")
    if verdict.stage is not Stage.OK:
        return RewardOutput(value=0.0, stage=verdict.stage, components={"correct": False})
    return None


def _hid(verdict: Verdict) -> RewardOutput | None:
    """A correct program that hid time from the clock scores 0.0: no speed credit, never None."""
    hid = verdict.hid_time
    if not hid:
        return None
    return RewardOutput(
        value=0.0,
        stage=verdict.stage,
        components={"correct": True},
        reason=f"candidate hid time from the clock ({', '.join(hid)}): no speed credit",
    )


@register_reward("rlvr")
def rlvr() -> Reward:
    """RLVR's binary correctness reward (paper 000, §Baseline setup and Fig. 1): 1 if correct, else 0.

    No performance term and no failure-mode shaping. An infrastructure error: None.

    >>> from perfgym.judge.verdict import Stage, Verdict
    >>> rlvr()([Verdict(task_id="t", stage=Stage.OK), Verdict(task_id="t", stage=Stage.NC)])
    [1.0, 0.0]
    """

    def score(
        verdicts: Sequence[Verdict], columns: Mapping[str, Sequence[Any]]
    ) -> list[RewardOutput]:
        return [
            _gate(v) or RewardOutput(value=1.0, stage=v.stage, components={"correct": True})
            for v in verdicts
        ]

    return Reward(score, bounds=(0.0, 1.0), order=("==", "==", "==", "<", "==", "=="))


@register_reward("runtime_only")
def runtime_only(decision: Decision = "significant") -> Reward:
    """RLPF's runtime-only baseline (paper 000, Fig. 1 'speedup reward'): R = clip(1 − Tc/Tb, 0, 1).

    Failures score 0 (Fig. 1: 'fail R=0'); a correct program no faster than the baseline also
    scores 0. Tc, Tb: the verdict's candidate and baseline estimates (column `baseline_s`
    replaces Tb). Missing or degraded timing of a correct program, or an infra error: None.
    `decision="significant"` (the default): a candidate the comparison does not find faster
    (`perfgym.timing.decision.speed_call`) scores 0, so noise earns nothing; "strict": the
    formula on the estimates.

    >>> from perfgym.judge.verdict import Stage, Timing, Verdict
    >>> v = Verdict(task_id="t", stage=Stage.OK, candidate=Timing(estimate_s=0.25),
    ...             baseline=Timing(estimate_s=1.0))
    >>> runtime_only()([v])
    [0.75]
    """

    if decision not in DECISIONS:
        raise ConfigError(f"runtime_only: decision must be one of {DECISIONS}, got {decision!r}")

    def one(v: Verdict, overrides: dict[str, float | None]) -> RewardOutput:
        gated = _gate(v) or _hid(v)
        if gated is not None:
            return gated
        times, why = role_durations(v, ("candidate", "baseline"), overrides)
        if not times:
            return RewardOutput(value=None, stage=v.stage, reason=f"timing missing: {why}")
        ratio = times["candidate"] / times["baseline"]
        calls = decided(v, decision, overrides, ("baseline",))
        value = min(1.0, max(0.0, 1.0 - ratio))
        if decision == "significant" and not calls.faster("baseline"):
            value = 0.0
        return RewardOutput(value=value, stage=v.stage, components={"tc_over_tb": ratio},
                            decision=calls.text)  # fmt: skip

    def score(
        verdicts: Sequence[Verdict], columns: Mapping[str, Sequence[Any]]
    ) -> list[RewardOutput]:
        base = columns.get("baseline_s")
        return [
            one(v, {"baseline": base[i]} if base is not None else {})
            for i, v in enumerate(verdicts)
        ]

    return Reward(
        score, bounds=(0.0, 1.0), order=("==", "==", "==", "<=", "<", "<"), accepts=("baseline_s",)
    )


class RawDurationConfig(BaseModel):
    """Parameters of DMC-Optim's raw-duration maps (paper 003, §D.5)."""

    model_config = ConfigDict(extra="forbid")

    cap_s: float = Field(
        default=10.0,
        gt=0,
        description="Duration that maps to 0: the 10 s hard limit of DMC-Optim's CES.",
    )
    duration: Literal["mean_workload", "estimate"] = Field(
        default="mean_workload",
        description="'mean_workload': mean of Timing.per_workload_s (timed-out workloads count "
        "as cap_s); 'estimate': Timing.estimate_s.",
    )
    log_scale_s: float = Field(
        default=1.0, gt=0, description="Log map only: the unit s in log1p(t/s)."
    )


def _mean_duration(cfg: RawDurationConfig, v: Verdict) -> tuple[float | None, str]:
    if cfg.duration == "estimate":
        return seconds_or_reason(v.candidate, "candidate")
    timing = v.candidate
    if timing is None or not timing.ok:
        return seconds_or_reason(timing, "candidate")
    per = dict(timing.per_workload_s)
    bad = [k for k, s in per.items() if not is_positive_seconds(s)]
    if bad:
        return None, f"candidate per-workload durations not positive finite: {sorted(bad)}"
    for test in v.tests:
        if test.timed_out:
            per[test.id] = cfg.cap_s
    if not per:
        return None, "candidate has no per-workload durations"
    return sum(min(s, cfg.cap_s) for s in per.values()) / len(per), ""


def _raw(cfg: RawDurationConfig, mapping: Literal["linear", "log"]) -> Reward:
    def one(v: Verdict) -> RewardOutput:
        gated = _gate(v) or _hid(v)
        if gated is not None:
            return gated
        # The baseline's (or reference's) own program, changed only in comments, is that
        # program: its duration is the role's, so a copy's noise earns nothing either way.
        role = next((getattr(v, r) for r in ("baseline", "reference")
                     if r in v.same_source and getattr(v, r) is not None and getattr(v, r).ok),
                    None)  # fmt: skip
        mean, why = _mean_duration(
            cfg, v if role is None else v.model_copy(update={"candidate": role})
        )
        if mean is None:
            return RewardOutput(value=None, stage=v.stage, reason=f"timing missing: {why}")
        t = min(mean, cfg.cap_s)
        if mapping == "linear":
            value = 1.0 - t / cfg.cap_s
        else:
            value = 1.0 - math.log1p(t / cfg.log_scale_s) / math.log1p(cfg.cap_s / cfg.log_scale_s)
        value = min(1.0, max(0.0, value))
        return RewardOutput(value=value, stage=v.stage, components={"mean_s": mean})

    def score(
        verdicts: Sequence[Verdict], columns: Mapping[str, Sequence[Any]]
    ) -> list[RewardOutput]:
        return [one(v) for v in verdicts]

    return Reward(score, bounds=(0.0, 1.0), order=("==", "==", "==", "<=", "<=", "<="))


@register_reward("linear")
def linear(
    cap_s: float = 10.0,
    duration: Literal["mean_workload", "estimate"] = "mean_workload",
) -> Reward:
    """DMC-Optim's linear raw-duration map (paper 003, §D.5): R = c · clip(1 − t/cap, 0, 1).

    c is correctness, t the candidate's mean per-workload duration (timeouts count as cap), cap
    the 10 s CES hard limit. The paper's example: a correct 1 s solution scores 0.9. Failures 0;
    missing timing of a correct program or an infra error: None.

    >>> from perfgym.judge.verdict import Stage, Timing, Verdict
    >>> v = Verdict(task_id="t", stage=Stage.OK,
    ...             candidate=Timing(estimate_s=2.0, per_workload_s={"a": 0.5, "b": 1.5}))
    >>> linear()([v])
    [0.9]
    """
    return _raw(make_config(RawDurationConfig, cap_s=cap_s, duration=duration), "linear")


@register_reward("log")
def log(
    cap_s: float = 10.0,
    duration: Literal["mean_workload", "estimate"] = "mean_workload",
    log_scale_s: float = 1.0,
) -> Reward:
    """DMC-Optim's logarithmic raw-duration map (paper 003, §D.5): R = c · (1 − ln(1 + t/s) / ln(1 + cap/s)).

    Same inputs as `linear`; s = 1 s by default. The excerpt of the paper we work from names the
    log map without printing it; this form is perfgym's (1 at t = 0, 0 at t = cap, compressing
    long durations), documented in docs/rewards.md.

    >>> from perfgym.judge.verdict import Stage, Timing, Verdict
    >>> v = Verdict(task_id="t", stage=Stage.OK, candidate=Timing(estimate_s=1.0,
    ...             per_workload_s={"a": 1.0}))
    >>> round(log()([v])[0], 4)
    0.7109
    """
    cfg = make_config(RawDurationConfig, cap_s=cap_s, duration=duration, log_scale_s=log_scale_s)
    return _raw(cfg, "log")
