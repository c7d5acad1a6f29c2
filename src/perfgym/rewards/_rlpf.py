"""RLPF's staged reward (paper 000, Eqs. 1–7) and its three ablations."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from perfgym.judge.verdict import Stage, Verdict
from perfgym.rewards._base import Relation, Reward, RewardOutput, make_config
from perfgym.rewards._durations import role_durations
from perfgym.rewards._registry import derive_reward, register_reward
from perfgym.rewards._speed import decided
from perfgym.timing.decision import Decision


class RlpfConfig(BaseModel):
    """Parameters of RLPF's reward; defaults are the paper's (Eqs. 4–6, 'We use αF = 0.16 ...')."""

    model_config = ConfigDict(extra="forbid")

    alpha_f: float = Field(default=0.16, ge=0, description="αF, weight of FBR (Eq. 4).")
    alpha_r: float = Field(default=0.10, ge=0, description="αR, weight of RBR (Eq. 4).")
    s_nx: float = Field(default=-0.05, description="s(NX): no extractable program (Eq. 5).")
    s_nc: float = Field(default=0.0, description="s(NC): did not compile (Eq. 5).")
    s_nr: float = Field(default=0.05, description="s(NR): did not run to completion (Eq. 5).")
    s_wo: float = Field(default=0.10, description="s(WO): ran, wrong output (Eq. 5).")
    eps: float = Field(
        default=0.05, gt=0, description="ε, gap between the best failure and any success (Eq. 6)."
    )
    shaping: bool = Field(
        default=True, description="False: every failure scores failure_value (ablation)."
    )
    failure_value: float = Field(
        default=0.0, description="Reward of every failure when shaping is off."
    )
    degenerate_gap: Literal["step", "none"] = Field(
        default="step",
        description="Tb <= Tr: 'step' sets CGRE = FBR (the limit of Eq. 3 as Tr -> Tb from "
        "below); 'none' scores the verdict None.",
    )
    decision: Decision = Field(
        default="significant",
        description="How FBR and RBR are decided: 'significant' (perfgym's comparison: paired "
        "by round, with the equivalence margin, the task's noise band when rounds are too few, "
        "a tie for the baseline's own source; CGRE counts no gain within noise) or 'strict' "
        "(the paper's Tc < Tb, Tc <= Tr on the estimates, noise and all).",
    )
    on_missing_timing: Literal["none", "floor"] = Field(
        default="none",
        description="A correct program without usable Tc/Tb/Tr: 'none' -> None, "
        "'floor' -> the correctness floor s(WO) + ε.",
    )

    @model_validator(mode="after")
    def _staircase(self) -> RlpfConfig:
        # The paper's claim (Eq. 7) is an order; parameters that break it are a config error.
        if self.shaping and not (self.s_nx < self.s_nc < self.s_nr < self.s_wo):
            raise ValueError("shaping ladder must increase: s_nx < s_nc < s_nr < s_wo")
        if not self.shaping and self.failure_value >= self.floor:
            raise ValueError("failure_value must stay below the correctness floor s_wo + eps")
        return self

    @property
    def floor(self) -> float:
        return self.s_wo + self.eps

    def ladder(self, stage: Stage) -> float:
        if not self.shaping:
            return self.failure_value
        return {Stage.NX: self.s_nx, Stage.NC: self.s_nc, Stage.NR: self.s_nr}.get(stage, self.s_wo)


def score_rlpf(
    cfg: RlpfConfig, verdict: Verdict, overrides: Mapping[str, float | None]
) -> RewardOutput:
    """One verdict through Eq. 6: the ladder for failures, max(floor, R_succ) for correct programs."""
    if verdict.infra_error:
        return RewardOutput(value=None, stage=verdict.stage, reason="infra_error")
    if verdict.stage is not Stage.OK:
        shaping = cfg.ladder(verdict.stage)
        return RewardOutput(value=shaping, stage=verdict.stage, components={"shaping": shaping})
    floor = cfg.floor
    hid = verdict.hid_time
    if hid:
        # Hiding time is the candidate's doing: no speed credit, and never None (a trainer that
        # drops None would give hiding no signal at all).
        return RewardOutput(
            value=floor,
            stage=verdict.stage,
            components={"floor": floor},
            reason=f"candidate hid time from the clock ({', '.join(hid)}): correctness floor",
        )
    times, why = role_durations(verdict, ("candidate", "baseline", "reference"), overrides)
    if not times:
        if cfg.on_missing_timing == "floor":
            return RewardOutput(
                value=floor,
                stage=verdict.stage,
                components={"floor": floor},
                reason=f"timing missing ({why}); scored at the correctness floor",
            )
        return RewardOutput(value=None, stage=verdict.stage, reason=f"timing missing: {why}")
    tc, tb, tr = times["candidate"], times["baseline"], times["reference"]
    calls = decided(verdict, cfg.decision, overrides, ("baseline", "reference"))
    fbr = calls.faster("baseline")  # Eq. 1 (strict: Tc < Tb)
    rbr = calls.level_or_better("reference")  # Eq. 2 (strict: Tc <= Tr)
    reason = ""
    if tb > tr:
        cgre = min(1.0, max(0.0, (tb - tc) / (tb - tr)))  # Eq. 3
        if cfg.decision == "significant":
            cgre = 0.0 if not fbr else (1.0 if rbr else cgre)  # no gain within noise
    elif cfg.degenerate_gap == "step":
        cgre = float(fbr)
        reason = "degenerate gap (Tb <= Tr): CGRE = FBR"
    else:
        return RewardOutput(
            value=None, stage=verdict.stage, reason="degenerate gap (Tb <= Tr): no gap to close",
            decision=calls.text,
        )  # fmt: skip
    r_succ = cgre + cfg.alpha_f * fbr + cfg.alpha_r * rbr  # Eq. 4
    return RewardOutput(
        value=max(floor, r_succ),  # Eq. 6, correct branch
        stage=verdict.stage,
        components={
            "cgre": cgre,
            "fbr": fbr,
            "rbr": rbr,
            "r_succ": r_succ,
            "floor": floor,
            "tc_s": tc,
            "tb_s": tb,
            "tr_s": tr,
        },
        reason=reason,
        decision=calls.text,
    )


def _overrides(columns: Mapping[str, Sequence[Any]], index: int) -> dict[str, float | None]:
    names = {"baseline_s": "baseline", "reference_s": "reference"}
    return {role: columns[col][index] for col, role in names.items() if col in columns}


def rlpf_order(cfg: RlpfConfig) -> tuple[Relation, ...]:
    """The staircase order these parameters guarantee (checked by `check_reward`)."""
    fail: Relation = "<" if cfg.shaping else "=="
    # Any Tc < Tb earns at least αF; it clears the floor for every such Tc only if αF > floor.
    faster: Relation = "<" if cfg.alpha_f > cfg.floor else "<="
    return (fail, fail, fail, "<", faster, "<")


def build_rlpf(cfg: RlpfConfig) -> Reward:
    def score(
        verdicts: Sequence[Verdict], columns: Mapping[str, Sequence[Any]]
    ) -> list[RewardOutput]:
        return [score_rlpf(cfg, v, _overrides(columns, i)) for i, v in enumerate(verdicts)]

    low = min(cfg.ladder(s) for s in (Stage.NX, Stage.NC, Stage.NR, Stage.WO))
    high = max(cfg.floor, 1.0 + cfg.alpha_f + cfg.alpha_r)
    return Reward(
        score,
        bounds=(min(low, cfg.floor), high),
        order=rlpf_order(cfg),
        accepts=("baseline_s", "reference_s"),
    )


@register_reward("rlpf")
def rlpf(
    alpha_f: float = 0.16,
    alpha_r: float = 0.10,
    s_nx: float = -0.05,
    s_nc: float = 0.0,
    s_nr: float = 0.05,
    s_wo: float = 0.10,
    eps: float = 0.05,
    shaping: bool = True,
    failure_value: float = 0.0,
    degenerate_gap: Literal["step", "none"] = "step",
    on_missing_timing: Literal["none", "floor"] = "none",
    decision: Decision = "significant",
) -> Reward:
    """RLPF's staged reward, paper 000 Eqs. 1–7.

    Correct programs: R = max(s(WO) + ε, CGRE + αF·FBR + αR·RBR) with FBR = [Tc < Tb] (Eq. 1),
    RBR = [Tc <= Tr] (Eq. 2), CGRE = clip((Tb − Tc)/(Tb − Tr), 0, 1) (Eq. 3). Failures: the ladder
    s(NX) = −0.05 < s(NC) = 0 < s(NR) = 0.05 < s(WO) = 0.10 (Eq. 5). Defaults αF = 0.16,
    αR = 0.10, ε = 0.05 (paper's values). Tc, Tb, Tr are the verdict's candidate, baseline and
    reference `Timing.estimate_s`; the optional columns `baseline_s` / `reference_s` replace
    Tb / Tr with stored durations (e.g. a model-generated reference, as in RLPF's GPT-5.4 run).
    Tb <= Tr: CGRE = FBR (see `degenerate_gap`). Missing or degraded timing of a correct
    program: None (see `on_missing_timing`), except a candidate's own doing (`Verdict.hid_time`:
    hidden CPU, a harness time the external clock denies): the floor. An infrastructure error:
    None.

    `decision="significant"` (the default) reads [Tc < Tb] as "the comparison says faster" and
    [Tc <= Tr] as "not slower than the reference" (`perfgym.timing.decision.speed_call`), so
    noise pays no bonus: the baseline's own text ties with it by construction, and CGRE is 0
    unless faster and 1 when level with the reference. `decision="strict"`: the paper's rule
    on the estimates. Each output's `decision` says which rule decided and how.

    >>> from perfgym.judge.verdict import Stage, Timing, Verdict
    >>> v = Verdict(task_id="t", stage=Stage.OK, candidate=Timing(estimate_s=0.5),
    ...             baseline=Timing(estimate_s=1.0), reference=Timing(estimate_s=0.25))
    >>> [round(x, 4) for x in rlpf()([v, Verdict(task_id="t", stage=Stage.WO)])]
    [0.8267, 0.1]
    """
    cfg = make_config(RlpfConfig, **locals())
    return build_rlpf(cfg)


rlpf_no_fbr = derive_reward(
    "rlpf_no_fbr",
    rlpf,
    fixed={"alpha_f": 0.0},
    doc="""RLPF without the faster-than-baseline bonus (paper 000, Table 6 'w.o. FBR'): αF = 0.

    Eqs. 1–7 otherwise unchanged; other parameters and defaults as `rlpf`.

    >>> from perfgym.judge.verdict import Stage, Timing, Verdict
    >>> v = Verdict(task_id="t", stage=Stage.OK, candidate=Timing(estimate_s=0.5),
    ...             baseline=Timing(estimate_s=1.0), reference=Timing(estimate_s=0.25))
    >>> round(rlpf_no_fbr()([v])[0], 4)
    0.6667
    """,
)
rlpf_no_rbr = derive_reward(
    "rlpf_no_rbr",
    rlpf,
    fixed={"alpha_r": 0.0},
    doc="""RLPF without the reference-or-better bonus (paper 000, Table 6 'w.o. RBR'): αR = 0.

    Eqs. 1–7 otherwise unchanged; other parameters and defaults as `rlpf`.

    >>> from perfgym.judge.verdict import Stage, Timing, Verdict
    >>> v = Verdict(task_id="t", stage=Stage.OK, candidate=Timing(estimate_s=0.2),
    ...             baseline=Timing(estimate_s=1.0), reference=Timing(estimate_s=0.25))
    >>> round(rlpf_no_rbr()([v])[0], 4)
    1.16
    """,
)
rlpf_no_shaping = derive_reward(
    "rlpf_no_shaping",
    rlpf,
    fixed={"shaping": False},
    doc="""RLPF without the failure-mode shaping ladder (paper 000, Table 6 'w.o. shaping').

    Every failure (NX, NC, NR, WO) scores failure_value = 0 instead of Eq. 5; correct programs
    keep max(s(WO) + ε, R_succ) (Eq. 6), so the floor 0.15 still separates success from failure.

    >>> from perfgym.judge.verdict import Stage, Verdict
    >>> rlpf_no_shaping()([Verdict(task_id="t", stage=Stage.NX), Verdict(task_id="t", stage=Stage.WO)])
    [0.0, 0.0]
    """,
)
