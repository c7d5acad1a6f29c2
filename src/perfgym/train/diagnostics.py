"""Training diagnostics from a trainer's log (TRL's trainer_state.json `log_history`) or
perfgym's own reward records: zero-variance GRPO groups per step, reward noise from the timing
CIs, reward by stage over steps, and EMA-peak checkpoint selection (RLPF, paper 000: α = 0.99)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perfgym.errors import ConfigError

__all__ = ["RECORDS_KEY", "TrainingDiagnostics", "StepStats", "diagnose", "ema", "ema_peak",
           "is_training_log", "read_training_log", "select_checkpoint"]  # fmt: skip

#: The header key of perfgym's reward records (JSONL; see `perfgym.train.diagnostics_records`).
RECORDS_KEY = "perfgym_reward_records"
STAGES = ("NX", "NC", "NR", "WO", "OK")


@dataclass
class StepStats:
    """One optimisation step: its mean reward, the fraction of GRPO groups whose rewards were
    all equal (no advantage, no gradient), reward by stage, and the timing noise."""

    step: int
    reward: float | None = None
    zero_variance_frac: float | None = None
    reward_by_stage: dict[str, float] = field(default_factory=dict)
    stage_frac: dict[str, float] = field(default_factory=dict)
    speedup_rel_noise: float | None = None  # median relative half-width of the speedup's CI


@dataclass
class TrainingDiagnostics:
    source: str
    kind: str  # "trl" | "records"
    steps: list[StepStats]
    alpha: float
    ema: list[float]
    peak_step: int | None
    checkpoint: int | None = None
    notes: list[str] = field(default_factory=list)


def ema(values: Sequence[float], alpha: float = 0.99) -> list[float]:
    """TensorBoard's smoothing: e_t = α e_(t-1) + (1 - α) x_t from 0, divided by 1 - α^t (the
    debiasing that keeps early points from being pulled to 0)."""
    if not 0 <= alpha < 1:
        raise ConfigError(f"EMA alpha must be in [0, 1); got {alpha}")
    out, last = [], 0.0
    for t, x in enumerate(values, 1):
        last = alpha * last + (1 - alpha) * x
        out.append(last / (1 - alpha**t))
    return out


def ema_peak(steps: Sequence[int], values: Sequence[float], alpha: float = 0.99) -> int | None:
    """The step at the EMA curve's highest point (the first, on a tie)."""
    if not values:
        return None
    smoothed = ema(values, alpha)
    best = max(range(len(smoothed)), key=lambda i: (smoothed[i], -i))
    return steps[best]


def select_checkpoint(peak: int | None, checkpoints: Iterable[int]) -> int | None:
    """The saved checkpoint nearest the EMA peak (the earlier one on a tie)."""
    saved = sorted(set(checkpoints))
    if peak is None or not saved:
        return None
    return min(saved, key=lambda s: (abs(s - peak), s))


def _rel_half_width(t: dict[str, Any] | None) -> float | None:
    if not t or not t.get("ci_s") or not t.get("estimate_s"):
        return None
    lo, hi = t["ci_s"]
    return (hi - lo) / 2 / t["estimate_s"]


def speedup_noise(
    candidate: dict[str, Any] | None, baseline: dict[str, Any] | None
) -> float | None:
    """Relative half-width of a speedup's CI from its two timings' CIs (independent errors add
    in quadrature on the log scale); None without both CIs."""
    c, b = _rel_half_width(candidate), _rel_half_width(baseline)
    if c is None or b is None:
        return None
    return math.hypot(c, b)


def _median(xs: list[float]) -> float | None:
    if not xs:
        return None
    s = sorted(xs)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def _from_trl(history: list[dict[str, Any]]) -> list[StepStats]:
    steps = []
    for entry in history:
        if "step" not in entry or "reward" not in entry:
            continue  # train-end summaries and eval lines carry no per-step reward
        stats = StepStats(step=int(entry["step"]), reward=float(entry["reward"]))
        if entry.get("frac_reward_zero_std") is not None:
            stats.zero_variance_frac = float(entry["frac_reward_zero_std"])
        for key, value in entry.items():
            head, _, stage = key.rpartition("/stage_")
            if head and stage in STAGES:
                stats.stage_frac[stage] = stats.stage_frac.get(stage, 0.0) + float(value)
        steps.append(stats)
    return steps


def _from_records(records: list[dict[str, Any]], where: str) -> list[StepStats]:
    by_step: dict[int, list[dict[str, Any]]] = {}
    for n, r in enumerate(records, 2):
        if "step" not in r or "reward" not in r or "group" not in r:
            missing = [k for k in ("step", "group", "reward") if k not in r]
            raise ConfigError(f"{where}:{n}: a reward record lacks {', '.join(missing)}")
        by_step.setdefault(int(r["step"]), []).append(r)
    steps = []
    for step in sorted(by_step):
        rows = by_step[step]
        scored = [r for r in rows if r["reward"] is not None]
        groups: dict[str, list[float]] = {}
        for r in scored:
            groups.setdefault(str(r["group"]), []).append(float(r["reward"]))
        multi = [g for g in groups.values() if len(g) > 1]
        stats = StepStats(step=step)
        if scored:
            stats.reward = sum(float(r["reward"]) for r in scored) / len(scored)
        if multi:
            stats.zero_variance_frac = sum(max(g) - min(g) <= 1e-12 for g in multi) / len(multi)
        for stage in STAGES:
            of = [float(r["reward"]) for r in scored if r.get("stage") == stage]
            if of:
                stats.reward_by_stage[stage] = sum(of) / len(of)
            stats.stage_frac[stage] = sum(r.get("stage") == stage for r in rows) / len(rows)
        noise = [float(r["speedup_noise"]) for r in rows if r.get("speedup_noise") is not None]
        stats.speedup_rel_noise = _median(noise)
        steps.append(stats)
    return steps


def is_training_log(path: Path) -> bool:
    """A trainer_state.json (a JSON object with `log_history`) or perfgym reward records."""
    try:
        with path.open("rb") as f:
            head = f.read(1 << 16)
    except OSError:
        return False
    return b'"log_history"' in head or RECORDS_KEY.encode() in head.split(b"\n", 1)[0]


def read_training_log(path: Path) -> tuple[str, list[StepStats], dict[str, Any]]:
    """(kind, steps, meta) of a training log; a ConfigError naming what is wrong or missing."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read training log {path}: {exc}") from None
    first = text.split("\n", 1)[0]
    if RECORDS_KEY in first:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        try:
            objs = [json.loads(ln) for ln in lines]
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}: not JSON lines ({exc.msg})") from None
        return "records", _from_records(objs[1:], str(path)), objs[0][RECORDS_KEY]
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not JSON ({exc.msg})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("log_history"), list):
        raise ConfigError(f"{path}: not a trainer_state.json (no log_history list)")
    steps = _from_trl(doc["log_history"])
    if not steps:
        raise ConfigError(f"{path}: log_history has no step with a 'reward' (was it GRPO?)")
    return "trl", steps, {k: doc[k] for k in ("global_step", "save_steps") if k in doc}


def _checkpoints_beside(path: Path) -> list[int]:
    """Steps of the checkpoint-<step> directories beside (or above) a trainer_state.json."""
    found = []
    for where in {path.parent, path.parent.parent}:
        for d in where.glob("checkpoint-*"):
            tail = d.name.rsplit("-", 1)[-1]
            if d.is_dir() and tail.isdigit():
                found.append(int(tail))
    return sorted(set(found))


def diagnose(path: Path, *, alpha: float = 0.99,
             checkpoints: Sequence[int] | None = None) -> TrainingDiagnostics:  # fmt: skip
    """Everything above for one log. `checkpoints` default: the checkpoint-<step> directories
    found beside the log."""
    kind, steps, _ = read_training_log(path)
    rewarded = [s for s in steps if s.reward is not None]
    values = [float(s.reward) for s in rewarded if s.reward is not None]
    peak = ema_peak([s.step for s in rewarded], values, alpha)
    saved = list(checkpoints) if checkpoints is not None else _checkpoints_beside(path)
    diag = TrainingDiagnostics(source=str(path), kind=kind, steps=steps, alpha=alpha,
                       ema=ema(values, alpha) if values else [], peak_step=peak,
                       checkpoint=select_checkpoint(peak, saved))  # fmt: skip
    if len(values) < 20:
        diag.notes.append(f"{len(values)} logged steps: with α = {alpha} the EMA is still "
                          "dominated by its first points; the peak is tentative")  # fmt: skip
    if kind == "trl":
        diag.notes.append("reward by stage needs per-completion records (perfgym's reward "
                          "records); TRL's log has the stage fractions only")  # fmt: skip
    return diag
