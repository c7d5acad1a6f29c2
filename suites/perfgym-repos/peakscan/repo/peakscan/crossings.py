"""Level crossings: where a signal passes a level upwards or downwards."""

from __future__ import annotations

import numpy as np

from peakscan._validate import as_signal


def crossings(x, level: float = 0.0, direction: str = "both") -> np.ndarray:  # type: ignore[no-untyped-def]
    """Indices i where x[i-1] < level <= x[i] (up) or x[i-1] >= level > x[i] (down)."""
    if direction not in ("up", "down", "both"):
        raise ValueError("direction must be 'up', 'down' or 'both'")
    arr = as_signal(x)
    below = arr < level
    up = np.flatnonzero(below[:-1] & ~below[1:]) + 1
    down = np.flatnonzero(~below[:-1] & below[1:]) + 1
    if direction == "up":
        return up
    if direction == "down":
        return down
    return np.sort(np.concatenate([up, down]))


def count_crossings(x, level: float = 0.0) -> int:  # type: ignore[no-untyped-def]
    return int(len(crossings(x, level)))
