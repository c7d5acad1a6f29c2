"""DMC-Optim's gated percentile rewards: gates c, g, graded q, QAR/QP, four compositions (paper 003, §4, §D)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Stage, Verdict
from perfgym.rewards._base import Relation, Reward, RewardOutput, make_config
from perfgym.rewards._environment import EnvironmentConfig, EnvironmentOutcome, run_environment
from perfgym.rewards._pool import Calibration, Pool, calibration_fn
from perfgym.rewards._registry import derive_reward, register_reward

OBJECTIVES = ("correctness", "optimization")


class PercentileConfig(EnvironmentConfig):
    """Gates, graded signal and composition on top of the environment (paper 003, §4 and §D.4)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    rho: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Timeout tolerance ρ: the optimisation gate needs timeout fraction <= ρ; "
        "ρ = 1 disables it. None: 1 (0 for 'collapsed').",
    )
    tau: float = Field(
        default=30.0,
        gt=0,
        le=100,
        description="Percentile threshold τ: the gate needs the ranking position <= τ "
        "(top-τ%); τ = 100 disables it.",
    )
    ranking: Literal["per_test", "leaderboard"] = Field(
        default="per_test",
        description="What τ applies to: the mean per-test percentile position, or the position "
        "of that mean on the pool's leaderboard.",
    )
    quality: Literal["none", "timeouts", "qar", "qp"] = Field(
        default="none",
        description="Graded q: none (1, binary reward), timeouts (1 - timeout fraction), "
        "qar (1 - mean per-test position/100), qp (1 - leaderboard position/100).",
    )
    buckets: int | None = Field(
        default=None, ge=1, description="Bucket q into k levels: floor(q·k)/k."
    )
    composition: Literal["hard_gated", "collapsed", "additive", "multitask"] = Field(
        default="hard_gated",
        description="hard_gated c·g·q; collapsed c·g with no timeout allowed; additive "
        "w_correct·c + w_opt·c·g·q; multitask c or c·g·q per the verdict's `objective` column.",
    )
    w_correct: float = Field(default=1.0, ge=0, description="Additive: weight of correctness.")
    w_opt: float = Field(
        default=1.0, ge=0, description="Additive: weight of the gated optimisation term."
    )
    calibrate: Calibration = Field(
        default=None, description="Stored pool seconds -> present seconds; (α, β) means α·t + β."
    )

    @model_validator(mode="after")
    def _consistent(self) -> PercentileConfig:
        if self.composition == "collapsed":
            if self.quality != "none":
                raise ValueError("'collapsed' is binary: quality must be 'none'")
            if self.rho not in (None, 0.0):
                raise ValueError("'collapsed' folds timeouts into failure: rho must be 0")
        calibration_fn(self.calibrate)
        return self

    @property
    def effective_rho(self) -> float:
        if self.rho is not None:
            return self.rho
        return 0.0 if self.composition == "collapsed" else 1.0

    @property
    def needs_leaderboard(self) -> bool:
        return self.quality == "qp" or (self.ranking == "leaderboard" and self.tau < 100)

    @property
    def requires_pool(self) -> bool:
        return self.needs_pool or self.quality in ("qar", "qp") or self.tau < 100


def _objective(cfg: PercentileConfig, columns: Mapping[str, Sequence[Any]], i: int) -> str:
    if cfg.composition != "multitask":
        return "optimization"
    objective = columns["objective"][i]
    if objective not in OBJECTIVES:
        raise ConfigError(f"objective[{i}] = {objective!r}; expected one of {OBJECTIVES}")
    return str(objective)


def _factors(
    cfg: PercentileConfig, out: EnvironmentOutcome
) -> tuple[float, float, dict[str, Any], str]:
    """(g, q, components, reason-if-unscorable) from the environment's outcome."""
    parts: dict[str, Any] = {
        "n_workloads": float(len(out.workloads)),
        "timeout_fraction": out.timeout_fraction,
        "mean_position": out.mean_position,
        "leaderboard_position": out.leaderboard_position,
    }
    if not out.workloads:
        # Every workload filtered away: the environment reduces to correctness (neutral factors).
        return 1.0, 1.0, parts, ""
    g_timeout = out.timeout_fraction <= cfg.effective_rho
    rank = out.mean_position if cfg.ranking == "per_test" else out.leaderboard_position
    if cfg.tau < 100 and rank is None:
        return 0.0, 0.0, parts, "cannot rank: the pool has no duration on the retained workloads"
    g_tau = cfg.tau >= 100 or (rank is not None and rank <= cfg.tau)
    q = 1.0
    if cfg.quality == "timeouts":
        q = 1.0 - out.timeout_fraction
    elif cfg.quality in ("qar", "qp"):
        pos = out.mean_position if cfg.quality == "qar" else out.leaderboard_position
        if pos is None:
            return (
                0.0,
                0.0,
                parts,
                "cannot rank: the pool has no duration on the retained workloads",
            )
        q = 1.0 - pos / 100.0
    if cfg.buckets is not None:
        q = math.floor(q * cfg.buckets + 1e-12) / cfg.buckets
    parts.update(g_timeout=g_timeout, g_tau=g_tau, q=q)
    return float(g_timeout and g_tau), q, parts, ""


def score_percentile(
    cfg: PercentileConfig,
    calibrate: Callable[[float], float],
    verdict: Verdict,
    columns: Mapping[str, Sequence[Any]],
    i: int,
    cache: dict[int, Pool],
) -> RewardOutput:
    if verdict.infra_error:
        return RewardOutput(value=None, stage=verdict.stage, reason="infra_error")
    objective = _objective(cfg, columns, i)
    correct = verdict.stage is Stage.OK
    if not correct:
        return RewardOutput(value=0.0, stage=verdict.stage, components={"c": False})
    if objective == "correctness":
        return RewardOutput(value=1.0, stage=verdict.stage, components={"c": True})
    entries = columns["pool"][i] if "pool" in columns else []
    # GRPO passes one pool object to every rollout of a prompt: parse it once per call.
    pool = cache.get(id(entries))
    if pool is None:
        pool = cache[id(entries)] = Pool.parse(entries, calibrate, where=f"pool[{i}]")
    if cfg.requires_pool and not len(pool):
        return RewardOutput(value=None, stage=verdict.stage, reason="empty reference pool")
    outcome = run_environment(cfg, verdict, pool, leaderboard=cfg.needs_leaderboard)
    if outcome.reason:
        return RewardOutput(value=None, stage=verdict.stage, reason=outcome.reason)
    g, q, parts, why = _factors(cfg, outcome)
    if why:
        return RewardOutput(value=None, stage=verdict.stage, components=parts, reason=why)
    if cfg.composition == "additive":
        value = cfg.w_correct + cfg.w_opt * g * q
    else:
        value = g * q
    parts.update(c=True, g=g)
    reason = "" if outcome.workloads else "filter left no workloads: optimisation factors neutral"
    return RewardOutput(value=value, stage=verdict.stage, components=parts, reason=reason)


def build_percentile(cfg: PercentileConfig) -> Reward:
    calibrate = calibration_fn(cfg.calibrate)

    def score(
        verdicts: Sequence[Verdict], columns: Mapping[str, Sequence[Any]]
    ) -> list[RewardOutput]:
        cache: dict[int, Pool] = {}  # lives for one call only, while the entries are alive
        return [
            score_percentile(cfg, calibrate, v, columns, i, cache) for i, v in enumerate(verdicts)
        ]

    additive = cfg.composition == "additive"
    to_correct: Relation = "<" if additive and cfg.w_correct > 0 else "<="
    requires = ("pool",) if cfg.requires_pool else ()
    if cfg.composition == "multitask":
        requires = (*requires, "objective")
    return Reward(
        score,
        bounds=(0.0, cfg.w_correct + cfg.w_opt if additive else 1.0),
        order=("==", "==", "==", to_correct, "<=", "<="),
        requires=requires,
        accepts=("pool",),
    )


@register_reward("percentile")
def percentile(
    tau: float = 30.0,
    ranking: Literal["per_test", "leaderboard"] = "per_test",
    quality: Literal["none", "timeouts", "qar", "qp"] = "none",
    rho: float | None = None,
    buckets: int | None = None,
    composition: Literal["hard_gated", "collapsed", "additive", "multitask"] = "hard_gated",
    w_correct: float = 1.0,
    w_opt: float = 1.0,
    filter: Literal["none", "absolute", "relative"] = "none",
    filter_threshold_s: float = 2.0,
    filter_fraction: float = 0.2,
    filter_stat: float = 50.0,
    limit: Literal["none", "absolute", "relative", "ranked"] = "none",
    limit_s: float = 2.0,
    limit_percentile: float = 50.0,
    limit_factor: float = 1.0,
    cap_s: float = 10.0,
    calibrate: Calibration = None,
    on_missing_timing: Literal["none", "timeout"] = "none",
) -> Reward:
    """DMC-Optim's gated reward (paper 003, §4 'reward-facing interface', §D.2–D.4).

    R = c·g·q (hard-gated) where c is correctness, g = [timeout fraction <= ρ]·[position <= τ]
    the optimisation gate, q the graded signal. The position is the candidate's mean per-test
    percentile position against the reference pool (column `pool`: per verdict, a list of
    solutions, each {workload: seconds | None}, None = timed out), pool durations passed through
    `calibrate`. Defaults are the paper's strongest environment, 'top-30% per-test percentile':
    τ = 30, ρ = 1 (timeout gate off), binary. Failures 0; infra error or unmeasurable: None.

    >>> from perfgym.judge.verdict import Stage, Timing, Verdict
    >>> pool = [[{"a": 1.0}, {"a": 2.0}, {"a": 3.0}, {"a": 4.0}]]
    >>> fast = Verdict(task_id="t", stage=Stage.OK,
    ...                candidate=Timing(estimate_s=2.5, per_workload_s={"a": 2.5}))
    >>> percentile()([fast], pool=pool), percentile(tau=50)([fast], pool=pool)
    ([0.0], [1.0])
    """
    cfg = make_config(PercentileConfig, **locals())
    return build_percentile(cfg)


percentile_qar = derive_reward(
    "percentile_qar",
    percentile,
    defaults={"quality": "qar", "tau": 100.0},
    doc="""DMC-Optim's quality-percentile reward, QAR scalarisation (paper 003, §D.2, §D.4).

    R = c·q with q = 1 − (mean per-test percentile position)/100; defaults as `percentile` but
    quality='qar', τ = 100 (no threshold gate).

    >>> from perfgym.judge.verdict import Stage, Timing, Verdict
    >>> pool = [[{"a": 1.0}, {"a": 2.0}, {"a": 3.0}, {"a": 4.0}]]
    >>> v = Verdict(task_id="t", stage=Stage.OK,
    ...             candidate=Timing(estimate_s=2.5, per_workload_s={"a": 2.5}))
    >>> percentile_qar()([v], pool=pool)
    [0.5]
    """,
)
percentile_qp = derive_reward(
    "percentile_qp",
    percentile,
    defaults={"quality": "qp", "tau": 100.0},
    doc="""DMC-Optim's quality-percentile reward, QP scalarisation (paper 003, §D.2).

    R = c·q with q = 1 − (leaderboard position of the candidate's mean per-test percentile among
    the references' own)/100; saturates at 1 once it beats every reference. Defaults as
    `percentile` but quality='qp', τ = 100.

    >>> from perfgym.judge.verdict import Stage, Timing, Verdict
    >>> pool = [[{"a": 1.0}, {"a": 2.0}, {"a": 4.0}]]
    >>> v = Verdict(task_id="t", stage=Stage.OK,
    ...             candidate=Timing(estimate_s=3.0, per_workload_s={"a": 3.0}))
    >>> round(percentile_qp()([v], pool=pool)[0], 4)
    0.3333
    """,
)
