"""Sliding-window extrema: out[i] is the max/min of x[i : i + window] (len(x) - window + 1 values,
the input's dtype)."""

from __future__ import annotations

import numpy as np

from peakscan._validate import as_signal, check_window


def _rolling(x, window: int, pick) -> np.ndarray:  # type: ignore[no-untyped-def]
    arr = as_signal(x)
    w = check_window(window, len(arr))
    out = np.empty(len(arr) - w + 1, dtype=arr.dtype)
    for i in range(len(out)):
        best = arr[i]
        for j in range(i + 1, i + w):
            if pick(arr[j], best):
                best = arr[j]
        out[i] = best
    return out


def rolling_max(x, window: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    return _rolling(x, window, lambda a, b: a > b)


def rolling_min(x, window: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    return _rolling(x, window, lambda a, b: a < b)


def rolling_range(x, window: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    return rolling_max(x, window) - rolling_min(x, window)
