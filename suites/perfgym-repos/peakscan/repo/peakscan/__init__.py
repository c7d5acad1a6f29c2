"""peakscan: sliding-window extrema, peak finding and level crossings for 1-D signals."""

from peakscan.peaks import find_peaks, prominences
from peakscan.windows import rolling_max, rolling_min, rolling_range
from peakscan.crossings import crossings, count_crossings

__all__ = [
    "count_crossings",
    "crossings",
    "find_peaks",
    "prominences",
    "rolling_max",
    "rolling_min",
    "rolling_range",
]
__version__ = "1.2.0"
