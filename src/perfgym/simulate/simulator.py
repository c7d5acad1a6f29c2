"""Replay reward environments on a quality ladder without any model; rank configurations.

`simulate(ladder, reward)` scores every rung's verdict with the reward (a pure function, so
nothing runs), normalises the values to [0, 1] by the reward's declared bounds
(y = (r − lo)/(hi − lo), so rewards of different ranges share one axis and a reward's
unused headroom shows as a curve that never reaches 1), and computes the diagnostics.
`sweep` does that for every point of a parameter grid and ranks the configurations.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np

from perfgym.errors import ConfigError
from perfgym.rewards import Reward, get_reward
from perfgym.simulate.diagnostics import diagnose
from perfgym.simulate.ladder import Ladder
from perfgym.simulate.result import SimPoint, Simulation, StairStep

RankBy = Literal["spearman", "spearman_smoothed", "diagonal", "steepness", "monotonicity"]

#: Sort key per ranking: higher is better, except the deviation from the diagonal. DMC-Optim
#: (§E.3, Table 45) found diagonal deviation, raw quality correlation and steepness the most
#: predictive of online RL at p30; perfgym ranks by raw correlation by default.
RANKINGS: dict[str, tuple[str, int]] = {
    "spearman": ("spearman", -1),
    "spearman_smoothed": ("spearman_smoothed", -1),
    "diagonal": ("diagonal_deviation", 1),
    "steepness": ("steepness", -1),
    "monotonicity": ("monotonicity", -1),
}

Progress = Callable[[int, int], None]


def simulate(ladder: Ladder, reward: Reward, *, varied: str = "") -> Simulation:
    """Score every rung with `reward` and compute the activation curve and its diagnostics.

    The ladder's `SimulatorConfig` (the one it was built with) also says how to read the curve.
    """
    config = ladder.config
    lo, hi = (float(b) for b in reward.bounds)
    if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
        raise ConfigError(
            f"reward {reward.name!r} declares bounds {reward.bounds}: cannot normalise"
        )
    verdicts = [r.verdict for r in ladder.rungs]
    outputs = reward.score(verdicts, **ladder.columns())
    points: list[SimPoint] = []
    for rung, out in zip(ladder.rungs, outputs, strict=True):
        signal = None
        if out.value is not None:
            norm = min(1.0, max(0.0, (out.value - lo) / (hi - lo)))
            signal = norm if config.signal == "reward" else float(norm >= config.pass_level - 1e-12)
        points.append(SimPoint(task_id=rung.task_id, label=rung.label, synthetic=rung.synthetic,
                               level=rung.level, levels=rung.levels, quality=rung.quality,
                               stage=rung.verdict.stage, value=out.value, signal=signal,
                               reason=out.reason))  # fmt: skip
    scored = [p for p in points if p.signal is not None]
    notes = list(ladder.notes) + _unscored_notes(points)
    if not scored:
        raise ConfigError(f"reward {reward.name!r} scored none of the {len(points)} points; "
                          + "; ".join(_unscored_notes(points)))  # fmt: skip
    curve, diag = diagnose(
        [p.task_id for p in scored],
        [p.level for p in scored],
        [p.quality for p in scored],
        [p.signal for p in scored if p.signal is not None],
        bins=config.bins,
        window=config.smooth_window,
        bootstrap=config.bootstrap,
    )
    return Simulation(
        reward=reward.name or "?",
        params=json.loads(json.dumps(reward.params, default=str)),
        bounds=(lo, hi),
        suite=ladder.suite,
        source=ladder.source,
        config=config.model_dump(mode="json"),
        curve=curve,
        diagnostics=diag,
        staircase=_staircase(points),
        points=points,
        varied=varied,
        notes=notes + diag.notes,
    )


def _unscored_notes(points: Sequence[SimPoint]) -> list[str]:
    why: dict[str, int] = {}
    for p in points:
        if p.value is None:
            why[p.reason or "no reason given"] = why.get(p.reason or "no reason given", 0) + 1
    return [f"{n} point(s) unscored (left out): {reason}" for reason, n in sorted(why.items())]


def _staircase(points: Sequence[SimPoint]) -> list[StairStep]:
    groups: dict[str, list[SimPoint]] = {}
    for p in points:
        groups.setdefault(p.label, []).append(p)
    steps = []
    for label, ps in groups.items():
        vals = [p.value for p in ps if p.value is not None]
        sigs = [p.signal for p in ps if p.signal is not None]
        steps.append(StairStep(label=label, n=len(vals),
                               mean_quality=float(np.mean([p.quality for p in ps])),
                               mean_value=float(np.mean(vals)) if vals else None,
                               mean_signal=float(np.mean(sigs)) if sigs else None))  # fmt: skip
    return sorted(steps, key=lambda s: (s.mean_quality, s.label))


def grid(sweep: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of the swept values, in the order given."""
    for key, values in sweep.items():
        if not values:
            raise ConfigError(f"sweep {key!r} has no values")
    keys = list(sweep)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*sweep.values())]


def rank(simulations: Sequence[Simulation], rank_by: str = "spearman") -> list[Simulation]:
    """Best first by `rank_by`; ties (and undefined values, which go last) by diagonal deviation."""
    if rank_by not in RANKINGS:
        raise ConfigError(f"unknown ranking {rank_by!r}; one of {sorted(RANKINGS)}")
    field, sign = RANKINGS[rank_by]

    def key(s: Simulation) -> tuple[int, float, float]:
        value = getattr(s.diagnostics, field)
        missing = value is None
        return (int(missing), 0.0 if missing else sign * value, s.diagnostics.diagonal_deviation)

    return sorted(simulations, key=key)


def sweep(
    ladder: Ladder,
    rewards: Sequence[str],
    params: Mapping[str, Any] | None = None,
    grid_spec: Mapping[str, Sequence[Any]] | None = None,
    *,
    rank_by: str = "spearman",
    progress: Progress | None = None,
) -> list[Simulation]:
    """Simulate each reward at each point of the grid (on top of `params`); best first."""
    if not rewards:
        raise ConfigError("name at least one reward to simulate")
    if rank_by not in RANKINGS:
        raise ConfigError(f"unknown ranking {rank_by!r}; one of {sorted(RANKINGS)}")
    combos = grid(grid_spec) if grid_spec else [{}]
    jobs = [(name, combo) for name in rewards for combo in combos]
    out = []
    for i, (name, combo) in enumerate(jobs):
        reward = get_reward(name, **{**(params or {}), **combo})
        varied = ", ".join(f"{k}={v}" for k, v in combo.items())
        out.append(simulate(ladder, reward, varied=varied))
        if progress is not None:
            progress(i + 1, len(jobs))
    return rank(out, rank_by)


def parse_value(text: str) -> Any:
    """A parameter value from the command line: JSON where it parses (30, 0.5, true, null,
    [1, 2]), otherwise the text itself (leaderboard, per_test)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_assignment(text: str) -> tuple[str, str]:
    """'key=value' -> (key, value); a clear error otherwise."""
    key, eq, value = text.partition("=")
    if not eq or not key.strip() or not value.strip():
        raise ConfigError(f"expected key=value, got {text!r}")
    return key.strip(), value.strip()


def parse_params(items: Sequence[str]) -> dict[str, Any]:
    """['tau=30', 'ranking=leaderboard'] -> {'tau': 30, 'ranking': 'leaderboard'}."""
    out: dict[str, Any] = {}
    for item in items:
        key, value = parse_assignment(item)
        if key in out:
            raise ConfigError(f"parameter {key!r} given twice")
        out[key] = parse_value(value)
    return out


def parse_sweep(items: Sequence[str]) -> dict[str, list[Any]]:
    """['tau=10,30,50', 'rho=0,0.1'] -> {'tau': [10, 30, 50], 'rho': [0, 0.1]}."""
    out: dict[str, list[Any]] = {}
    for item in items:
        key, values = parse_assignment(item)
        if key in out:
            raise ConfigError(f"sweep {key!r} given twice")
        out[key] = [parse_value(v.strip()) for v in values.split(",") if v.strip()]
        if not out[key]:
            raise ConfigError(f"sweep {key!r} has no values")
    return out
