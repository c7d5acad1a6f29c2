"""Peaks: samples that are the maximum of the window centred on them (the first sample of a
plateau), with a minimum height above the lower of the two surrounding minima."""

from __future__ import annotations

import numpy as np

from peakscan._validate import as_signal
from peakscan.windows import rolling_max, rolling_min


def find_peaks(x, half_width: int = 1, min_prominence: float = 0.0) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Indices i (ascending) with x[i] == max(x[i-h : i+h+1]), x[i] > x[i-1] (the plateau's
    first sample), not on the edges, and prominence >= min_prominence."""
    arr = as_signal(x)
    h = int(half_width)
    if h < 1:
        raise ValueError("half_width must be at least 1")
    if min_prominence < 0:
        raise ValueError("min_prominence must be non-negative")
    if len(arr) < 2 * h + 1:
        return np.empty(0, dtype=np.intp)
    centred = rolling_max(arr, 2 * h + 1)
    peaks = []
    for i in range(h, len(arr) - h):
        if arr[i] == centred[i - h] and arr[i] > arr[i - 1]:
            peaks.append(i)
    found = np.asarray(peaks, dtype=np.intp)
    if min_prominence > 0 and len(found):
        prom = prominences(arr, found, h)
        found = found[prom >= min_prominence]
    return found


def prominences(x, peaks, half_width: int = 1) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Height of each peak above the higher of the minima of the windows left and right of it."""
    arr = as_signal(x)
    h = int(half_width)
    lows = rolling_min(arr, h + 1)
    out = np.empty(len(peaks), dtype=np.float64)
    for k, i in enumerate(peaks):
        left = lows[i - h]
        right = lows[i]
        out[k] = float(arr[i]) - float(max(left, right))
    return out
