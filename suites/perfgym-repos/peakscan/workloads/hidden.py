"""Hidden: an int32 signal with plateaus, narrow and wide windows, crossings."""

import numpy as np

from peakscan import count_crossings, find_peaks, prominences, rolling_max


def setup():
    rng = np.random.default_rng(11)
    steps = rng.integers(-3, 4, size=4_000)
    return np.repeat(np.cumsum(steps).astype(np.int32), 2)


def experiment(x):
    narrow = find_peaks(x, half_width=2)
    wide = find_peaks(x, half_width=25)
    prom = prominences(x, wide, 25)
    top = rolling_max(x, 40)
    # Every result whole: a workload that reads part of one pays a lazy result for the
    # part it skips (red team helper-98: windows computed only when read, 1.64x on [::97]).
    return narrow.tolist(), wide.tolist(), prom.tolist(), top.tolist(), count_crossings(x, 0)
