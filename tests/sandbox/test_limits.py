"""Limits validation: zero, negative, absurd and unknown values are rejected clearly."""

import pytest
from pydantic import ValidationError

from perfgym.sandbox import Limits


@pytest.mark.parametrize(
    "kwargs",
    [
        {"wall_s": 0},
        {"wall_s": -1},
        {"wall_s": 10**9},
        {"memory_mb": 0},
        {"memory_mb": 2},
        {"max_processes": 0},
        {"stdout_bytes": -5},
        {"disk_bytes": 1 << 50},
        {"open_files": 4},
        {"cpu_s": 0},
        {"wall_sec": 3},
    ],
)
def test_invalid_limits_are_rejected(kwargs):
    with pytest.raises(ValidationError) as info:
        Limits(**kwargs)
    assert list(kwargs)[0] in str(info.value) or "open_files" in str(info.value)


def test_cpu_defaults_to_wall():
    assert Limits(wall_s=3).effective_cpu_s == 3
    assert Limits(wall_s=3, cpu_s=1).effective_cpu_s == 1
