"""Judge fixtures: one real Judge per session; sum_programs.py importable by the tests."""

import os
import sys

import pytest

from perfgym.judge import Judge, JudgeConfig

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="session")
def judge():
    with Judge(JudgeConfig(repeats=1, measure_baseline=False, measure_reference=False)) as j:
        yield j
