import numpy as np
import pytest

from peakscan import count_crossings, crossings, find_peaks, prominences, rolling_max, rolling_min, rolling_range


def test_rolling_max_min_values_and_length():
    x = np.array([1, 3, 2, 5, 4, 0])
    assert rolling_max(x, 3).tolist() == [3, 5, 5, 5]
    assert rolling_min(x, 3).tolist() == [1, 2, 2, 0]
    assert rolling_range(x, 2).tolist() == [2, 1, 3, 1, 4]


def test_window_one_is_identity_and_full_window_is_one_value():
    x = np.array([4.5, -1.0, 2.0])
    assert rolling_max(x, 1).tolist() == x.tolist()
    assert rolling_max(x, 3).tolist() == [4.5]


def test_dtype_preserved():
    assert rolling_max(np.array([1, 2, 3], dtype=np.int16), 2).dtype == np.int16
    assert rolling_min(np.array([1.0, 2.0], dtype=np.float32), 2).dtype == np.float32
    assert rolling_max(np.array([250, 3, 7], dtype=np.uint8), 2).tolist() == [250, 7]


def test_lists_accepted():
    assert rolling_max([1, 2, 3], 2).tolist() == [2, 3]


def test_bad_windows():
    with pytest.raises(ValueError):
        rolling_max(np.arange(3), 0)
    with pytest.raises(ValueError):
        rolling_max(np.arange(3), 4)
    with pytest.raises(TypeError):
        rolling_max(np.arange(3), 1.5)


def test_nan_and_shape_rejected():
    with pytest.raises(ValueError, match="NaN"):
        rolling_max(np.array([1.0, np.nan, 2.0]), 2)
    with pytest.raises(ValueError):
        rolling_max(np.ones((2, 2)), 1)
    with pytest.raises(TypeError):
        rolling_max(np.array(["a", "b"]), 1)


def test_peaks_basic_and_edges_excluded():
    x = np.array([5, 1, 3, 1, 4, 2, 6])
    assert find_peaks(x).tolist() == [2, 4]


def test_plateau_reports_first_sample_only():
    x = np.array([0, 2, 2, 2, 0, 1, 0])
    assert find_peaks(x).tolist() == [1, 5]


def test_half_width_and_short_signals():
    x = np.array([0, 1, 5, 1, 0, 2, 0, 1, 0, 6, 0, 0])
    assert find_peaks(x, half_width=2).tolist() == [2, 5, 9]
    assert find_peaks(x, half_width=1).tolist() == [2, 5, 7, 9]
    assert find_peaks(np.array([1, 2]), half_width=1).tolist() == []
    with pytest.raises(ValueError):
        find_peaks(x, half_width=0)


def test_prominence_filter():
    x = np.array([0, 10, 0, 1, 0.5, 1.2, 0])
    peaks = find_peaks(x)
    assert peaks.tolist() == [1, 3, 5]
    assert prominences(x, peaks).tolist() == [10.0, 0.5, 0.7]
    assert find_peaks(x, min_prominence=0.6).tolist() == [1, 5]


def test_crossings():
    x = np.array([-1, 1, 2, -2, 0, 3])
    assert crossings(x, direction="up").tolist() == [1, 4]
    assert crossings(x, direction="down").tolist() == [3]
    assert count_crossings(x) == 3
    with pytest.raises(ValueError):
        crossings(x, direction="sideways")
