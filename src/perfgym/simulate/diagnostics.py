"""The activation curve and its diagnostics (DMC-Optim §E.2), as pure arithmetic on points.

Input: one point per simulated sample, (task, quality q in [0, 1], signal y in [0, 1]).
The paper describes each diagnostic in words; the formulas below are perfgym's reading:

    curve        equal-width quality bins; x_k = mean q in bin k, y_k = mean y (empty bins dropped)
    smoothed     s_k = centred moving average of y_k over an odd `window` of bins, shrunk
                 symmetrically at the ends
    AUC          area under (x_k, y_k) on [0, 1], trapezoids, held flat beyond the end bins
    steepness    slope b of the least-squares clipped line clip(a + b·x, 0, 1) through (x_k, s_k),
                 bounded to [−bins, bins]: a ramp steeper than one bin cannot be resolved
    variance     mean_k (y_k − s_k)²: wobble of the curve around its smoothed trend
    diagonal     mean_k |y_k − x_k| (deviation from y = x) and mean_k (y_k − x_k) (its sign:
                 < 0 activation comes late, > 0 it comes early / too permissive)
    spearman     Spearman ρ(q, y) over all points (raw), with its p-value and a bootstrap CI
                 resampling tasks; `spearman_smoothed` = ρ(x_k, s_k)
    monotonicity mean over adjacent quality levels within a task of sign(ȳ_{l+1} − ȳ_l):
                 1 = every step up the ladder raises the signal, 0 = ties, −1 = every step lowers it

A constant signal has no ordering: its correlations are None (noted), never NaN.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike
from pydantic import BaseModel, ConfigDict, Field
from scipy import optimize, stats

from perfgym.errors import ConfigError
from perfgym.metrics.bootstrap import BootstrapConfig, bootstrap_ci

_RIDGE = 1e-8  # picks the gentlest of equally good slopes (a flat curve fits any a <= 0, b = 0)


class Curve(BaseModel):
    """The binned activation curve and its smoothed trend."""

    model_config = ConfigDict(extra="forbid")

    x: list[float] = Field(description="Mean normalised quality of each non-empty bin.")
    y: list[float] = Field(description="Mean signal of each non-empty bin.")
    smoothed: list[float] = Field(description="Centred moving average of y.")
    counts: list[int] = Field(description="Points in each bin.")


class Diagnostics(BaseModel):
    """How an environment reacts to solutions of rising quality (DMC-Optim §E.2)."""

    model_config = ConfigDict(extra="forbid")

    n_points: int
    n_tasks: int
    auc: float = Field(description="Area under the activation curve on [0, 1].")
    steepness: float = Field(description="Slope of the clipped linear fit to the smoothed curve.")
    variance: float = Field(description="Mean squared wobble of the curve around its trend.")
    diagonal_deviation: float = Field(description="Mean |y_k − x_k| over the bins.")
    diagonal_bias: float = Field(description="Mean (y_k − x_k): < 0 late, > 0 early activation.")
    spearman: float | None = Field(description="Spearman ρ(quality, signal) over all points.")
    spearman_p: float | None = None
    spearman_ci: tuple[float, float] | None = Field(
        default=None, description="Bootstrap CI of `spearman`, resampling tasks."
    )
    spearman_smoothed: float | None = Field(description="Spearman ρ of the smoothed curve.")
    monotonicity: float | None = Field(
        description="Mean sign of the signal's change per step up each task's quality ladder."
    )
    notes: list[str] = Field(default_factory=list)


def activation_curve(q: np.ndarray, y: np.ndarray, bins: int, window: int) -> Curve:
    """Bin the points by quality and smooth the binned means."""
    edges = np.minimum((q * bins).astype(int), bins - 1)  # q = 1 falls in the last bin
    xs, ys, counts = [], [], []
    for k in range(bins):
        inside = edges == k
        if inside.any():
            xs.append(float(q[inside].mean()))
            ys.append(float(y[inside].mean()))
            counts.append(int(inside.sum()))
    return Curve(x=xs, y=ys, smoothed=smooth(ys, window).tolist(), counts=counts)


def smooth(values: Sequence[float], window: int) -> np.ndarray:
    """Centred moving average over an odd `window`, shrunk symmetrically at the ends (the
    first and last bins are their own average), so a straight curve is its own trend."""
    if window < 1 or window % 2 == 0:
        raise ConfigError(f"the smoothing window must be an odd number >= 1, got {window}")
    v = np.asarray(values, dtype=float)
    out = np.empty_like(v)
    for k in range(len(v)):
        h = min(window // 2, k, len(v) - 1 - k)
        out[k] = v[k - h : k + h + 1].mean()
    return out


def area(x: ArrayLike, y: ArrayLike) -> float:
    """Trapezoid area on [0, 1], the curve held flat before its first and after its last bin."""
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    inner = float(np.sum((xa[1:] - xa[:-1]) * (ya[1:] + ya[:-1]) / 2.0))
    return float(ya[0] * xa[0] + inner + ya[-1] * (1.0 - xa[-1]))


def clipped_slope(x: ArrayLike, y: ArrayLike, bound: float) -> float:
    """Slope b of the least-squares fit y ≈ clip(a + b·x, 0, 1), b in [−bound, bound]."""
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(xa) < 2:
        return 0.0

    def residuals(p: np.ndarray) -> np.ndarray:
        fit = np.clip(p[0] + p[1] * xa, 0.0, 1.0)
        return np.append(fit - ya, np.sqrt(_RIDGE) * p[1])

    b0 = float(np.clip(np.polyfit(xa, ya, 1)[0], -bound, bound))
    starts = [(float(ya.mean() - b0 * xa.mean()), b0)]
    # Steep ramps centred on each bin: the clipped loss is flat away from a ramp's edges, so
    # one start from the plain linear fit can stall short of a step-shaped curve.
    starts += [(0.5 - bound * c, bound) for c in xa] + [(0.5 + bound * c, -bound) for c in xa]
    best: tuple[float, float] | None = None
    for a, b in starts:
        res = optimize.least_squares(
            residuals, x0=[a, b], bounds=([-2 * bound - 2, -bound], [2 * bound + 2, bound])
        )
        if best is None or res.cost < best[0] - 1e-12:
            best = (float(res.cost), float(res.x[1]))
    assert best is not None
    return best[1]


def _spearman(q: np.ndarray, y: np.ndarray) -> tuple[float, float] | None:
    if len(q) < 3 or np.ptp(q) == 0 or np.ptp(y) == 0:
        return None
    rho, p = stats.spearmanr(q, y)
    return float(rho), float(p)


def monotonicity(task: Sequence[str], level: Sequence[int], y: np.ndarray) -> float | None:
    """Mean sign of the change of the mean signal between adjacent levels of each task."""
    signs: list[float] = []
    for t in dict.fromkeys(task):
        means: dict[int, list[float]] = {}
        for tk, lv, yy in zip(task, level, y, strict=True):
            if tk == t:
                means.setdefault(lv, []).append(float(yy))
        ladder = [float(np.mean(means[lv])) for lv in sorted(means)]
        signs += [float(np.sign(b - a)) for a, b in zip(ladder, ladder[1:], strict=False)]
    return float(np.mean(signs)) if signs else None


def diagnose(
    task: Sequence[str],
    level: Sequence[int],
    quality: Sequence[float],
    signal: Sequence[float],
    *,
    bins: int = 10,
    window: int = 3,
    bootstrap: BootstrapConfig | None = None,
) -> tuple[Curve, Diagnostics]:
    """The activation curve and every diagnostic of one simulation's points."""
    q = np.asarray(quality, dtype=float)
    y = np.asarray(signal, dtype=float)
    if not (len(task) == len(level) == len(q) == len(y)):
        raise ConfigError("diagnose: task, level, quality and signal differ in length")
    if len(q) == 0:
        raise ConfigError("diagnose: no scored points")
    if not (np.isfinite(q).all() and np.isfinite(y).all()):
        raise ConfigError("diagnose: quality and signal must be finite numbers")
    if q.min() < 0 or q.max() > 1 or y.min() < -1e-9 or y.max() > 1 + 1e-9:
        raise ConfigError("diagnose: quality and signal must lie in [0, 1]")
    curve = activation_curve(q, y, bins, window)
    xk, yk, sk = (np.asarray(a) for a in (curve.x, curve.y, curve.smoothed))
    notes: list[str] = []
    raw = _spearman(q, y)
    if raw is None:
        notes.append("the signal is constant (or quality is): no ordering to correlate")
    smoothed = _spearman(xk, sk)
    ci = None
    tasks = list(dict.fromkeys(task))
    if raw is not None:
        ci, ci_notes = _spearman_ci(tasks, task, q, y, bootstrap or BootstrapConfig())
        notes += ci_notes
    diag = Diagnostics(
        n_points=len(q),
        n_tasks=len(tasks),
        auc=area(xk, yk),
        steepness=clipped_slope(xk, sk, float(bins)),
        variance=float(np.mean((yk - sk) ** 2)),
        diagonal_deviation=float(np.mean(np.abs(yk - xk))),
        diagonal_bias=float(np.mean(yk - xk)),
        spearman=None if raw is None else raw[0],
        spearman_p=None if raw is None else raw[1],
        spearman_ci=ci,
        spearman_smoothed=None if smoothed is None else smoothed[0],
        monotonicity=monotonicity(task, level, y),
        notes=notes,
    )
    return curve, diag


def _spearman_ci(
    tasks: list[str], task: Sequence[str], q: np.ndarray, y: np.ndarray, config: BootstrapConfig
) -> tuple[tuple[float, float] | None, list[str]]:
    members = [np.flatnonzero(np.asarray(task) == t) for t in tasks]

    def stat(rows: np.ndarray) -> float:
        idx = np.concatenate([members[int(i)] for i in rows])
        found = _spearman(q[idx], y[idx])
        return float("nan") if found is None else found[0]

    low, high, notes = bootstrap_ci(np.arange(len(tasks), dtype=float), stat, config)
    if low is None or high is None:
        return None, notes
    return (low, high), notes
