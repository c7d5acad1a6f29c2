"""Peaks and rolling ranges of a 12000-sample float random walk."""

import numpy as np

from peakscan import find_peaks, rolling_range


def setup():
    rng = np.random.default_rng(7)
    return np.cumsum(rng.normal(size=12_000))


def experiment(x):
    peaks = find_peaks(x, half_width=8, min_prominence=1.5)
    spread = rolling_range(x, 16)
    return peaks.tolist(), float(spread.max()), int(np.argmax(spread)), spread.tolist()
