"""Calibration: the affine map from stored durations to the present machine (DMC-Optim §C.7,
fresh ≈ slope · stored + intercept), fitted on re-measured references, with its fit quality.

The fit minimises relative residuals (weights 1/fresh²), so a 20 ms and a 2 s workload count
alike, then refits once without points whose residual is far outside the rest (a reference
hit by a burst while being re-measured). Quality: R² of the fit, leave-one-group-out R²
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


def _wls(s: np.ndarray, f: np.ndarray) -> tuple[float, float]:
    w = 1.0 / f  # sqrt of the weights 1/f²: rows scaled by 1/f
    design = np.stack([s * w, w], axis=1)
    (a, b), *_ = np.linalg.lstsq(design, f * w, rcond=None)
    return float(a), float(b)


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
    outlier_k: float = 4.0,
) -> AffineMap:
    """Fit fresh ≈ slope · stored + intercept on paired durations of the same programs."""
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
    a, b = _wls(s, f)
    rel = (f - (a * s + b)) / f
    mad = float(np.median(np.abs(rel - np.median(rel))))
    keep = np.abs(rel - np.median(rel)) <= max(outlier_k * 1.4826 * mad, 0.05)
    if keep.sum() >= 3 and not keep.all() and np.ptp(s[keep]) > 0:
        s, f, g = s[keep], f[keep], g[keep]
        a, b = _wls(s, f)
    pred = a * s + b
    rel = np.abs(f - pred) / f
    return AffineMap(slope=a, intercept_s=b, r2=_r2(f, pred), cv_r2=_cv_r2(s, f, g),
                     median_rel_residual=float(np.median(rel)), max_rel_residual=float(rel.max()),
                     n=len(s), outliers=int((~keep).sum()), groups=len(set(g.tolist())),
                     clock=clock, from_machine=from_machine, to_machine=to_machine)  # fmt: skip


def _cv_r2(s: np.ndarray, f: np.ndarray, g: np.ndarray) -> float | None:
    names = sorted(set(g.tolist()))
    if len(names) < 3:
        return None
    pred = np.empty_like(f)
    for name in names:
        held = g == name
        if np.ptp(s[~held]) == 0:
            return None
        a, b = _wls(s[~held], f[~held])
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
