"""Input checks shared by every function: 1-D, finite, a sensible window."""

from __future__ import annotations

import numpy as np


def as_signal(x) -> np.ndarray:  # type: ignore[no-untyped-def]
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"expected a 1-D signal, got shape {arr.shape}")
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"expected a numeric signal, got dtype {arr.dtype}")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValueError("signal holds NaN or infinity")
    return arr


def check_window(window: int, n: int) -> int:
    if not isinstance(window, (int, np.integer)) or isinstance(window, bool):
        raise TypeError("window must be an integer")
    if window < 1:
        raise ValueError("window must be at least 1")
    if window > n:
        raise ValueError(f"window {window} is longer than the signal ({n} samples)")
    return int(window)
