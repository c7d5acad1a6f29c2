"""Calibration: the affine map from stored durations to the present machine (DMC-Optim §C.7,
fresh ≈ slope · stored + intercept), fitted on re-measured references, with its fit quality;
one map per epoch when stored durations come from several campaigns or machines (§C.8).

The fit is robust in relative terms, so a 20 ms and a 2 s workload count alike and a reference
hit by a burst while being re-measured cannot pull the line: it starts from Theil–Sen (median
of pairwise slopes) and iterates weighted least squares on relative residuals with Tukey
bisquare weights (a point further than ~4.7 robust standard deviations gets weight 0 and is
counted as an outlier). Quality: R² of the fit on the points kept, leave-one-group-out R²
(group = task, so a task never predicts itself), and the relative residuals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import ConfigError
from perfgym.tasks.task import StoredMeasurement


class AffineMap(BaseModel):
    """fresh ≈ slope · stored + intercept_s, and how well that held on the references."""

    model_config = ConfigDict(extra="forbid")

    slope: float
    intercept_s: float
    r2: float = Field(description="R² of fresh on the mapped stored durations (all points).")
    cv_r2: float | None = Field(
        None, description="Leave-one-group-out R² (None with fewer than 3 groups)."
    )
    median_rel_residual: float = Field(description="Median |fresh - mapped| / fresh.")
    max_rel_residual: float
    n: int = Field(description="Points fitted (after dropping outliers).")
    outliers: int = Field(0, description="Points dropped as outliers before the final fit.")
    groups: int = 0
    clock: str = ""
    from_machine: str = Field("", description="Fingerprint the stored durations came from.")
    to_machine: str = Field("", description="Fingerprint of the machine re-measured on.")

    def __call__(self, stored_s: float) -> float:
        return self.slope * stored_s + self.intercept_s

    def as_tuple(self) -> tuple[float, float]:
        """(slope, intercept): the form the rewards' `calibrate=` parameter takes."""
        return self.slope, self.intercept_s


def _wls(s: np.ndarray, f: np.ndarray, w: np.ndarray | None = None) -> tuple[float, float]:
    r = (1.0 / f) * (np.sqrt(w) if w is not None else 1.0)  # rows scaled: weights w/f²
    design = np.stack([s * r, r], axis=1)
    (a, b), *_ = np.linalg.lstsq(design, f * r, rcond=None)
    return float(a), float(b)


#: Tukey's bisquare constant (95 % efficiency on normal residuals).
_BISQUARE = 4.685
#: Floor of the residual scale: relative noise below 1 % is not told apart from exact.
_MIN_SCALE = 0.01


def _theil_sen(s: np.ndarray, f: np.ndarray) -> tuple[float, float]:
    i, j = np.triu_indices(len(s), k=1)
    ds = s[j] - s[i]
    ok = ds != 0
    a = float(np.median((f[j] - f[i])[ok] / ds[ok]))
    return a, float(np.median(f - a * s))


def _robust(s: np.ndarray, f: np.ndarray, k: float) -> tuple[float, float, np.ndarray]:
    """Bisquare IRLS on relative residuals from a Theil–Sen start; (slope, intercept, weights)."""
    a, b = _theil_sen(s, f)
    w = np.ones_like(s)
    for _ in range(50):
        rel = (f - (a * s + b)) / f
        scale = max(1.4826 * float(np.median(np.abs(rel - np.median(rel)))), _MIN_SCALE)
        u = rel / (k * scale)
        w = np.where(np.abs(u) < 1, (1 - u**2) ** 2, 0.0)
        if (w > 0).sum() < 3 or np.ptp(s[w > 0]) == 0:
            break  # too few points left to fit a line: keep the last fit
        a2, b2 = _wls(s, f, w)
        done = abs(a2 - a) <= 1e-9 * abs(a) + 1e-12 and abs(b2 - b) <= 1e-9 * abs(b) + 1e-12
        a, b = a2, b2
        if done:
            break
    return a, b, w


def _r2(f: np.ndarray, pred: np.ndarray) -> float:
    ss = float(((f - f.mean()) ** 2).sum())
    return 1.0 - float(((f - pred) ** 2).sum()) / ss if ss > 0 else 0.0


def fit_affine(
    stored: Sequence[float],
    fresh: Sequence[float],
    *,
    groups: Sequence[str] | None = None,
    clock: str = "",
    from_machine: str = "",
    to_machine: str = "",
    outlier_k: float = _BISQUARE,
) -> AffineMap:
    """Fit fresh ≈ slope · stored + intercept on paired durations of the same programs
    (robustly; `outlier_k` is the bisquare cut-off in robust standard deviations)."""
    s = np.asarray(stored, dtype=float)
    f = np.asarray(fresh, dtype=float)
    if s.shape != f.shape or s.ndim != 1 or len(s) < 3:
        raise ConfigError(f"fit_affine: needs >= 3 paired durations, got {len(s)} and {len(f)}")
    if not (np.isfinite(s).all() and np.isfinite(f).all()) or (s <= 0).any() or (f <= 0).any():
        raise ConfigError("fit_affine: durations must be finite and > 0")
    if np.ptp(s) == 0:
        raise ConfigError("fit_affine: every stored duration is equal; nothing to fit a slope to")
    g = np.asarray(groups if groups is not None else [str(i) for i in range(len(s))])
    if len(g) != len(s):
        raise ConfigError("fit_affine: groups must name every point")
    a, b, w = _robust(s, f, outlier_k)
    keep = w > 0
    s, f, g = s[keep], f[keep], g[keep]
    pred = a * s + b
    rel = np.abs(f - pred) / f
    return AffineMap(slope=a, intercept_s=b, r2=_r2(f, pred), cv_r2=_cv_r2(s, f, g, outlier_k),
                     median_rel_residual=float(np.median(rel)), max_rel_residual=float(rel.max()),
                     n=len(s), outliers=int((~keep).sum()), groups=len(set(g.tolist())),
                     clock=clock, from_machine=from_machine, to_machine=to_machine)  # fmt: skip


def _cv_r2(s: np.ndarray, f: np.ndarray, g: np.ndarray, k: float) -> float | None:
    names = sorted(set(g.tolist()))
    if len(names) < 3:
        return None
    pred = np.empty_like(f)
    for name in names:
        held = g == name
        if (~held).sum() < 3 or np.ptp(s[~held]) == 0:
            return None
        a, b, _w = _robust(s[~held], f[~held], k)
        pred[held] = a * s[held] + b
    return _r2(f, pred)


def paired_durations(
    stored: Mapping[str, Mapping[str, float]], fresh: Mapping[str, Mapping[str, float]]
) -> tuple[list[float], list[float], list[str]]:
    """(stored, fresh, group) for every (program, workload) present in both maps.

    Keys are program ids whose part before the first '/' names its group (the task)."""
    xs, ys, gs = [], [], []
    for key in sorted(set(stored) & set(fresh)):
        for w in sorted(set(stored[key]) & set(fresh[key])):
            xs.append(float(stored[key][w]))
            ys.append(float(fresh[key][w]))
            gs.append(key.split("/", 1)[0])
    return xs, ys, gs


def calibrate_stored(m: StoredMeasurement, amap: AffineMap) -> StoredMeasurement:
    """A stored measurement's durations mapped to the present machine (memory untouched)."""
    return m.model_copy(
        update={
            "median_s": None if m.median_s is None else amap(m.median_s),
            "samples_s": [amap(x) for x in m.samples_s],
            "per_workload_s": {w: amap(x) for w, x in m.per_workload_s.items()},
            "source": f"{m.source} (calibrated: {amap.slope:.4g}·t + {amap.intercept_s:.4g})",
        }
    )


class EpochMaps(BaseModel):
    """One affine map per epoch: stored durations measured in different campaigns or on
    different machines each follow their own map to the present machine (DMC-Optim §C.8: the
    intercept moved from 53 to 38 ms between campaigns), so a pool that mixes epochs is mapped
    member by member, each with its own epoch's fit."""

    model_config = ConfigDict(extra="forbid")

    maps: dict[str, AffineMap] = Field(description="Epoch (campaign or fingerprint) -> its map.")

    def __call__(self, epoch: str, stored_s: float) -> float:
        if epoch not in self.maps:
            # No silent identity: a duration from an uncalibrated epoch is not comparable.
            raise ConfigError(f"no calibration for epoch {epoch!r} (have: {sorted(self.maps)})")
        return self.maps[epoch](stored_s)

    def calibrate(self, m: StoredMeasurement, epoch: str | None = None) -> StoredMeasurement:
        """`calibrate_stored` with the map of `epoch` (default: the measurement's machine)."""
        key = m.machine if epoch is None else epoch
        if key not in self.maps:
            raise ConfigError(f"no calibration for epoch {key!r} (have: {sorted(self.maps)})")
        return calibrate_stored(m, self.maps[key])


def fit_epochs(
    stored: Mapping[str, Mapping[str, Mapping[str, float]]],
    fresh: Mapping[str, Mapping[str, float]],
    *,
    clock: str = "",
    to_machine: str = "",
) -> EpochMaps:
    """Fit one map per epoch: `stored[epoch]` holds the references' durations as that epoch
    measured them ('task/label' -> workload -> seconds), `fresh` the same references now."""
    maps = {}
    for epoch, durations in stored.items():
        xs, ys, gs = paired_durations(durations, fresh)
        maps[epoch] = fit_affine(xs, ys, groups=gs, clock=clock, from_machine=epoch,
                                 to_machine=to_machine)  # fmt: skip
    return EpochMaps(maps=maps)
