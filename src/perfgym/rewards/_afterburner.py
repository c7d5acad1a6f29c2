"""Afterburner's GRPO reward (paper 004, §4 and §E.5; constants from its released reward code)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Stage, Timing, Verdict
from perfgym.rewards._base import Relation, Reward, RewardOutput, make_config
from perfgym.rewards._durations import same_clock, seconds_or_reason
from perfgym.rewards._registry import register_reward
from perfgym.timing.result import is_positive_seconds

Objective = Literal["time", "memory", "integral"]

# One <thinking> block then one <solution> block, nothing else around them but whitespace.
# Parsed by `str.find`, not a regex: `<thinking>(.*?)</thinking>\s*<solution>(.*)</solution>`
# rescans the rest of the text for every `</thinking><solution>` in it (quadratic).
_OPEN_T, _CLOSE_T, _OPEN_S, _CLOSE_S = "<thinking>", "</thinking>", "<solution>", "</solution>"


def afterburner_format_ok(text: str) -> bool:
    """Afterburner's format check: exactly one thinking block, then one solution block.

    The same rule as fullmatching ``\\s*<thinking>(.*?)</thinking>\\s*<solution>(.*)</solution>\\s*``
    (DOTALL), then refusing a thinking block holding `<thinking>` or a solution block holding
    either opening tag, in time linear in the text."""
    body = text.strip()
    if not body.startswith(_OPEN_T) or not body.endswith(_CLOSE_S):
        return False
    lead = len(text) - len(text.lstrip())
    # The greedy solution block ends at the last `</solution>`, which ends the stripped text.
    start, end = lead + len(_OPEN_T), lead + len(body) - len(_CLOSE_S)
    at = text.find(_CLOSE_T, start)
    while at != -1:
        s = at + len(_CLOSE_T)
        while s < len(text) and text[s].isspace():
            s += 1
        if text.startswith(_OPEN_S, s) and s + len(_OPEN_S) <= end:
            thinking, solution = text[start:at], text[s + len(_OPEN_S) : end]
            return _OPEN_T not in thinking and _OPEN_T not in solution and _OPEN_S not in solution
        # The lazy thinking block grows to the next `</thinking>`; the whitespace just skipped
        # holds none, so each character is looked at a bounded number of times.
        at = text.find(_CLOSE_T, max(s, at + 1))
    return False


def completion_text(completion: Any, where: str) -> str:
    """A completion as text: a string, a chat message dict, or a list of messages (the last)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping) and isinstance(completion.get("content"), str):
        return str(completion["content"])
    if isinstance(completion, Sequence) and completion:
        return completion_text(completion[-1], where)
    raise ConfigError(f"{where}: cannot read a completion from {type(completion).__name__}")


class AfterburnerConfig(BaseModel):
    """Afterburner's weights. Source: grpo/afterburner_reward_function.py in Elfsong/Afterburner."""

    model_config = ConfigDict(extra="forbid")

    improvement_weight: float = Field(
        default=0.5, ge=0, description="β_i, weight of the improvement term."
    )
    format_weight: float = Field(default=0.2, ge=0, description="β_f, weight of the format term.")
    efficiency_weight: float = Field(
        default=0.5, ge=0, description="Weight of tanh(gain) inside improvement; passing code only."
    )
    tanh_scale: float = Field(default=1.0, ge=0, description="Gain is tanh(scale · gain).")
    gain_clip: float = Field(default=1.0, gt=0, description="Relative gain clipped to ±gain_clip.")
    upgrade: float = Field(default=1.0, description="Input failed, candidate passes.")
    kept_pass: float = Field(default=0.5, description="Both pass.")
    kept_fail: float = Field(default=-0.5, description="Both fail.")
    downgrade: float = Field(default=-1.0, description="Input passed, candidate fails.")
    format_fail: float = Field(
        default=0.0,
        description="Format term of a malformed answer: 0 in the released code (paper: −1).",
    )
    objective: Objective = Field(
        default="time", description="Which measure the gain is computed on."
    )
    clip_time_s: float = Field(default=90.0, gt=0, description="Durations clipped to [0, 90 s].")
    clip_memory_mb: float = Field(
        default=1024.0, gt=0, description="Peak memory clipped: 1048576 KiB."
    )
    clip_integral_mb_s: float = Field(
        default=92160.0, gt=0, description="Memory integral clipped: 1048576 KiB × 90 s in MiB·s."
    )
    on_missing_timing: Literal["none", "no_gain"] = Field(
        default="none",
        description="A passing candidate whose measure (or its input's) is missing: "
        "'none' -> None; 'no_gain' -> efficiency term 0.",
    )

    def clip(self, objective: Objective) -> float:
        return {
            "time": self.clip_time_s,
            "memory": self.clip_memory_mb,
            "integral": self.clip_integral_mb_s,
        }[objective]

    def transition(self, input_passed: bool, passed: bool) -> float:
        if passed:
            return self.kept_pass if input_passed else self.upgrade
        return self.downgrade if input_passed else self.kept_fail


def measure(timing: Timing | None, objective: Objective, role: str) -> tuple[float | None, str]:
    """The objective's figure from a Timing: estimate (ok status only), peak RSS, or integral."""
    if objective == "time":
        return seconds_or_reason(timing, role)
    if timing is None:
        return None, f"{role} timing absent"
    value = timing.peak_rss_mb if objective == "memory" else timing.memory_integral_mb_s
    if value is None or not is_positive_seconds(value):
        return None, f"{role} {objective} {value!r} unusable"
    return float(value), ""


def _input_side(
    cfg: AfterburnerConfig, v: Verdict, cols: Mapping[str, Sequence[Any]], i: int, obj: Objective
) -> tuple[bool, float | None, str]:
    """Whether the input code passed and its figure; default input = the task's baseline."""
    passed = bool(cols["input_passed"][i]) if "input_passed" in cols else True
    column = {
        "time": "input_time_s",
        "memory": "input_memory_mb",
        "integral": "input_integral_mb_s",
    }
    if not passed:
        # Afterburner substitutes failing code's figures with the clip values.
        return False, cfg.clip(obj), ""
    if column[obj] in cols:
        value = cols[column[obj]][i]
        if value is None:
            return True, None, f"{column[obj]} is None"
        if not is_positive_seconds(value):
            raise ConfigError(f"{column[obj]}[{i}] = {value!r}: not a positive finite figure")
        return True, float(value), ""
    figure, why = measure(v.baseline, obj, "baseline (input)")
    return True, figure, why


def _format(cfg: AfterburnerConfig, cols: Mapping[str, Sequence[Any]], i: int) -> float:
    if "format_ok" in cols:
        ok = bool(cols["format_ok"][i])
    elif "completions" in cols:
        ok = afterburner_format_ok(completion_text(cols["completions"][i], f"completions[{i}]"))
    else:
        return 0.0  # only reachable with format_weight == 0, where the term is unused
    return 1.0 if ok else cfg.format_fail


def score_afterburner(
    cfg: AfterburnerConfig, v: Verdict, cols: Mapping[str, Sequence[Any]], i: int
) -> RewardOutput:
    if v.infra_error:
        return RewardOutput(value=None, stage=v.stage, reason="infra_error")
    obj: Objective = (
        cols["efficiency_instruction"][i] if "efficiency_instruction" in cols else cfg.objective
    )
    if obj not in ("time", "memory", "integral"):
        raise ConfigError(f"efficiency_instruction[{i}] = {obj!r}; expected time/memory/integral")
    passed = v.stage is Stage.OK
    input_passed, before, why = _input_side(cfg, v, cols, i, obj)
    transition = cfg.transition(input_passed, passed)
    efficiency, reason = 0.0, ""
    parts: dict[str, Any] = {"transition": transition, "passed": passed}
    hid = v.hid_time if passed else []
    if hid:
        # Hiding time earns the worst efficiency a passing program can get, never None.
        efficiency = -math.tanh(cfg.tanh_scale * cfg.gain_clip)
        reason = f"candidate hid time from the clock ({', '.join(hid)}): lowest efficiency"
    elif passed:
        after, cand_why = measure(v.candidate, obj, "candidate")
        if obj == "time" and input_passed and "input_time_s" not in cols:
            clash = same_clock(v.candidate, v.baseline)
            if clash:
                after, cand_why = None, clash
        if before is None or after is None:
            why = why or cand_why
            if cfg.on_missing_timing == "none":
                return RewardOutput(
                    value=None, stage=v.stage, components=parts, reason=f"timing missing: {why}"
                )
            reason = f"timing missing ({why}); efficiency term 0"
        else:
            b, c = min(before, cfg.clip(obj)), min(after, cfg.clip(obj))
            gain = max(-cfg.gain_clip, min(cfg.gain_clip, (b - c) / (b + 1e-9)))
            efficiency = math.tanh(cfg.tanh_scale * gain)
            parts["gain"] = gain
    fmt = _format(cfg, cols, i)
    improvement = transition + (cfg.efficiency_weight * efficiency if passed else 0.0)
    value = cfg.improvement_weight * improvement + cfg.format_weight * fmt
    parts.update(efficiency=efficiency, improvement=improvement, format=fmt)
    return RewardOutput(value=value, stage=v.stage, components=parts, reason=reason)


def _bounds(cfg: AfterburnerConfig) -> tuple[float, float]:
    swing = cfg.efficiency_weight * math.tanh(cfg.tanh_scale * cfg.gain_clip)
    fails = (cfg.kept_fail, cfg.downgrade)
    passes = (cfg.kept_pass, cfg.upgrade)
    low = min(*fails, min(passes) - swing)
    high = max(*fails, max(passes) + swing)
    fmt = (min(1.0, cfg.format_fail), max(1.0, cfg.format_fail))
    return (
        cfg.improvement_weight * low + cfg.format_weight * fmt[0],
        cfg.improvement_weight * high + cfg.format_weight * fmt[1],
    )


@register_reward("afterburner")
def afterburner(
    improvement_weight: float = 0.5,
    format_weight: float = 0.2,
    efficiency_weight: float = 0.5,
    tanh_scale: float = 1.0,
    gain_clip: float = 1.0,
    upgrade: float = 1.0,
    kept_pass: float = 0.5,
    kept_fail: float = -0.5,
    downgrade: float = -1.0,
    format_fail: float = 0.0,
    objective: Objective = "time",
    clip_time_s: float = 90.0,
    clip_memory_mb: float = 1024.0,
    clip_integral_mb_s: float = 92160.0,
    on_missing_timing: Literal["none", "no_gain"] = "none",
) -> Reward:
    """Afterburner's reward (paper 004, §4 'Reward Functions', §E.5): 0.5·improvement + 0.2·format.

    improvement = transition + 0.5·tanh(clip((b − c)/b, ±1)) for passing code (transition:
    upgrade +1, kept passing +0.5, kept failing −0.5, downgrade −1, relative to the input code);
    b, c are the input's and the candidate's figure (time by default) clipped to [0, 90 s].
    format = 1 for one <thinking> then one <solution> block, else 0. Columns: `completions` or
    `format_ok` (one is required unless format_weight = 0); `input_passed` and `input_time_s`
    (`input_memory_mb`, `input_integral_mb_s`) describe the input code, by default the task's
    baseline (passed, with the verdict's baseline timing). Infra error or missing timing: None.

    >>> from perfgym.judge.verdict import Stage, Timing, Verdict
    >>> v = Verdict(task_id="t", stage=Stage.OK, candidate=Timing(estimate_s=0.5),
    ...             baseline=Timing(estimate_s=1.0))
    >>> [round(x, 4) for x in afterburner()([v], format_ok=[True])]
    [0.5655]
    """
    cfg = make_config(AfterburnerConfig, **locals())

    def score(
        verdicts: Sequence[Verdict], columns: Mapping[str, Sequence[Any]]
    ) -> list[RewardOutput]:
        return [score_afterburner(cfg, v, columns, i) for i, v in enumerate(verdicts)]

    gains = cfg.efficiency_weight > 0 and cfg.tanh_scale > 0
    to_correct: Relation = "<" if cfg.kept_pass - cfg.efficiency_weight > cfg.downgrade else "<="
    faster: Relation = "<" if gains else "=="
    best: Relation = "<" if gains and cfg.gain_clip >= 1 else "<="
    return Reward(
        score,
        bounds=_bounds(cfg),
        order=("==", "==", "==", to_correct, faster, best),
        requires=("completions|format_ok",) if cfg.format_weight != 0 else (),
        accepts=(
            "completions",
            "format_ok",
            "input_passed",
            "input_time_s",
            "input_memory_mb",
            "input_integral_mb_s",
            "efficiency_instruction",
        ),
    )
